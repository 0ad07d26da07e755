"""A screen's writes: form values read as the columns' types, then a person's write."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from core.actors import Actor
from core.errors import ValueRefused, echo
from core.manifest.model import Column
from core.store import Store
from core.writes import WriteResult
from services.writes import write_by_person
from web.context import clock, publisher


def form_value(column: Column, raw: str, store: Store) -> Any:
    """A form's text as the column's value; an empty field is null. Local times: venue clock."""
    text = raw.strip()
    if text == "":
        return None
    try:
        if column.type == "timestamptz":
            local = datetime.fromisoformat(text)
            if local.utcoffset() is None:
                local = local.replace(tzinfo=store.zone)
            return local
        if column.type == "date":
            return datetime.fromisoformat(text).date()
        if column.type in ("integer", "serial"):
            return int(text)
        if column.type == "numeric":
            return Decimal(text)
        if column.type == "boolean":
            return text.lower() in ("1", "true", "yes", "on")
    except (ValueError, InvalidOperation):
        raise ValueRefused(
            f"{column.ref!r} does not read {echo(text)!r} as {column.type}",
            {"column": column.ref, "reason": "type"},
        ) from None
    return text


def edit(store: Store, table: str, key: Any, actor: Actor, column: str, raw: str) -> WriteResult:
    """Change one field of a row as a person; its events go out after the commit."""
    spec = store.spec(table)
    found = next((c for c in spec.columns if c.ref == column), None)
    if found is None:
        raise ValueRefused(
            f"no column {echo(column)!r}", {"column": echo(column), "reason": "unknown"}
        )
    return _write(store, table, key, actor, values={column: form_value(found, raw, store)})


def move(
    store: Store, table: str, key: Any, actor: Actor, to: str, seen: str | None
) -> WriteResult:
    """Move a row as a person, naming the state they saw; its events go out after the commit."""
    return _write(store, table, key, actor, move_to=to, seen_state=seen or None)


def _write(store: Store, table: str, key: Any, actor: Actor, **change: Any) -> WriteResult:
    """A person's write from a screen, on the web's clock and publisher."""
    return write_by_person(
        store, table, key, actor=actor, clock=clock, publisher=publisher(), **change
    )
