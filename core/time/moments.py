"""Read a moment of a row: column, via, time, plus or minus, or -> an instant, or no value.

A moment reads on the venue's clock (`MomentContext.zone`), never the server's. It has
no value (None) when its column is empty, its linked row is missing, or a setting, a
kept time or an hours edge it needs cannot be read; then its `or` moments are read in
turn. Shapes the manifest check refuses (a date with no time, a shift of zero or several
units, both plus and minus) read as no value here rather than guessing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from core.manifest.model import Moment, RowTime, Shift
from core.manifest.refs import HoursEdge, SettingRef
from core.time.clock import parse_wall_time, shift_instant, venue_day, wall_to_instant
from core.time.hours import hours_edge

Row = Mapping[str, Any]
Tables = Mapping[str, Sequence[Row]]

_UNITS = ("minutes", "hours", "days")


class MomentValueError(ValueError):
    """A moment's column holds something that is neither a date nor an aware date-time:
    `holds` says what ("a date and time with no zone"), `naive` whether it is a date-time
    that lacks only its zone (a `timestamp without time zone` typed `timestamptz`)."""

    def __init__(self, column: str, holds: str, *, naive: bool = False) -> None:
        super().__init__(f"column {column!r} holds {holds}")
        self.column = column
        self.holds = holds
        self.naive = naive


@dataclass(frozen=True)
class MomentContext:
    """What a moment is read on: the row, its linked rows, the settings and hours tables, a zone."""

    row: Row
    zone: ZoneInfo
    linked: Mapping[str, Row | None] = field(default_factory=dict)
    tables: Tables = field(default_factory=dict)


@dataclass(frozen=True)
class Reading:
    """A moment's instant (aware, UTC) and which of it answered: 0 itself, i its or[i-1]."""

    at: datetime
    fallback: int


def resolve_moment(moment: Moment, ctx: MomentContext) -> Reading | None:
    """The moment's instant and which fallback gave it, or None when none answers."""
    at = _read_own(moment, ctx)
    if at is not None:
        return Reading(at, 0)
    for number, fallback in enumerate(moment.or_ or (), start=1):
        reading = resolve_moment(fallback, ctx)
        if reading is not None:
            return Reading(reading.at, number)
    return None


def read_moment(moment: Moment, ctx: MomentContext) -> datetime | None:
    """The moment's instant (aware, UTC), or None when it has no value."""
    reading = resolve_moment(moment, ctx)
    return reading.at if reading is not None else None


def read_setting(ref: SettingRef, tables: Tables) -> Any | None:
    """A column of the one settings row; None when the table is missing or holds != 1 row."""
    rows = tables.get(ref.table)
    if rows is None or len(rows) != 1:
        return None
    return rows[0].get(ref.column)


def apply_shift(
    instant: datetime, shift: Shift, sign: int, tables: Tables, zone: ZoneInfo
) -> datetime | None:
    """Shift an instant: minutes and hours elapsed, days on the wall clock; None if unreadable."""
    units = [(unit, getattr(shift, unit)) for unit in _UNITS if getattr(shift, unit) is not None]
    if len(units) != 1:
        return None
    unit, amount = units[0]
    count = _whole_amount(
        read_setting(amount, tables) if isinstance(amount, SettingRef) else amount
    )
    if count is None:
        return None
    try:
        if unit == "days":
            return shift_instant(instant, zone, days=sign * count)
        return shift_instant(instant, zone, elapsed=timedelta(**{unit: sign * count}))
    except OverflowError:
        # Beyond the calendar's years 1..9999: no instant to name.
        return None


def _whole_amount(value: Any) -> int | None:
    """A shift's amount as a whole number >= 0; None when empty, negative or not whole."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        # A text setting: plain ASCII digits only ("48"); "", "-3", "1.5", "abc" are no shift.
        return int(value) if value.isascii() and value.isdigit() else None
    if isinstance(value, float | Decimal):
        # A numeric column may hand back 48.0 or Decimal("48"): whole, so a whole number.
        value = _integral(value)
    if not isinstance(value, int):
        return None
    return value if value >= 0 else None


def _integral(value: float | Decimal) -> int | None:
    """A float or Decimal holding a whole number, as an int; None otherwise."""
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    return int(value) if value.is_finite() and value == value.to_integral_value() else None


def _read_own(moment: Moment, ctx: MomentContext) -> datetime | None:
    """The moment itself, without its fallbacks."""
    if moment.plus is not None and moment.minus is not None:
        return None
    source = ctx.row if moment.via is None else ctx.linked.get(moment.via)
    if source is None:
        return None
    base = _read_column(moment, source, ctx)
    if base is None:
        return None
    if moment.plus is not None:
        return apply_shift(base, moment.plus, 1, ctx.tables, ctx.zone)
    if moment.minus is not None:
        return apply_shift(base, moment.minus, -1, ctx.tables, ctx.zone)
    return base


def _read_column(moment: Moment, source: Row, ctx: MomentContext) -> datetime | None:
    """The column at the moment's time of day, before any shift."""
    value = source.get(moment.column)
    if value is None:
        return None
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise MomentValueError(moment.column, "a date-time with no offset", naive=True)
        if moment.time is None:
            return value.astimezone(UTC)
        # A timestamptz's day is the venue's day of the stored instant.
        day = venue_day(value, ctx.zone)
    elif isinstance(value, date):
        if moment.time is None:
            # A date has no clock; the manifest check refuses a date with no time.
            return None
        day = value
    else:
        raise MomentValueError(
            moment.column, f"{_describe(value)}, not a date or a date-time with an offset"
        )
    return _at_time_of_day(moment, source, day, ctx)


def _describe(value: Any) -> str:
    """A value named for a person reading an error."""
    if isinstance(value, str):
        return f"the text {value[:40]!r}"
    if isinstance(value, bool):
        return "a yes/no"
    if isinstance(value, int | float | Decimal):
        return f"the number {value}"
    return f"a {type(value).__name__}"


def _at_time_of_day(moment: Moment, source: Row, day: date, ctx: MomentContext) -> datetime | None:
    """The instant of the moment's time of day on `day`."""
    spec = moment.time
    if isinstance(spec, HoursEdge):
        rows = ctx.tables.get(spec.hours.table)
        if rows is None:
            return None
        return hours_edge(rows, spec.hours, day, spec.edge, ctx.zone)
    wall: time | None
    if isinstance(spec, str):
        wall = parse_wall_time(spec)
    elif isinstance(spec, SettingRef):
        # A setting holds HH:MM; it is read with the same forms as a kept time.
        wall = parse_wall_time(read_setting(spec, ctx.tables))
    elif isinstance(spec, RowTime):
        wall = parse_wall_time(source.get(spec.column))
    else:
        return None
    if wall is None:
        return None
    try:
        return wall_to_instant(day, wall, ctx.zone)
    except OverflowError:
        return None
