"""Which rows a timed move is due for: candidates in SQL first, then each judged exactly.

Per timed rule and per column its moment reads (its own and each `or`), one *stream*:
rows still in `from` whose column is bounded by `now` and the rule's largest possible
offset, in column order, served by the (state column, moment column) index. A stream
is read in pages only as far as it can still hold a row due before the ones already
found, so the cost grows with the rows near due, not with the table. Each candidate's
moment is then read exactly with the moment engine, on the venue's clock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.ledgers.entries import PostingRecord, PostingStatus, due_holds, posting_of
from core.ledgers.holds import held_until, holding_tables, is_held
from core.manifest.model import Hold, Moment, RowTime, Shift, Timed
from core.store.schema import postings
from core.store.set_aside import RecordKey, SetAside
from core.store.store import Row, Store
from core.time.clock import venue_day, wall_to_instant
from core.time.moments import MomentContext, MomentValueError, Tables, apply_shift, resolve_moment

log = logging.getLogger(__name__)

DAY_SHIFT_SLACK = timedelta(hours=3)
"""A shift of calendar days is days x 24 hours give or take the clock changes it crosses."""


@dataclass(frozen=True)
class Rule:
    """A timed rule of one app's table, numbered from 1 as the manifest lists them."""

    store: Store
    table: str
    number: int
    timed: Timed
    key_column: str
    state_column: str

    @property
    def app(self) -> str:
        """The app's name."""
        return self.store.app.name


@dataclass(frozen=True)
class Due:
    """A row whose timed move is due: its rule, key, moment, and its set-aside record if any."""

    rule: Rule
    key: Any
    moment: datetime
    record: SetAside | None = None

    @property
    def record_key(self) -> RecordKey:
        """How its set-aside record is keyed."""
        return (self.rule.app, self.rule.table, str(self.key), self.rule.number)


@dataclass(frozen=True)
class DueRows:
    """The due rows, longest-due first, up to the limit; those passed by; whether more wait."""

    due: tuple[Due, ...]
    passed_by: tuple[Due, ...]
    more: bool


def timed_rules(store: Store) -> list[Rule]:
    """Every timed rule of an app, with its number from 1 within its table."""
    rules: list[Rule] = []
    for name, table in store.app.tables.items():
        if table.states is None:
            continue
        for number, timed in enumerate(table.states.timed or (), start=1):
            rules.append(Rule(store, name, number, timed, table.key, table.states.column))
    return rules


# --- streams --------------------------------------------------------------------


@dataclass(frozen=True)
class Stream:
    """One column of a rule's (or a hold's) moment, for rows in one state: its SQL bound,
    and the earliest moment past a value."""

    rule: Rule | HoldSource
    column: str
    bound: datetime | date
    inclusive: bool
    floor: Callable[[Any], datetime | None]
    state: str = ""


def moment_parts(moment: Moment) -> list[Moment]:
    """The moment and each fallback, in the order they are read."""
    found = [moment]
    for fallback in moment.or_ or ():
        found.extend(moment_parts(fallback))
    return found


def _shifted(
    instant: datetime, moment: Moment, sign: int, tables: Tables, store: Store
) -> datetime | None:
    """An instant moved by the moment's own shift (sign 1) or back by it (sign -1), with slack."""
    shift: Shift | None = moment.plus or moment.minus
    if shift is None:
        return instant
    direction = sign if moment.plus is not None else -sign
    moved = apply_shift(instant, shift, direction, tables, store.zone)
    if moved is None or shift.days is None:
        return moved
    # Toward `now` the bound reaches further; the floor of a moment stays below it.
    return moved + DAY_SHIFT_SLACK if sign < 0 else moved - DAY_SHIFT_SLACK


def stream_of(
    rule: Rule | HoldSource, part: Moment, tables: Tables, now: datetime, state: str = ""
) -> Stream | None:
    """The stream of one part of a rule's (or a hold's) moment, over the rows in `state`
    (a rule's `from` when not given); None when that part can never answer."""
    state = state or (rule.timed.from_ if isinstance(rule, Rule) else "")
    if part.via is not None or (part.plus is not None and part.minus is not None):
        return None
    store = rule.store
    column = next(c for c in store.spec(rule.table).columns if c.ref == part.column)
    # The moment before its shift is at most `base`.
    base = _shifted(now, part, -1, tables, store)
    if base is None:
        return None  # its shift reads a setting with no whole number: it never answers
    zone = store.zone

    def day_start(day: date) -> datetime:
        return wall_to_instant(day, time(0), zone)

    if column.type == "date":
        if part.time is None:
            return None

        def floor_date(value: Any) -> datetime | None:
            return _shifted(day_start(value), part, 1, tables, store)

        # A time of day on a date is at or after that day's midnight.
        return Stream(rule, part.column, venue_day(base, zone), True, floor_date, state)
    if part.time is None:

        def floor_instant(value: Any) -> datetime | None:
            return _shifted(value, part, 1, tables, store)

        return Stream(rule, part.column, base, True, floor_instant, state)

    def floor_day(value: Any) -> datetime | None:
        return _shifted(day_start(venue_day(value, zone)), part, 1, tables, store)

    # A time of day on an instant's venue day is at or after that day's midnight: the
    # instant itself is before the midnight that ends the base's day.
    bound = day_start(venue_day(base, zone) + timedelta(days=1))
    return Stream(rule, part.column, bound, False, floor_day, state)


def _wanted_columns(rule: Rule | HoldSource) -> list[str]:
    """The row's columns the rule's (or hold's) moment reads, the key and state first."""
    names = [rule.key_column, rule.state_column]
    for part in moment_parts(rule.timed.at if isinstance(rule, Rule) else rule.hold.until):
        names.append(part.column)
        if isinstance(part.time, RowTime):
            names.append(part.time.column)
    return list(dict.fromkeys(names))


def _page(conn: Connection, stream: Stream, after: tuple[Any, Any] | None, size: int) -> list[Any]:
    """The next page of a stream's candidate rows, in (column, key) order."""
    rule = stream.rule
    table = rule.store.table(rule.table)
    column, key = table.c[stream.column], table.c[rule.key_column]
    query = sa.select(*(table.c[name] for name in _wanted_columns(rule))).where(
        table.c[rule.state_column] == stream.state,
        column <= stream.bound if stream.inclusive else column < stream.bound,
    )
    if isinstance(rule, HoldSource):
        query = query.where(rule.paid(table))
    if after is not None:
        # `column >= last` is what the index serves; the key breaks ties.
        query = query.where(column >= after[0], sa.or_(column > after[0], key > after[1]))
    query = query.order_by(column, key).limit(size)
    return list(conn.execute(query).mappings())


# --- judging --------------------------------------------------------------------


@dataclass
class _Finder:
    """The state of one search for due rows across every rule of a connection."""

    now: datetime
    limit: int
    records: dict[RecordKey, SetAside]
    tables: dict[str, Tables]
    due: dict[tuple[int, Any], Due]
    passed_by: dict[tuple[int, Any], Due]

    def judge(self, rule: Rule | HoldSource, row: dict[str, Any]) -> None:
        """Read a candidate's moment exactly; keep it as due, or as passed by."""
        assert isinstance(rule, Rule)
        seen = (id(rule), row[rule.key_column])
        if seen in self.due or seen in self.passed_by:
            return
        ctx = MomentContext(row=row, zone=rule.store.zone, tables=self.tables[rule.app])
        try:
            reading = resolve_moment(rule.timed.at, ctx)
        except MomentValueError as error:
            log.warning(
                "timed move skipped: %s.%s key=%s rule=%s: %s",
                rule.app,
                rule.table,
                row[rule.key_column],
                rule.number,
                error,
            )
            return
        if reading is None or reading.at > self.now:
            return
        found = Due(rule, row[rule.key_column], reading.at)
        record = self.records.get(found.record_key)
        if record is not None:
            found = Due(rule, found.key, found.moment, record)
            # Passed by while its hour runs, unless re-dated since it was set aside.
            if record.holds(reading.at, self.now):
                self.passed_by[seen] = found
                return
        self.due[seen] = found

    def cutoff(self) -> datetime | None:
        """The moment of the last row that fits under the limit, once the limit is reached."""
        if len(self.due) < self.limit:
            return None
        return sorted(d.moment for d in self.due.values())[self.limit - 1]


def find_due(
    conn: Connection,
    stores: Sequence[Store],
    *,
    now: datetime,
    limit: int,
    records: dict[RecordKey, SetAside] | None = None,
    tables: Mapping[str, Tables] | None = None,
) -> DueRows:
    """The rows due at `now` across every timed rule of the stores, longest-due first."""
    if now.utcoffset() is None:
        raise ValueError("now must carry its offset")
    if tables is None:
        tables = {s.app.name: s.read_clock_tables(conn) for s in stores}
    finder = _Finder(now, limit, dict(records or {}), dict(tables), {}, {})
    streams = [
        stream
        for store in stores
        for rule in timed_rules(store)
        for part in moment_parts(rule.timed.at)
        if (stream := stream_of(rule, part, tables[store.app.name], now)) is not None
    ]
    more = read_streams(conn, streams, finder, page=max(limit, 50))
    ordered = sorted(finder.due.values(), key=_order)
    return DueRows(
        tuple(ordered[:limit]),
        tuple(sorted(finder.passed_by.values(), key=_order)),
        more or len(ordered) > limit,
    )


def read_streams(
    conn: Connection, streams: Iterable[Stream], finder: _Finder | _HoldFinder, page: int
) -> bool:
    """Read each stream as far as it may hold a row due before the limit's cutoff."""
    open_streams: dict[int, tuple[Stream, tuple[Any, Any] | None]] = {
        i: (s, None) for i, s in enumerate(streams)
    }
    more = False
    while open_streams:
        for index, (stream, after) in list(open_streams.items()):
            rows = _page(conn, stream, after, page)
            for row in rows:
                finder.judge(stream.rule, dict(row))
            if len(rows) < page:
                del open_streams[index]
                continue
            last = rows[-1]
            open_streams[index] = (stream, (last[stream.column], last[stream.rule.key_column]))
        for index, (stream, after) in list(open_streams.items()):
            # No unread row of this stream can be due before `floor`: stop when that is past
            # `now`, or past the last row that fits under the limit.
            assert after is not None
            floor = stream.floor(after[0])
            cutoff = finder.cutoff()
            if floor is None or floor > finder.now or (cutoff is not None and floor > cutoff):
                more = more or (floor is not None and floor <= finder.now)
                del open_streams[index]
    return more


def _order(due: Due) -> tuple[Any, ...]:
    """Longest-due first; ties in a stable order."""
    return (due.moment, due.rule.app, due.rule.table, due.rule.number, str(due.key))


# --- holds ----------------------------------------------------------------------
#
# A hold ends at its row's heldUntil, read on the row as it is now: a row re-dated by any
# writer (the venue's own software too) ends its hold at its new moment. Due holds are
# found as due timed moves are: per held state and per column the moment reads, rows in
# that state still paid (a posting's amount above 0: a hold given back sets it to 0)
# whose column is bounded by `now`, then each moment read exactly. The posting records'
# stored heldUntil is only a hint: it finds the holds whose row is gone or no longer
# reads as held, and those whose row was re-dated later (their record is put right).


@dataclass(frozen=True)
class HoldSource:
    """A table of one app whose postings are holds the clock gives back."""

    store: Store
    table: str
    hold: Hold
    key_column: str
    state_column: str
    paid_by: tuple[tuple[str, str], ...]
    """Each posting's (amount column, account column), once each."""

    @property
    def app(self) -> str:
        """The app's name."""
        return self.store.app.name

    def paid(self, table: sa.Table) -> Any:
        """Rows with something to give back: a posting's amount above 0, from an account."""
        # A literal 0, as the partial index `core.store.install.hold_indexes` is written with.
        return sa.or_(
            *(
                sa.and_(table.c[amount] > sa.literal_column("0"), table.c[via].is_not(None))
                for amount, via in self.paid_by
            )
        )


def hold_sources(store: Store) -> list[HoldSource]:
    """The app's tables whose postings are holds, with what their search reads."""
    found: list[HoldSource] = []
    for name in holding_tables(store.app):
        spec = store.spec(name)
        assert spec.hold is not None and spec.states is not None and spec.postings
        paid_by = tuple(dict.fromkeys((posting.amount, posting.via) for posting in spec.postings))
        found.append(HoldSource(store, name, spec.hold, spec.key, spec.states.column, paid_by))
    return found


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
