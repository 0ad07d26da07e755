"""Ours, beside Alembic's comparison: the values a state or enum column must take (every
state the manifest moves into, every enum value) against what the database lets it hold
(its varchar length, its enum type's labels, each CHECK of that column alone), and the rows
holding a value the manifest does not list."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.agreement.catalogue import Check, ColumnFacts
from core.manifest.model import Table

SHOWN_KEYS = 5
"""How many keys a sentence names of the rows it counts."""


@dataclass(frozen=True)
class Valued:
    """A column that takes a listed set of values: a state column, an enum column."""

    table: str
    column: str
    values: tuple[str, ...]
    moves: bool
    """A state column (the manifest moves into its values) rather than an enum's list."""

    @property
    def says(self) -> str:
        """How the sentence says the manifest wants a value."""
        return "moves into" if self.moves else "lists"


def valued_columns(name: str, table: Table, states: Sequence[str]) -> list[Valued]:
    """The columns of `table` that take listed values, with those values."""
    found: list[Valued] = []
    state = table.states.column if table.states is not None else None
    for column in table.columns:
        if column.type == "enum":
            values = tuple(column.values or states)
            found.append(Valued(name, column.ref, values, column.ref == state))
        elif column.ref == state:
            found.append(Valued(name, column.ref, tuple(states), True))
    if state is not None and state not in {c.ref for c in table.columns}:
        found.append(Valued(name, state, tuple(states), True))
    return found


def quoted(values: Sequence[str]) -> str:
    """`'held'`, `'held' and 'waiting'`, `'a', 'b' and 'c'`."""
    words = [f"'{value}'" for value in values]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def too_long(valued: Valued, facts: ColumnFacts) -> list[str]:
    """The values longer than the column keeps (a varchar(n) or char(n))."""
    if facts.length is None:
        return []
    return [value for value in valued.values if len(value) > facts.length]


def not_labelled(valued: Valued, facts: ColumnFacts) -> list[str]:
    """The values the column's enum type has no label for."""
    if facts.enum_type is None:
        return []
    return [value for value in valued.values if value not in facts.labels]


def refused_by(conn: Connection, check: Check, column: str, values: Sequence[str]) -> list[str]:
    """The values a CHECK of this one column refuses, judged by the database on the
    CHECK's own expression (a value it cannot judge is taken as let through)."""
    quote = conn.dialect.identifier_preparer.quote
    query = sa.text(
        "SELECT u.v FROM unnest(CAST(:values AS text[])) AS u(v) WHERE NOT COALESCE("
        f"(SELECT {check.expression} FROM (SELECT u.v AS {quote(column)}) AS t), true)"
    )
    try:
        with conn.begin_nested():
            return [str(v) for (v,) in conn.execute(query, {"values": list(values)})]
    except sa.exc.DBAPIError:
        return []


@dataclass(frozen=True)
class RowCount:
    """Rows of a table: how many, and the first keys."""

    count: int
    keys: tuple[str, ...]

    def rows(self) -> str:
        """`1 row`, `9 rows`."""
        return "1 row" if self.count == 1 else f"{self.count} rows"

    def hold(self, what: str) -> str:
        """`1 row holds …`, `9 rows hold …`."""
        return f"1 row holds {what}" if self.count == 1 else f"{self.count} rows hold {what}"

    def keys_words(self) -> str:
        """`keys 4, 7, 9`, or `keys 1, 2, 3, 4, 5, …` when there are more."""
        more = ", …" if self.count > len(self.keys) else ""
        return f"keys {', '.join(self.keys)}{more}" if self.keys else "no key to name"


@dataclass(frozen=True)
class Holding:
    """The rows holding one value."""

    value: str
    held: RowCount

    def words(self) -> str:
        """`3 rows hold 'refunded' (keys 4, 7, 9)`."""
        return f"{self.held.hold(repr_value(self.value))} ({self.held.keys_words()})"

    def holding_words(self) -> str:
        """`3 rows holding 'refunded' (keys 4, 7, 9)`."""
        value = repr_value(self.value)
        return f"{self.held.rows()} holding {value} ({self.held.keys_words()})"


def repr_value(value: str) -> str:
    """A value as a sentence quotes it."""
    return f"'{value}'"


def holding(
    conn: Connection, schema: str, table: str, column: str, key: str | None, listed: Sequence[str]
) -> list[Holding]:
    """The values rows of the table hold that are not `listed`, most held first, each with
    the first keys holding it (none when the connection's user may not read them)."""
    target = sa.table(table, sa.column(column), schema=schema)
    value = sa.cast(target.c[column], sa.Text)
    query = (
        sa.select(value, sa.func.count())
        .where(target.c[column].is_not(None), value.not_in(list(listed)))
        .group_by(value)
        .order_by(sa.func.count().desc(), value)
    )
    try:
        with conn.begin_nested():
            rows = conn.execute(query).all()
            return [
                Holding(str(v), RowCount(int(n), _keys(conn, schema, table, key, _is(column, v))))
                for v, n in rows
            ]
    except sa.exc.DBAPIError:
        return []


def _is(column: str, value: str) -> sa.ColumnElement[bool]:
    """The column, as text, holds the value (a condition of no table: any query's own)."""
    return sa.cast(sa.column(column), sa.Text) == value


def counted_rows(
    conn: Connection,
    schema: str,
    table: str,
    key: str | None,
    where: sa.ColumnElement[bool] | None,
) -> RowCount | None:
    """The rows where a condition holds (every row without one): how many and the first
    keys; None when there is none (or they cannot be read)."""
    query = sa.select(sa.func.count()).select_from(sa.table(table, schema=schema))
    if where is not None:
        query = query.where(where)
    try:
        with conn.begin_nested():
            count = int(conn.execute(query).scalar_one())
            keys = _keys(conn, schema, table, key, where) if count else ()
    except sa.exc.DBAPIError:
        return None
    return RowCount(count, keys) if count else None


def _keys(
    conn: Connection,
    schema: str,
    table: str,
    key: str | None,
    where: sa.ColumnElement[bool] | None,
) -> tuple[str, ...]:
    """The first keys (in their order) of the rows where a condition holds."""
    if key is None:
        return ()
    column: sa.ColumnClause[Any] = sa.column(key)
    query = sa.select(sa.cast(column, sa.Text)).select_from(sa.table(table, schema=schema))
    if where is not None:
        query = query.where(where)
    query = query.order_by(column).limit(SHOWN_KEYS)
    return tuple(str(k) for (k,) in conn.execute(query))


def renamed_values(
    renames: Mapping[tuple[str, str, str], str], table: str, column: str
) -> dict[str, str]:
    """The value renames asked for this column: old -> new."""
    return {old: new for (t, c, old), new in renames.items() if (t, c) == (table, column)}
