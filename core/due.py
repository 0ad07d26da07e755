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
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.clock import venue_day, wall_to_instant
from core.manifest.model import Moment, RowTime, Shift, Timed
from core.moments import MomentContext, MomentValueError, Tables, apply_shift, resolve_moment
from core.set_aside import RecordKey, SetAside
from core.store import Store

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
class _Stream:
    """One column of a rule's moment: its SQL bound, and the earliest moment past a value."""

    rule: Rule
    column: str
    bound: datetime | date
    inclusive: bool
    floor: Callable[[Any], datetime | None]


def _parts(moment: Moment) -> list[Moment]:
    """The moment and each fallback, in the order they are read."""
    found = [moment]
    for fallback in moment.or_ or ():
        found.extend(_parts(fallback))
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


def _stream(rule: Rule, part: Moment, tables: Tables, now: datetime) -> _Stream | None:
    """The stream of one part of a rule's moment; None when that part can never answer."""
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
        return _Stream(rule, part.column, venue_day(base, zone), True, floor_date)
    if part.time is None:

        def floor_instant(value: Any) -> datetime | None:
            return _shifted(value, part, 1, tables, store)

        return _Stream(rule, part.column, base, True, floor_instant)

    def floor_day(value: Any) -> datetime | None:
        return _shifted(day_start(venue_day(value, zone)), part, 1, tables, store)

    # A time of day on an instant's venue day is at or after that day's midnight: the
    # instant itself is before the midnight that ends the base's day.
    bound = day_start(venue_day(base, zone) + timedelta(days=1))
    return _Stream(rule, part.column, bound, False, floor_day)


def _wanted_columns(rule: Rule) -> list[str]:
    """The row's columns the rule's moment reads, the key and state first."""
    names = [rule.key_column, rule.state_column]
    for part in _parts(rule.timed.at):
        names.append(part.column)
        if isinstance(part.time, RowTime):
            names.append(part.time.column)
    return list(dict.fromkeys(names))


def _page(conn: Connection, stream: _Stream, after: tuple[Any, Any] | None, size: int) -> list[Any]:
    """The next page of a stream's candidate rows, in (column, key) order."""
    rule = stream.rule
    table = rule.store.table(rule.table)
    column, key = table.c[stream.column], table.c[rule.key_column]
    query = sa.select(*(table.c[name] for name in _wanted_columns(rule))).where(
        table.c[rule.state_column] == rule.timed.from_,
        column <= stream.bound if stream.inclusive else column < stream.bound,
    )
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

    def judge(self, rule: Rule, row: dict[str, Any]) -> None:
        """Read a candidate's moment exactly; keep it as due, or as passed by."""
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
        for part in _parts(rule.timed.at)
        if (stream := _stream(rule, part, tables[store.app.name], now)) is not None
    ]
    more = _read_streams(conn, streams, finder, page=max(limit, 50))
    ordered = sorted(finder.due.values(), key=_order)
    return DueRows(
        tuple(ordered[:limit]),
        tuple(sorted(finder.passed_by.values(), key=_order)),
        more or len(ordered) > limit,
    )


def _read_streams(conn: Connection, streams: Iterable[_Stream], finder: _Finder, page: int) -> bool:
    """Read each stream as far as it may hold a row due before the limit's cutoff."""
    open_streams: dict[int, tuple[_Stream, tuple[Any, Any] | None]] = {
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
