"""Whether the database's columns can be read as the manifest types them: a column whose
declared type its manifest type cannot read (a `timestamp without time zone` typed
`timestamptz`, whose rows would never move; a `uuid` typed `text`, which no key compares
with) or would round in silence (a `numeric(10,2)` given no `scale`), named with its fix.

Read through SQLAlchemy's inspector, before an app is saved on a database it did not
make; a table or column the database lacks is the comparison's to name, not this.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Dialect

from core.manifest.model import App, Column


@dataclass(frozen=True)
class Unreadable:
    """A column the manifest cannot read as the database declares it: where it is in the
    manifest, and the sentence with the fix."""

    where: str
    sentence: str


def declared_type(found: sa.types.TypeEngine[Any], dialect: Dialect) -> str:
    """A column's type as PostgreSQL names it (`timestamp without time zone`, `numeric(10,2)`)."""
    if isinstance(found, sa.DateTime):
        return f"timestamp {'with' if found.timezone else 'without'} time zone"
    if isinstance(found, sa.Numeric) and not isinstance(found, sa.Float | sa.Integer):
        if found.precision is None:
            return "numeric"
        return f"numeric({found.precision},{found.scale or 0})"
    if isinstance(found, sa.Uuid):
        return "uuid"
    return str(found.compile(dialect=dialect)).lower()


def unreadable_columns(conn: Connection, app: App, zone_name: str) -> list[Unreadable]:
    """The app's columns whose type in the database their manifest type cannot read (or
    would round), each with its fix; tables and columns the database lacks are passed by."""
    inspector = sa.inspect(conn)
    found: list[Unreadable] = []
    for name, table in app.tables.items():
        if not inspector.has_table(name, schema=app.schema_name):
            continue
        declared = {c["name"]: c["type"] for c in inspector.get_columns(name, app.schema_name)}
        for index, column in enumerate(table.columns):
            kind = declared.get(column.ref)
            if kind is None:
                continue
            sentence = _sentence(name, column, kind, zone_name, conn.dialect)
            if sentence is not None:
                spot = f"tables.{name}.columns[{index}]"
                found.append(Unreadable(spot, sentence))
    return found


def _sentence(
    table: str, column: Column, found: sa.types.TypeEngine[Any], zone_name: str, dialect: Dialect
) -> str | None:
    """What is wrong with reading `found` as the manifest's column, with the fix; None when
    the manifest's type reads it."""
    held = f'"{table}.{column.ref}" is {declared_type(found, dialect)} in the database'
    if isinstance(found, sa.DateTime):
        if column.type == "timestamptz" and not found.timezone:
            return (
                f"{held}: it keeps a wall time with no zone, which a timestamptz cannot read"
                ' (its rows would never move); write "type": "timestamp", "zone": "venue" to'
                f" read it on the connection's clock ({zone_name}), or make the column"
                " timestamp with time zone"
            )
        if column.type == "timestamp" and found.timezone:
            return f'{held}: it keeps an instant; write "type": "timestamptz"'
        return None
    if isinstance(found, sa.Uuid) != (column.type == "uuid"):
        fits = "uuid" if isinstance(found, sa.Uuid) else _manifest_type(found)
        if fits is None:
            return f"{held}: a manifest's uuid reads a column the database declares uuid"
        return f'{held}, which a {column.type} column cannot read: write "type": "{fits}"'
    if column.type == "numeric" and isinstance(found, sa.Numeric):
        scale = found.scale if found.precision is not None else None
        if scale is not None and (column.scale is None or column.scale > scale):
            return (
                f"{held}, which rounds a value to {scale} decimals: write"
                f' "precision": {found.precision}, "scale": {scale}, so a value with more'
                " decimals is refused rather than rounded"
            )
    return None


def _manifest_type(found: sa.types.TypeEngine[Any]) -> str | None:
    """The manifest type that reads a column declared `found` (of those a uuid is confused with)."""
    if isinstance(found, sa.String):
        return "text"
    if isinstance(found, sa.Integer):
        return "integer"
    return None
