"""Totals: a number column that sums (or counts) linked rows (WHAT-A-MOVE-SETS-OFF.md "Totals").

A write touches a parent's total when it makes a linked row, removes one (sample removal),
or changes a column the total reads (its `via`, its `sum`, its `where` column: a timed
move's state and an effect's included). Each parent touched is recomputed from its linked
rows, never incremented, once per write: at the end of the outermost write, so an effect
that moves fifty lines of one order writes the order's total once. The parents are locked
FOR UPDATE NOWAIT in a fixed order (table name, then key); one held elsewhere is a
WriteConflict. A total is written by a rule, as a stamp is: it passes the table's lock and
a writer's value for it is refused (`core.rules.columns`). A real parent's total never counts
sample rows, so sample data never changes a real row.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.basics.errors import WriteConflict
from core.basics.events import RowEvent
from core.manifest.lookup import total_columns
from core.manifest.model import App, Table, TotalRule
from core.store.schema import sample_marks
from core.store.store import Store

Row = Mapping[str, Any]
Parent = tuple[str, Any]
"""A row holding totals: its table and key."""

LOCK_NOT_AVAILABLE = "55P03"


@dataclass(frozen=True)
class TotalReader:
    """A total that reads rows of some table: the parent table, its column, its rule."""

    parent: str
    column: str
    rule: TotalRule

    @property
    def reads(self) -> frozenset[str]:
        """The columns of a linked row this total reads."""
        found = {self.rule.via}
        if self.rule.sum is not None:
            found.add(self.rule.sum)
        if self.rule.where is not None:
            found.add(self.rule.where.column)
        return frozenset(found)


@dataclass
class Touched:
    """The parents one write (its effects included) touched, to recompute once at its end."""

    parents: set[Parent] = field(default_factory=set)


@dataclass(frozen=True)
class TotalsWritten:
    """What recomputing wrote: each parent's new totals, and one event per parent."""

    values: Mapping[Parent, Mapping[str, Any]] = field(default_factory=dict)
    events: tuple[RowEvent, ...] = ()


def new_totals(spec: Table) -> dict[str, int]:
    """A new row's totals: 0, as no linked row can point at a row not yet made."""
    return {column: 0 for column in total_columns(spec)}


def total_readers(app: App, table: str) -> list[TotalReader]:
    """The totals of the app that read rows of `table`."""
    return [
        TotalReader(name, column.ref, column.rules.total)
        for name, spec in app.tables.items()
        for column in spec.columns
        if column.rules is not None
        and column.rules.total is not None
        and column.rules.total.table == table
    ]


def touch_totals(
    store: Store, table: str, held: Row | None, row: Row | None, touched: Touched
) -> None:
    """Step 5: note the parents whose totals this write of one row changes (made: `held`
    None; removed: `row` None; else when it changes a column a total reads)."""
    for reader in total_readers(store.app, table):
        via = reader.rule.via
        if held is None or row is None:
            keys = [(row if row is not None else held or {}).get(via)]
        elif any(held.get(c) != row.get(c) for c in reader.reads):
            keys = [held.get(via), row.get(via)]
        else:
            continue
        touched.parents.update((reader.parent, key) for key in keys if key is not None)


def write_totals(
    conn: Connection, store: Store, parents: Iterable[Parent], *, actor: str
) -> TotalsWritten:
    """Recompute the totals of these parents from their linked rows, each parent locked
    FOR UPDATE NOWAIT in the fixed order (table name, then key); a parent gone is skipped."""
    by_table: dict[str, list[Any]] = {}
    for table, key in parents:
        by_table.setdefault(table, []).append(key)
    values: dict[Parent, dict[str, Any]] = {}
    events: list[RowEvent] = []
    for table in sorted(by_table):
        keys = sorted(set(by_table[table]))
        spec = store.spec(table)
        sums = _sums(store, spec)
        statement = _recompute(store.table(table), spec.key, _state(spec), sums)
        try:
            written = conn.execute(statement, {"keys": keys, "app": store.app.name})
        except sa.exc.OperationalError as error:
            if getattr(error.orig, "sqlstate", None) != LOCK_NOT_AVAILABLE:
                raise
            raise WriteConflict(
                "another writer holds a row whose total this write changes; try again",
                {"table": table, "key": keys[0] if len(keys) == 1 else keys, "reason": "total"},
            ) from error
        state = _state(spec)
        for found in written.mappings():
            key = found[spec.key]
            values[(table, key)] = {total.column: found[total.column] for total in sums}
            event_state = found[state] if state is not None else None
            events.append(
                RowEvent(store.connection, store.app.name, table, key, event_state, actor)
            )
    return TotalsWritten(values, tuple(events))


def _state(spec: Table) -> str | None:
    return spec.states.column if spec.states is not None else None


@dataclass(frozen=True)
class _Sum:
    """A total as the statement reads it (hashable, so statements are built once)."""

    column: str
    linked: sa.Table
    via: str
    sum: str | None
    where: str | None
    values: tuple[Any, ...]


def _sums(store: Store, spec: Table) -> tuple[_Sum, ...]:
    """The table's totals as the statement reads them."""
    found = []
    for column in spec.columns:
        rule = column.rules.total if column.rules is not None else None
        if rule is None:
            continue
        where = rule.where
        found.append(
            _Sum(
                column.ref,
                store.table(rule.table),
                rule.via,
                None if rule.count else rule.sum,
                where.column if where is not None else None,
                tuple(where.values) if where is not None else (),
            )
        )
    return tuple(found)


@functools.lru_cache(maxsize=128)
def _recompute(
    parent: sa.Table, key_column: str, state: str | None, sums: tuple[_Sum, ...]
) -> sa.Update:
    """One statement for one parent table, built once: lock the parents NOWAIT in key order,
    then set each total from its linked rows."""
    key = parent.c[key_column]
    locked = (
        sa.select(key.label("k"))
        .where(key.in_(sa.bindparam("keys", expanding=True)))
        .order_by(key)
        .with_for_update(nowait=True)
        .cte("locked")
        .prefix_with("MATERIALIZED")
    )
    values = {total.column: _aggregate(parent, key, total) for total in sums}
    returned = [key, *(parent.c[total.column] for total in sums)]
    if state is not None:
        returned.append(parent.c[state])
    return sa.update(parent).where(key == locked.c.k).values(values).returning(*returned)


def _aggregate(parent: sa.Table, key: sa.Column[Any], total: _Sum) -> sa.ScalarSelect[Any]:
    """The sum (or count) of the linked rows; sample rows only for a sample parent."""
    linked = total.linked
    value = (
        sa.func.count()
        if total.sum is None
        else sa.func.coalesce(sa.func.sum(linked.c[total.sum]), 0)
    )
    query = sa.select(value).where(linked.c[total.via] == key)
    if total.where is not None:
        query = query.where(linked.c[total.where].in_(total.values))
    linked_key = next(iter(linked.primary_key.columns))
    return query.where(sa.or_(~_marked(linked, linked_key), _marked(parent, key))).scalar_subquery()


def _marked(table: sa.Table, key: sa.ColumnElement[Any]) -> sa.Exists:
    """Whether a row of `table` is sample data (its mark, by app, table and key as text)."""
    return sa.exists().where(
        sample_marks.c.app == sa.bindparam("app"),
        sample_marks.c.table_name == table.name,
        sample_marks.c.row_key == sa.cast(key, sa.Text),
    )
