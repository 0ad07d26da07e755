"""The indexed reads of a moment column, shared by the due search (`core.sweep.due`), the holds'
search (`core.sweep.due_holds`), the next-due hint and the preview.

Per timed rule (or table of holds) and per column its moment reads (its own and each `or`),
one *stream*: rows still in the state whose column is bounded by `now` and the rule's largest
possible offset, in column order, served by the (state column, moment column) index. A
stream is read in pages only as far as it can still hold a row due before the ones already
found, so the cost grows with the rows near due, not with the table."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.ledgers.holds import holding_tables
from core.manifest.model import Column, Hold, Moment, RowTime, Shift, Timed
from core.store.store import Store
from core.time.clock import venue_day, wall_to_instant
from core.time.moments import Tables, apply_shift

DAY_SHIFT_SLACK = timedelta(hours=3)
"""A shift of calendar days is days x 24 hours give or take the clock changes it crosses."""
WALL_SLACK = timedelta(hours=3)
"""A `timestamp` column keeps wall time, compared in SQL as the venue's wall time: around a
change of the clocks a later wall time may read earlier (a skipped 01:30 reads after 02:00,
a repeated 01:30 before 01:10 of the second pass), by at most the change (an hour; two in
the few zones that jump two). A stream over such a column reaches this much further and
floors this much lower."""


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


def timed_rules(store: Store) -> list[Rule]:
    """Every timed rule of an app, with its number from 1 within its table."""
    rules: list[Rule] = []
    for name, table in store.app.tables.items():
        if table.states is None:
            continue
        for number, timed in enumerate(table.states.timed or (), start=1):
            rules.append(Rule(store, name, number, timed, table.key, table.states.column))
    return rules


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
    slack: timedelta = timedelta()
    """How much further `bound` reaches than the moments it stands for (`WALL_SLACK`)."""

    @property
    def hint_bound(self) -> datetime | date:
        """What the next-due hint reads past: the bound less its slack on either side (a value
        past it falls due after `now`, or may)."""
        return self.bound - 2 * self.slack if self.slack else self.bound


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

        return _on_wall_clock(Stream(rule, part.column, base, True, floor_instant, state), column)

    def floor_day(value: Any) -> datetime | None:
        return _shifted(day_start(venue_day(value, zone)), part, 1, tables, store)

    # A time of day on an instant's venue day is at or after that day's midnight: the
    # instant itself is before the midnight that ends the base's day.
    bound = day_start(venue_day(base, zone) + timedelta(days=1))
    return _on_wall_clock(Stream(rule, part.column, bound, False, floor_day, state), column)


def _on_wall_clock(stream: Stream, column: Column) -> Stream:
    """A stream over a `timestamp` column (wall time, `WALL_SLACK`) reaching further and
    flooring lower; any other as it is."""
    if column.type != "timestamp":
        return stream
    floor = stream.floor

    def lower(value: Any) -> datetime | None:
        found = floor(value)
        return None if found is None else found - WALL_SLACK

    assert isinstance(stream.bound, datetime)
    return replace(stream, bound=stream.bound + WALL_SLACK, floor=lower, slack=WALL_SLACK)


def _wanted_columns(rule: Rule | HoldSource) -> list[str]:
    """The row's columns the rule's (or hold's) moment reads, the key and state first."""
    names = [rule.key_column, rule.state_column]
    for part in moment_parts(rule.timed.at if isinstance(rule, Rule) else rule.hold.until):
        names.append(part.column)
        if isinstance(part.time, RowTime):
            names.append(part.time.column)
    return list(dict.fromkeys(names))


@dataclass
class Beside:
    """Scalar reads sent out with a search's first page, in the same statement (one round
    trip less): their columns, and once read, their values in the same order."""

    columns: tuple[Any, ...]
    values: tuple[Any, ...] | None = None


def _page(
    conn: Connection,
    stream: Stream,
    after: tuple[Any, Any] | None,
    size: int,
    beside: Beside | None = None,
) -> list[dict[str, Any]]:
    """The next page of a stream's candidate rows, in (column, key) order; `beside`'s
    columns read in the same statement (their values kept on it)."""
    rule = stream.rule
    table = rule.store.table(rule.table)
    column, key = table.c[stream.column], table.c[rule.key_column]
    names = _wanted_columns(rule)
    query = sa.select(*(table.c[name] for name in names)).where(
        table.c[rule.state_column] == stream.state,
        column <= stream.bound if stream.inclusive else column < stream.bound,
    )
    if isinstance(rule, HoldSource):
        query = query.where(rule.paid(table))
    if after is not None:
        # `column >= last` is what the index serves; the key breaks ties.
        query = query.where(column >= after[0], sa.or_(column > after[0], key > after[1]))
    query = query.order_by(column, key).limit(size)
    if beside is None:
        return [dict(row) for row in conn.execute(query).mappings()]
    # One row of the scalar reads, and the page beside it (no row of its own: NULLs).
    reads = sa.select(*(c.label(f"beside_{i}") for i, c in enumerate(beside.columns)))
    first, page = reads.subquery("beside"), query.subquery("page")
    joined = (
        sa.select(first, page)
        .select_from(first.outerjoin(page, sa.true()))
        .order_by(page.c[stream.column], page.c[rule.key_column])
    )
    count, at_key = len(beside.columns), names.index(rule.key_column)
    found = conn.execute(joined).all()
    beside.values = tuple(found[0][:count])
    return [
        dict(zip(names, row[count:], strict=True))
        for row in found
        if row[count + at_key] is not None
    ]


class Judge(Protocol):
    """What reads the candidates a stream yields: the due search, the holds' search, the
    preview's collectors."""

    @property
    def now(self) -> datetime:
        """The instant the search is for."""
        ...

    def judge(self, rule: Rule | HoldSource, row: dict[str, Any]) -> None:
        """Read one candidate row exactly."""
        ...

    def cutoff(self) -> datetime | None:
        """The moment past which no row is wanted (the limit reached), if any."""
        ...


def read_streams(
    conn: Connection,
    streams: Iterable[Stream],
    finder: Judge,
    page: int,
    beside: Beside | None = None,
) -> bool:
    """Read each stream as far as it may hold a row due before the limit's cutoff; with
    `beside`, its columns are read in the first page's statement (none when no stream)."""
    open_streams: dict[int, tuple[Stream, tuple[Any, Any] | None]] = {
        i: (s, None) for i, s in enumerate(streams)
    }
    more = False
    while open_streams:
        for index, (stream, after) in list(open_streams.items()):
            rows = _page(conn, stream, after, page, beside)
            beside = None  # read once
            for row in rows:
                finder.judge(stream.rule, row)
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
