"""The record of what Adminium made in a connection's database (`adminium.made`): the tables
it made for an app, and the columns, CHECKs and indexes it made on them.

A migration (`app add --replace --migrate`) alters only what is recorded here; a table not
recorded is the venue's own, and Adminium never alters it unasked (DESIGN decision 10).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import Connection

from core.store.schema import made


class MadeKind(Enum):
    """What of a table Adminium made."""

    table = "table"
    column = "column"
    constraint = "constraint"
    index = "index"


@dataclass(frozen=True)
class MadeItem:
    """One thing Adminium made: a table (`name` ""), or a column, constraint or index of it."""

    schema: str
    table: str
    kind: MadeKind
    name: str = ""


@dataclass(frozen=True)
class Made:
    """What Adminium made in one schema of a connection's database."""

    items: frozenset[MadeItem]

    def table(self, schema: str, table: str) -> bool:
        """Whether Adminium made this table."""
        return MadeItem(schema, table, MadeKind.table) in self.items

    def has(self, schema: str, table: str, kind: MadeKind, name: str) -> bool:
        """Whether Adminium made this column, constraint or index (on a table it made)."""
        return self.table(schema, table) and MadeItem(schema, table, kind, name) in self.items


NOTHING = Made(frozenset())
"""A database where Adminium made nothing (or its record is not there yet)."""


def read_made(conn: Connection, schemas: Iterable[str]) -> Made:
    """What Adminium made in these schemas; nothing when its record is not there yet, or
    the connection's user may not read it (then nothing is taken for Adminium's)."""
    wanted = sorted(set(schemas))
    there = conn.execute(sa.text("SELECT to_regclass('adminium.made') IS NOT NULL")).scalar()
    if not there or not wanted:
        return NOTHING
    query = sa.select(made.c.schema_name, made.c.table_name, made.c.kind, made.c.name).where(
        made.c.schema_name.in_(wanted)
    )
    try:
        with conn.begin_nested():
            rows = conn.execute(query).all()
    except sa.exc.ProgrammingError:
        return NOTHING
    return Made(frozenset(MadeItem(s, t, MadeKind(kind), n) for s, t, kind, n in rows))


def record_made(conn: Connection, app: str, items: Iterable[MadeItem]) -> None:
    """Record what Adminium made for `app`, in the caller's transaction (idempotent)."""
    rows = [
        {
            "schema_name": item.schema,
            "table_name": item.table,
            "kind": item.kind.value,
            "name": item.name,
            "app": app,
        }
        for item in dict.fromkeys(items)
    ]
    if rows:
        conn.execute(insert(made).values(rows).on_conflict_do_nothing())


def forget_made(conn: Connection, items: Iterable[MadeItem]) -> None:
    """Forget what a migration took away (a column dropped, a CHECK replaced by name)."""
    for item in items:
        conn.execute(
            sa.delete(made).where(
                made.c.schema_name == item.schema,
                made.c.table_name == item.table,
                made.c.kind == item.kind.value,
                made.c.name == item.name,
            )
        )
