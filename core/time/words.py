"""How a moment was read, in words: "closing hour on Friday (opening hours) → Fri 21:00".

The instant, and which part of the moment gave it, are always the engine's own answer
(`core.time.moments.resolve_moment`, asked of the moment and of each fallback alone); this
module only names the parts it read, with the values it found, so the words can never
say another time than the sweep acts on.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from core.manifest.model import Moment, RowTime, Shift
from core.manifest.refs import HoursEdge, SettingRef
from core.time.clock import venue_day
from core.time.moments import MomentContext, MomentValueError, read_setting, resolve_moment

_UNIT_WORDS = {"minutes": ("minute", "min"), "hours": ("hour", "h"), "days": ("day", "d")}
_EDGES = {"closes": "closing hour", "opens": "opening hour"}


def instant_words(instant: datetime, zone: ZoneInfo) -> str:
    """An instant as the words end: `Fri 21:00` on the venue's clock."""
    return instant.astimezone(zone).strftime("%a %H:%M")


def horizon_words(now: datetime, horizon: timedelta, zone: ZoneInfo) -> str:
    """How far ahead a preview read, on the venue's clock: `read to Mon 5 Apr 10:30, 8 days`.
    The reach is `now` plus the horizon's elapsed hours (as the preview reads), so across a
    change of clocks its wall time is an hour off `now`'s."""
    reach = (now + horizon).astimezone(zone)
    hours = int(horizon.total_seconds() // 3600)
    days, rest = divmod(hours, 24)
    length = f"{days} day{'' if days == 1 else 's'}" if not rest else f"{hours} hours"
    return f"read to {reach:%a} {reach.day} {reach:%b %H:%M}, {length}"


def span_words(delta: timedelta) -> str:
    """A duration in its two largest units, rounded down to the minute: `7 h 5 min`, `2 d 3 h`
    (under a minute: the empty string)."""
    minutes = int(delta.total_seconds() // 60)
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    parts = [(days, "d"), (hours, "h"), (minutes, "min")]
    return " ".join([f"{n} {unit}" for n, unit in parts if n][:2])


def overdue_words(
    due: datetime,
    now: datetime,
    zone: ZoneInfo,
    clock: str = "running",
    since: datetime | None = None,
) -> str:
    """What is true of a timed move whose moment has passed, by the connection's clock
    (`running`, `paused`, `stalled` since the last sweep, `redis` unreachable):
    "due 7 h ago: waiting for the clock (stalled since 06:09)", "moves at the next minute"."""
    ago = span_words(now - due)
    head = f"due {ago} ago: " if ago else ""
    if clock == "stalled":
        stalled = f"stalled since {since.astimezone(zone):%H:%M}" if since else "stalled"
        return f"{head}waiting for the clock ({stalled})"
    if clock == "paused":
        return f"{head}waiting: the connection is paused"
    if clock == "redis":
        return f"{head}waiting for the clock (Redis does not answer)"
    return f"{head}moves at the next minute"


def aside_words(until: datetime, zone: ZoneInfo, why: str | None = None) -> str:
    """A row the sweep set aside: "set aside until 07:07: <why>" on the venue's clock (to
    the minute, as every time a screen shows)."""
    shown = until.astimezone(zone).strftime("%H:%M")
    return f"set aside until {shown}: {why}" if why else f"set aside until {shown}"


def day_time_words(instant: datetime, now: datetime, zone: ZoneInfo) -> str:
    """A time as a screen says it: `23:00` on the venue's day of `now`, else `Fri 23:00`."""
    local = instant.astimezone(zone)
    if local.date() == now.astimezone(zone).date():
        return local.strftime("%H:%M")
    return instant_words(instant, zone)


_MOVERS = {
    "clock": "the clock",
    "public": "the guest",
    "import": "an import",
    "sample": "sample data",
}
"""Who moved a row, by the audit's actor kind; a person is named by their address."""


def mover_words(
    kind: str,
    actor: str,
    at: datetime,
    now: datetime,
    zone: ZoneInfo,
    codes: Sequence[tuple[str, str]] = (),
) -> str:
    """Who moved a row last, and when: "moved by the clock at 23:00 (Cancel code: closed)"
    (the values its timed move set, by their labels), "moved by ann@venue.test at 19:40"."""
    who = _MOVERS.get(kind, actor)
    said = f"moved by {who} at {day_time_words(at, now, zone)}"
    if codes:
        said += " (" + ", ".join(f"{name}: {value}" for name, value in codes) + ")"
    return said


def explain_moment(moment: Moment, ctx: MomentContext) -> str:
    """The moment's reading in words, each fallback tried in turn, ending at its instant
    (or at "no time" when none answers)."""
    steps: list[str] = []
    for number, part in enumerate([moment, *(moment.or_ or [])]):
        own = part.model_copy(update={"or_": None})
        words = part_words(own, ctx)
        prefix = f"fallback {number}: " if number else ""
        try:
            reading = resolve_moment(own, ctx)
        except MomentValueError as error:
            return " → ".join([*steps, f"{prefix}{words}, unreadable ({error})"])
        if reading is not None:
            return " → ".join([*steps, prefix + words, instant_words(reading.at, ctx.zone)])
        steps.append(f"{prefix}{words}, {empty_words(own, ctx)}")
    return " → ".join([*steps, "no time"])


def empty_words(moment: Moment, ctx: MomentContext) -> str:
    """Why a moment gave no value, as far as words go: its column empty, or a part unread."""
    source = ctx.row if moment.via is None else ctx.linked.get(moment.via)
    if source is None:
        return "its linked row is missing"
    return "empty" if source.get(moment.column) is None else "no value"


def why_no_time(moment: Moment, ctx: MomentContext) -> str:
    """What a row waiting for no time is told: "offer_until is empty"."""
    source = ctx.row if moment.via is None else ctx.linked.get(moment.via)
    if source is not None and source.get(moment.column) is None and not moment.or_:
        return f"{moment.column} is empty"
    return explain_moment(moment, ctx)


def part_words(moment: Moment, ctx: MomentContext) -> str:
    """One moment without its fallbacks: its column, time of day and shift, named."""
    source = ctx.row if moment.via is None else ctx.linked.get(moment.via)
    column = moment.column if moment.via is None else f"{moment.via}'s {moment.column}"
    value = source.get(moment.column) if source is not None else None
    words = _time_words(moment, column, value, ctx)
    for sign, shift in (("plus", moment.plus), ("less", moment.minus)):
        if shift is not None:
            words += f"{',' if sign == 'plus' else ''} {sign} {shift_words(shift, ctx)}"
    return words


def _time_words(moment: Moment, column: str, value: object, ctx: MomentContext) -> str:
    """The column at its time of day: "closing hour on Friday (opening hours)"."""
    spec = moment.time
    if spec is None:
        return column
    day = _day(value, ctx.zone)
    on = f" on {day.strftime('%A')}" if day is not None else ""
    if isinstance(spec, HoursEdge):
        table = spec.hours.table.replace("_", " ")
        return f"{_EDGES.get(spec.edge, spec.edge)}{on} ({table})"
    if isinstance(spec, SettingRef):
        setting = read_setting(spec, ctx.tables)
        return f"{spec.column} setting {setting if setting is not None else '(empty)'}{on}"
    if isinstance(spec, RowTime):
        source = ctx.row if moment.via is None else ctx.linked.get(moment.via) or {}
        return f"{spec.column} {source.get(spec.column) or '(empty)'}{on}"
    return f"{column} at {spec}"


def _day(value: object, zone: ZoneInfo) -> date | None:
    """The venue's day of a column's value (the engine reads the same day)."""
    if isinstance(value, datetime):
        return venue_day(value, zone) if value.utcoffset() is not None else None
    return value if isinstance(value, date) else None


def shift_words(shift: Shift, ctx: MomentContext) -> str:
    """A shift in words: "1 day", "offer_hours (48 h)"."""
    for unit, (word, short) in _UNIT_WORDS.items():
        amount = getattr(shift, unit)
        if amount is None:
            continue
        if isinstance(amount, SettingRef):
            found = read_setting(amount, ctx.tables)
            shown = f"{found} {short}" if found is not None else "empty"
            return f"{amount.column} ({shown})"
        return f"{amount} {word}{'' if amount == 1 else 's'}"
    return "no shift"
