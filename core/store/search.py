"""The search the board and the API's row list share: rows whose key or any text or enum
column holds the words, case-insensitive."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from core.manifest.model import Table

SEARCHED = ("text", "enum")
"""The column types a search reads (and the key, whatever its type)."""


def search_clause(table: sa.Table, spec: Table, q: str) -> sa.ColumnElement[bool]:
    """Rows whose key or any text or enum column holds `q` (case-insensitive; `%`, `_` and
    `\\` are matched as themselves)."""
    escaped = q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    pattern = f"%{escaped}%"
    columns: list[sa.ColumnElement[Any]] = [table.c[spec.key]]
    columns += [table.c[c.ref] for c in spec.columns if c.type in SEARCHED]
    return sa.or_(*(sa.cast(c, sa.Text).ilike(pattern) for c in columns))
