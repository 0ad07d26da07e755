"""Which holds are due to be given back by the clock.

A hold ends at its row's heldUntil, read on the row as it is now: a row re-dated by any
writer (the venue's own software too) ends its hold at its new moment. Due holds are found
as due timed moves are: per held state and per column the moment reads, rows in that state
still paid (a posting's amount above 0: a hold given back sets it to 0) whose column is
bounded by `now`, then each moment read exactly. The posting records' stored heldUntil is
only a hint: it finds the holds whose row is gone or no longer reads as held, and those
whose row was re-dated later (their record is put right).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.ledgers.entries import PostingRecord, PostingStatus, due_holds, posting_of
from core.ledgers.holds import held_until, is_held
from core.store.schema import postings
from core.store.set_aside import RecordKey, SetAside
from core.store.store import Row, Store
from core.sweep.due_streams import (
    HoldSource,
    Rule,
    hold_sources,
    moment_parts,
    read_streams,
    stream_of,
)
from core.time.moments import MomentValueError, Tables


@dataclass(frozen=True)
class DueHold:
    """A hold due to be given back: its app's store, its posting record, the moment it
    ended (its row's heldUntil; the record's own when the row is gone or no longer held),
    and its set-aside record if any."""

    store: Store
    record: PostingRecord
    moment: datetime
    aside: SetAside | None = None

    @property
    def record_key(self) -> RecordKey:
        """How its give-back's set-aside record is keyed (rule: minus the posting number)."""
        return (self.store.app.name, self.record.table, self.record.key, -self.record.posting)


@dataclass(frozen=True)
class DueHolds:
    """The due holds, longest-due first, up to the limit; those passed by (their give-back
    set aside while its hour runs); whether more wait; and the records whose row was
    re-dated past `now` with the moment it reads now (`redated`, for the sweep to put
    right)."""

    due: tuple[DueHold, ...]
    passed_by: tuple[DueHold, ...]
    more: bool
    redated: tuple[tuple[Store, PostingRecord, datetime | None], ...] = ()


@dataclass
class _HoldFinder:
    """The state of one search for due holds across the stores: the rows found due."""

    now: datetime
    limit: int
    tables: dict[str, Tables]
    due: dict[tuple[int, Any], tuple[HoldSource, Any, datetime]]

    def judge(self, source: Rule | HoldSource, row: dict[str, Any]) -> None:
        """Read a candidate's heldUntil exactly; keep the row when it has passed."""
        assert isinstance(source, HoldSource)
        seen = (id(source), row[source.key_column])
        if seen in self.due:
            return
        until = _held_until(source, row, self.tables[source.app])
        if until is not None and until <= self.now:
            self.due[seen] = (source, row[source.key_column], until)

    def cutoff(self) -> datetime | None:
        """The moment of the last row that fits under the limit, once the limit is reached."""
        if len(self.due) < self.limit:
            return None
        return sorted(found[2] for found in self.due.values())[self.limit - 1]


def _held_until(source: HoldSource, row: Mapping[str, Any], tables: Tables) -> datetime | None:
    """The row's heldUntil; None when its moment has no value or cannot be read."""
    try:
        return held_until(source.hold, row, source.store.zone, tables)
    except MomentValueError:
        return None


def find_due_holds(
    conn: Connection,
    stores: Sequence[Store],
    *,
    now: datetime,
    limit: int,
    records: Mapping[RecordKey, SetAside] | None = None,
    tables: Mapping[str, Tables] | None = None,
) -> DueHolds:
    """The holds due at `now` across the stores, longest-due first, at most `limit` (those
    whose give-back is set aside and whose hour runs are passed by, beside)."""
    if now.utcoffset() is None:
        raise ValueError("now must carry its offset")
    sources = [source for store in stores for source in hold_sources(store)]
    if not sources:
        return DueHolds((), (), False)
    if tables is None:
        tables = {s.app.name: s.read_clock_tables(conn) for s in stores}
    records = records or {}
    # Set-aside give-backs are read past the limit too, so they never keep due ones out.
    wanted = limit + sum(1 for key in records if key[3] < 0)
    finder = _HoldFinder(now, wanted, dict(tables), {})
    streams = [
        stream
        for source in sources
        for state in source.hold.states
        for part in moment_parts(source.hold.until)
        if (stream := stream_of(source, part, tables[source.app], now, state)) is not None
    ]
    more = read_streams(conn, streams, finder, page=max(wanted, 50))
    found: dict[tuple[str, str, str, int], DueHold] = {}
    by_table: dict[tuple[int, str], dict[str, datetime]] = {}
    for source, key, until in finder.due.values():
        by_table.setdefault((id(source.store), source.table), {})[str(key)] = until
    stores_by_id = {id(store): store for store in stores}
    for (store_id, table), moments in by_table.items():
        store = stores_by_id[store_id]
        for record in _held_records(conn, store.app.name, table, list(moments)):
            found[(store.app.name, table, record.key, record.posting)] = DueHold(
                store, record, moments[record.key]
            )
    redated = _hinted(conn, stores, sources, now, wanted, found, tables)
    ordered = sorted(found.values(), key=_hold_order)
    due: list[DueHold] = []
    passed: list[DueHold] = []
    for hold in ordered:
        aside = records.get(hold.record_key)
        if aside is not None:
            hold = DueHold(hold.store, hold.record, hold.moment, aside)
            if aside.holds(hold.moment, now):
                passed.append(hold)
                continue
        due.append(hold)
    return DueHolds(tuple(due[:limit]), tuple(passed), more or len(due) > limit, redated)


def merge_holds(parts: Sequence[DueHolds], limit: int) -> DueHolds:
    """Searches of some apps' holds each as the one search of them all (`merge_due`'s rule)."""
    ordered = sorted((hold for part in parts for hold in part.due), key=_hold_order)
    passed = sorted((hold for part in parts for hold in part.passed_by), key=_hold_order)
    more = any(part.more for part in parts) or len(ordered) > limit
    redated = tuple(found for part in parts for found in part.redated)
    return DueHolds(tuple(ordered[:limit]), tuple(passed), more, redated)


def _held_records(conn: Connection, app: str, table: str, keys: list[str]) -> list[PostingRecord]:
    """The held posting records of some rows of a table."""
    query = sa.select(postings).where(
        postings.c.app == app,
        postings.c.table_name == table,
        postings.c.row_key.in_(keys),
        postings.c.status == PostingStatus.held.value,
    )
    return [posting_of(row) for row in conn.execute(query).mappings()]


def _hinted(
    conn: Connection,
    stores: Sequence[Store],
    sources: Sequence[HoldSource],
    now: datetime,
    limit: int,
    found: dict[tuple[str, str, str, int], DueHold],
    tables: Mapping[str, Tables],
) -> tuple[tuple[Store, PostingRecord, datetime | None], ...]:
    """Add to `found` the held records whose stored heldUntil has passed and that the rows'
    search did not find: a row gone, or no longer in a held state, gives back at the
    stored moment; a row that reads as due (past the search's cutoff) at its own. Those
    whose row now reads later are returned with their moment, for the record to be put
    right."""
    redated: list[tuple[Store, PostingRecord, datetime | None]] = []
    by_table = {(source.app, source.table): source for source in sources}
    for store in stores:
        hinted = [
            record
            for record in due_holds(conn, store.app.name, now, limit)
            if (store.app.name, record.table, record.key, record.posting) not in found
        ]
        tables_of: dict[str, list[PostingRecord]] = {}
        for record in hinted:
            tables_of.setdefault(record.table, []).append(record)
        for table, held in tables_of.items():
            source = by_table.get((store.app.name, table))
            rows = _rows(conn, store, table, [r.key for r in held])
            for record in held:
                row = rows.get(record.key)
                moment = record.held_until or now
                if source is not None and row is not None and is_held(store.spec(table), row):
                    until = _held_until(source, row, tables[store.app.name])
                    if until is None or until > now:
                        redated.append((store, record, until))
                        continue
                    moment = until
                key = (store.app.name, record.table, record.key, record.posting)
                found[key] = DueHold(store, record, moment)
    return tuple(redated)


def _rows(conn: Connection, store: Store, table: str, keys: list[str]) -> dict[str, Row]:
    """Some rows of a table by their keys as text."""
    t = store.table(table)
    key = store.spec(table).key
    wanted = [store.coerce_key(table, k) for k in keys]
    query = sa.select(t).where(t.c[key].in_([k for k in wanted if k is not None]))
    return {str(row[key]): dict(row) for row in conn.execute(query).mappings()}


def _hold_order(hold: DueHold) -> tuple[Any, ...]:
    """Longest-due first; ties in a stable order."""
    record = hold.record
    return (hold.moment, hold.store.app.name, record.table, record.key, record.posting)


def as_rows_read(
    conn: Connection, store: Store, records: Sequence[PostingRecord], tables: Tables
) -> list[PostingRecord]:
    """Held records with the heldUntil their row reads now (the kept one is a hint: the
    row may have been re-dated by a writer that left the record as it was); a record
    whose row is gone, or no longer held, keeps its own."""
    by_table: dict[str, list[PostingRecord]] = {}
    for record in records:
        by_table.setdefault(record.table, []).append(record)
    sources = {source.table: source for source in hold_sources(store)}
    read: dict[tuple[str, str, int], PostingRecord] = {}
    for table, held in by_table.items():
        source = sources.get(table)
        rows = _rows(conn, store, table, [r.key for r in held]) if source else {}
        for record in held:
            row = rows.get(record.key)
            if source is not None and row is not None and is_held(store.spec(table), row):
                until = _held_until(source, row, tables)
                record = replace(record, held_until=until)
            read[(record.table, record.key, record.posting)] = record
    return [read[(r.table, r.key, r.posting)] for r in records]
