"""Adding a sample set through the write pipeline, and removing sample data in one transaction."""

from __future__ import annotations

import json
import logging
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.basics.actors import Actor, ActorKind
from core.basics.events import RowEvent
from core.manifest.model import App, Table
from core.rules.columns import owned_columns
from core.samples.files import Context, SampleFile, SampleRefused, resolve_row
from core.samples.transaction import OneTransaction
from core.setoff.totals import Touched, touch_totals, write_totals
from core.store.audit import audit_entry
from core.store.schema import audit, sample_marks, set_aside
from core.store.store import Row, Store
from core.writes.pipeline import change_row, create_row
from core.writes.request import WriteRequest

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SampleRow:
    """A row a sample added: its table, key and state once added."""

    table: str
    key: Any
    state: str | None
    events: tuple[RowEvent, ...] = ()
    place: int = 0
    """The row's place in its table's list in the sample file, from 1."""
    label: str | None = None
    """Its `"@as"` label in the sample file, if any."""


def sample_actor(app: App) -> Actor:
    """`Sample data`, holding the app's roles: a sample may hold any state a person can reach."""
    return Actor(ActorKind.sample, Actor.sample().name, frozenset(app.roles))


def add_sample(store: Store, sample: SampleFile, *, now: datetime) -> list[SampleRow]:
    """Write every row of a sample set as `Sample data`, marking each, times read from
    `now`, in one transaction: a row refused leaves nothing of the sample behind."""
    with store.engine.connect() as conn, conn.begin():
        whole = store.on_engine(OneTransaction(conn))  # type: ignore[arg-type]
        return write_sample(whole, sample, now=now)


def write_sample(store: Store, sample: SampleFile, *, now: datetime) -> list[SampleRow]:
    """Write a sample set's rows through the write pipeline, each write its own transaction
    on `store` (savepoints of the caller's, for `add_sample` and the sample's preview)."""
    app = store.app
    if sample.app != app.name:
        raise SampleRefused(
            f"the sample belongs to app {sample.app!r}, not {app.name!r}", {"app": sample.app}
        )
    actor = sample_actor(app)
    read_tables = setup_tables(store)
    labels: dict[str, Any] = {}
    added: list[SampleRow] = []
    tables: dict[str, list[Row]] | None = None
    with store.engine.connect() as conn:
        # Setup the app already has is kept as it is: a second settings row, or a second
        # row for a weekday, would leave every moment that reads them with no value.
        have_setup = {name for name in read_tables if store.read_rows(conn, name)}
    for table, rows in sample.rows.items():
        if table in have_setup:
            continue
        for place, row in enumerate(rows, 1):
            if tables is None:
                with store.engine.connect() as conn:
                    tables = store.read_clock_tables(conn, read_tables)
            ctx = Context(app=app, now=now, zone=store.zone, tables=tables, labels=labels)
            label, values = resolve_row(table, row, ctx)
            written = replace(_add_row(store, table, values, actor, now), place=place, label=label)
            if table in read_tables:
                _keep_as_setup(store, table, written.key)
            if label is not None:
                labels[label] = written.key
            added.append(written)
            if table in read_tables:
                tables = None
    log.info("sample of app %s added: %s rows", app.name, len(added))
    return added


def setup_tables(store: Store) -> set[str]:
    """The app's setup: its settings table and the tables its moments read (settings,
    opening hours). A sample's rows there are the app's own once added, never sample data:
    removing the sample leaves them, so real rows keep their moments (one rule, used by
    both adding and removing)."""
    settings = {store.app.settings_table} if store.app.settings_table else set()
    return (store.clock_tables() | settings) & set(store.app.tables)


def _keep_as_setup(store: Store, table: str, key: Any) -> None:
    """Take a setup row's sample mark off (the pipeline marks every row a sample writes)."""
    with store.engine.begin() as conn:
        conn.execute(
            sa.delete(sample_marks).where(
                sample_marks.c.app == store.app.name,
                sample_marks.c.table_name == table,
                sample_marks.c.row_key == str(key),
            )
        )


def _add_row(
    store: Store, table: str, values: Mapping[str, Any], actor: Actor, now: datetime
) -> SampleRow:
    """One sample row: created, marked, moved to its state, its stamped values put back."""
    spec = store.spec(table)
    state_column = spec.states.column if spec.states is not None else None
    target = values.get(state_column) if state_column else None
    given = {k: v for k, v in values.items() if k != state_column}
    result = create_row(store, WriteRequest(table, actor, now, values=given))
    key = result.key  # the pipeline marked it as sample data in the same transaction
    row, events = result.row, list(result.events)
    for step in move_path(spec, target) if target is not None else []:
        moved = change_row(store, WriteRequest(table, actor, now, key=key, move_to=step))
        row, events = moved.row, [*events, *moved.events]
    # A move's stamps overwrite what the sample wrote (an offer's `offer_until`): put it back.
    owned = owned_columns(spec)
    restore = {k: v for k, v in given.items() if owned.get(k) in ("stamp", "code") and row[k] != v}
    if restore:
        restored = change_row(store, WriteRequest(table, actor, now, key=key, values=restore))
        row, events = restored.row, [*events, *restored.events]
    state = row.get(state_column) if state_column else None
    return SampleRow(table, key, state, tuple(events))


def move_path(spec: Table, target: str) -> list[str]:
    """The states a new row passes through to reach `target`, by listed moves (no undo)."""
    states = spec.states
    if states is None:
        raise SampleRefused("this table keeps no states", {"state": target})
    paths: dict[str, list[str]] = {states.initial: []}
    queue = deque([states.initial])
    while queue:
        state = queue.popleft()
        if state == target:
            return paths[state]
        for move in states.moves.get(state, []):
            to, undo = (move, False) if isinstance(move, str) else (move.to, move.undo)
            if not undo and to not in paths:
                paths[to] = [*paths[state], to]
                queue.append(to)
    raise SampleRefused(
        f"no listed moves lead from {states.initial!r} to {target!r}", {"state": target}
    )


@dataclass(frozen=True)
class KeptRow:
    """A sample row a removal kept because rows that stay refer to it: its table and key,
    and those rows (`(table, key)`, a few at most), real ones or other kept sample rows."""

    table: str
    key: str
    held_by: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class SampleRemoval:
    """What a removal did: rows deleted per table, and the sample rows it kept."""

    removed: dict[str, int]
    kept: tuple[KeptRow, ...] = ()


HELD_BY_SHOWN = 3
"""How many of the rows that hold a kept sample row back a removal names."""


def remove_sample(store: Store, *, now: datetime) -> SampleRemoval:
    """Delete every sample row of the app, audited, in one transaction. A sample row that a
    row staying behind refers to (a real order for a sample customer) is kept, still
    marked, and named with the rows that hold it back; the rest go."""
    app = store.app
    removed: dict[str, int] = {}
    with store.engine.begin() as conn:
        marks = conn.execute(
            sa.select(sample_marks.c.table_name, sample_marks.c.row_key).where(
                sample_marks.c.app == app.name
            )
        ).all()
        keys: dict[str, set[str]] = {}
        setup = setup_tables(store)
        for table, key in marks:
            if table not in setup:  # setup marked by an older sample stays (its mark goes)
                keys.setdefault(table, set()).add(key)
        kept = _keep_referenced(conn, store, keys)
        # Rows an effect of a sample row moved are among `marks` already: an effect of a
        # sample row moves sample rows only. Totals over removed rows are recomputed once.
        touched = Touched()
        try:
            for table in deletion_order(app):
                if keys.get(table):
                    removed[table] = _remove_rows(conn, store, table, keys[table], now, touched)
        except sa.exc.IntegrityError as error:
            # A reference the manifest does not declare (the venue's own foreign key).
            raise SampleRefused(
                "nothing removed: the database refused to delete a sample row that a row "
                f"outside the app's manifest refers to ({_constraint(error)})",
                {"reason": "foreign-key"},
            ) from None
        write_totals(conn, store, touched.parents, actor=Actor.sample().name)
        held = sa.tuple_(sample_marks.c.table_name, sample_marks.c.row_key)
        still = [(row.table, row.key) for row in kept]
        conn.execute(
            sa.delete(sample_marks).where(
                sample_marks.c.app == app.name, *([held.not_in(still)] if still else [])
            )
        )
    log.info("sample data of app %s removed: %s; kept %s", app.name, removed, len(kept))
    return SampleRemoval(removed, tuple(kept))


def _keep_referenced(conn: Connection, store: Store, keys: dict[str, set[str]]) -> list[KeptRow]:
    """Take out of `keys` every sample row a row that stays refers to by a foreign key of
    the manifest, until none is left: a kept row keeps the sample rows it refers to too."""
    kept: list[KeptRow] = []
    references = [
        (name, column.ref, column.references)
        for name, table in store.app.tables.items()
        for column in table.columns
        if column.references is not None
    ]
    changed = True
    while changed:
        changed = False
        for name, column, target in references:
            if not keys.get(target):
                continue
            table, key = store.table(name), store.spec(name).key
            staying = sa.cast(table.c[key], sa.Text).not_in(sorted(keys.get(name, set())))
            found = conn.execute(
                sa.select(sa.cast(table.c[column], sa.Text), sa.cast(table.c[key], sa.Text))
                .where(sa.cast(table.c[column], sa.Text).in_(sorted(keys[target])), staying)
                .order_by(table.c[key])
            ).all()
            held: dict[str, list[tuple[str, str]]] = {}
            for referred, holder in found:
                held.setdefault(referred, []).append((name, holder))
            for referred, holders in held.items():
                keys[target].discard(referred)
                kept.append(KeptRow(target, referred, tuple(holders[:HELD_BY_SHOWN])))
                changed = True
    return sorted(kept, key=lambda row: (row.table, row.key))


def _constraint(error: sa.exc.IntegrityError) -> str:
    """The constraint the database named, or its first line."""
    name = getattr(getattr(error.orig, "diag", None), "constraint_name", None)
    return str(name) if name else str(error.orig).strip().splitlines()[0]


def _remove_rows(
    conn: Connection, store: Store, table: str, keys: set[str], now: datetime, touched: Touched
) -> int:
    """Delete these rows of one table, their set-aside records, and audit each delete; note
    the totals they counted in."""
    spec = store.spec(table)
    sql_table = store.table(table)
    wanted = [store.coerce_key(table, key) for key in keys]
    gone = conn.execute(
        sa.delete(sql_table).where(sql_table.c[spec.key].in_(wanted)).returning(*sql_table.c)
    ).mappings()
    state_column = spec.states.column if spec.states is not None else None
    entries = []
    for row in gone:
        touch_totals(store, table, dict(row), None, touched)
        entry = audit_entry(
            at=now,
            actor=Actor.sample().name,
            actor_kind=ActorKind.sample.value,
            app=store.app.name,
            table=table,
            move_from=row.get(state_column) if state_column else None,
            move_to=None,
        )
        before = json.loads(json.dumps(dict(row), default=str))
        entries.append({**entry, "row_key": str(row[spec.key]), "before": before})
    if entries:
        conn.execute(sa.insert(audit), entries)
    conn.execute(
        sa.delete(set_aside).where(
            set_aside.c.app == store.app.name,
            set_aside.c.table_name == table,
            set_aside.c.row_key.in_(sorted(keys)),
        )
    )
    return len(entries)


def deletion_order(app: App) -> list[str]:
    """The app's tables, each before the tables its rows refer to."""
    refers = {
        name: {c.references for c in table.columns if c.references and c.references != name}
        for name, table in app.tables.items()
    }
    order: list[str] = []
    while len(order) < len(refers):
        ready = [
            name
            for name in refers
            if name not in order
            and not any(name in refers[other] for other in refers if other not in order)
        ]
        # A cycle of references: take the rest as they come; the database says what is left.
        order.extend(ready or [name for name in refers if name not in order])
    return order


def sample_keys(conn: Connection, app: str) -> dict[str, set[str]]:
    """The keys (as text) of an app's sample rows, by table."""
    found: dict[str, set[str]] = {}
    rows = conn.execute(
        sa.select(sample_marks.c.table_name, sample_marks.c.row_key).where(
            sample_marks.c.app == app
        )
    )
    for table, key in rows:
        found.setdefault(table, set()).add(key)
    return found


def removal_events(connection: str, app: str, keys: Mapping[str, set[str]]) -> list[RowEvent]:
    """One event per removed sample row (published with `"removed": true`), for open screens."""
    actor = Actor.sample().name
    return [
        RowEvent(connection, app, table, key, None, actor)
        for table, found in keys.items()
        for key in sorted(found)
    ]


def marked_keys(store: Store) -> dict[str, set[str]]:
    """The keys of the app's sample rows by table, read before a removal (for its events)."""
    with store.engine.connect() as conn:
        return sample_keys(conn, store.app.name)
