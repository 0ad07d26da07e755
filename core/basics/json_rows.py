"""A row as JSON: the one form the REST and public APIs answer with and webhooks post."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime, time
from decimal import Decimal
from typing import Any


def jsonable(value: Any) -> Any:
    """A column value as JSON: times in ISO 8601 (instants in UTC), numerics as text."""
    if isinstance(value, datetime):
        return (value.astimezone(UTC) if value.utcoffset() is not None else value).isoformat()
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return value


def row_json(row: Mapping[str, Any], columns: set[str] | None = None) -> dict[str, Any]:
    """A row as JSON, optionally only some of its columns."""
    return {k: jsonable(v) for k, v in row.items() if columns is None or k in columns}
