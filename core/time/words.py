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

from core.basics.speech import ENGLISH, Speech, Unit
from core.manifest.model import Moment, RowTime, Shift
from core.manifest.refs import HoursEdge, SettingRef
from core.time.clock import venue_day
from core.time.moments import MomentContext, MomentValueError, read_setting, resolve_moment

_UNITS = ("minutes", "hours", "days")


def _edge(edge: str, say: Speech) -> str:
    if edge == "closes":
        return say("closing hour")
    if edge == "opens":
        return say("opening hour")
    return edge


def instant_words(instant: datetime, zone: ZoneInfo, say: Speech = ENGLISH) -> str:
    """An instant as the words end: `Fri 21:00` on the venue's clock (`Fr., 21:00`)."""
    return say.weekday_clock(instant, zone)


def horizon_words(now: datetime, horizon: timedelta, zone: ZoneInfo, say: Speech = ENGLISH) -> str:
    """How far ahead a preview read, on the venue's clock: `read to Mon 5 Apr 10:30, 8 days`
    (`gelesen bis Mo., 5. Apr., 10:30, 8 Tage`).
    The reach is `now` plus the horizon's elapsed hours (as the preview reads), so across a
    change of clocks its wall time is an hour off `now`'s."""
    reach = (now + horizon).astimezone(zone)
    hours = int(horizon.total_seconds() // 3600)
    days, rest = divmod(hours, 24)
    if say.english:
        length = f"{days} day{'' if days == 1 else 's'}" if not rest else f"{hours} hours"
        return f"read to {reach:%a} {reach.day} {reach:%b %H:%M}, {length}"
    if rest:
        length = say.plural("%(num)d hour", "%(num)d hours", hours)
    else:
        length = say.plural("%(num)d day", "%(num)d days", days)
    when = f"{say.day(reach.date(), year=False)}, {say.clock(reach, zone)}"
    return say("read to %(when)s, %(length)s", when=when, length=length)


def span_words(delta: timedelta, say: Speech = ENGLISH) -> str:
    """A duration in its two largest units, rounded down to the minute: `7 h 5 min`, `2 d 3 h`
    (`7 Std. 5 Min.`; under a minute: the empty string)."""
    return say.span(delta)


def overdue_words(
    due: datetime,
    now: datetime,
    zone: ZoneInfo,
    clock: str = "running",
    since: datetime | None = None,
    say: Speech = ENGLISH,
) -> str:
    """What is true of a timed move whose moment has passed, by the connection's clock
    (`running`, `paused`, `stalled` since the last sweep, `redis` unreachable):
    "due 7 h ago: waiting for the clock (stalled since 06:09)", "moves at the next minute"."""
    ago = span_words(now - due, say)
    if clock == "stalled":
        if since:
            what = say(
                "waiting for the clock (stalled since %(time)s)", time=say.clock(since, zone)
            )
        else:
            what = say("waiting for the clock (stalled)")
    elif clock == "paused":
        what = say("waiting: the connection is paused")
    elif clock == "redis":
        what = say("waiting for the clock (Redis does not answer)")
    else:
        what = say("moves at the next minute")
    return say("due %(span)s ago: %(what)s", span=ago, what=what) if ago else what


def aside_words(
    until: datetime, zone: ZoneInfo, why: str | None = None, say: Speech = ENGLISH
) -> str:
    """A row the sweep set aside: "set aside until 07:07: <why>" on the venue's clock (to
    the minute, as every time a screen shows)."""
    shown = say.clock(until, zone)
    if why:
        return say("set aside until %(time)s: %(why)s", time=shown, why=why)
    return say("set aside until %(time)s", time=shown)


def day_time_words(instant: datetime, now: datetime, zone: ZoneInfo, say: Speech = ENGLISH) -> str:
    """A time as a screen says it: `23:00` on the venue's day of `now`, else `Fri 23:00`."""
    local = instant.astimezone(zone)
    if local.date() == now.astimezone(zone).date():
        return say.clock(instant, zone)
    return instant_words(instant, zone, say)


def _mover(kind: str, actor: str, say: Speech) -> str:
    """Who moved a row, by the audit's actor kind; a person is named by their address."""
    if kind == "clock":
        return say("the clock")
    if kind == "public":
        return say("the guest")
    if kind == "import":
        return say("an import")
    if kind == "sample":
        return say("sample data")
    return actor


def mover_words(
    kind: str,
    actor: str,
    at: datetime,
    now: datetime,
    zone: ZoneInfo,
    codes: Sequence[tuple[str, str]] = (),
    say: Speech = ENGLISH,
) -> str:
    """Who moved a row last, and when: "moved by the clock at 23:00 (Cancel code: closed)"
    (the values its timed move set, by their labels), "moved by ann@venue.test at 19:40"."""
    who = _mover(kind, actor, say)
    said = say("moved by %(who)s at %(time)s", who=who, time=day_time_words(at, now, zone, say))
    if codes:
        said += " (" + ", ".join(f"{name}: {value}" for name, value in codes) + ")"
    return said


def explain_moment(moment: Moment, ctx: MomentContext, say: Speech = ENGLISH) -> str:
    """The moment's reading in words, each fallback tried in turn, ending at its instant
    (or at "no time" when none answers)."""
    steps: list[str] = []
    for number, part in enumerate([moment, *(moment.or_ or [])]):
        own = part.model_copy(update={"or_": None})
        words = part_words(own, ctx, say)
        prefix = say("fallback %(number)s: ", number=number) if number else ""
        try:
            reading = resolve_moment(own, ctx)
        except MomentValueError as error:
            unread = say("%(words)s, unreadable (%(error)s)", words=words, error=error)
            return " → ".join([*steps, prefix + unread])
        if reading is not None:
            return " → ".join([*steps, prefix + words, instant_words(reading.at, ctx.zone, say)])
        steps.append(f"{prefix}{words}, {empty_words(own, ctx, say)}")
    return " → ".join([*steps, say("no time")])


def empty_words(moment: Moment, ctx: MomentContext, say: Speech = ENGLISH) -> str:
    """Why a moment gave no value, as far as words go: its column empty, or a part unread."""
    source = ctx.row if moment.via is None else ctx.linked.get(moment.via)
    if source is None:
        return say("its linked row is missing")
    return say("empty") if source.get(moment.column) is None else say("no value")


def why_no_time(moment: Moment, ctx: MomentContext, say: Speech = ENGLISH) -> str:
    """What a row waiting for no time is told: "offer_until is empty"."""
    source = ctx.row if moment.via is None else ctx.linked.get(moment.via)
    if source is not None and source.get(moment.column) is None and not moment.or_:
        return say("%(column)s is empty", column=moment.column)
    return explain_moment(moment, ctx, say)


def part_words(moment: Moment, ctx: MomentContext, say: Speech = ENGLISH) -> str:
    """One moment without its fallbacks: its column, time of day and shift, named."""
    source = ctx.row if moment.via is None else ctx.linked.get(moment.via)
    if moment.via is None:
        column = moment.column
    else:
        column = say("%(via)s's %(column)s", via=moment.via, column=moment.column)
    value = source.get(moment.column) if source is not None else None
    words = _time_words(moment, column, value, ctx, say)
    if moment.plus is not None:
        words = say(
            "%(words)s, plus %(shift)s", words=words, shift=shift_words(moment.plus, ctx, say)
        )
    if moment.minus is not None:
        words = say(
            "%(words)s less %(shift)s", words=words, shift=shift_words(moment.minus, ctx, say)
        )
    return words


def _time_words(moment: Moment, column: str, value: object, ctx: MomentContext, say: Speech) -> str:
    """The column at its time of day: "closing hour on Friday (opening hours)"."""
    spec = moment.time
    if spec is None:
        return column
    day = _day(value, ctx.zone)
    if isinstance(spec, HoursEdge):
        table = spec.hours.table.replace("_", " ")
        edge = _edge(spec.edge, say)
        if day is not None:
            return say(
                "%(edge)s on %(day)s (%(table)s)", edge=edge, day=say.weekday(day), table=table
            )
        return f"{edge} ({table})"
    if isinstance(spec, SettingRef):
        setting = read_setting(spec, ctx.tables)
        shown = str(setting) if setting is not None else say("(empty)")
        words = say("%(column)s setting %(value)s", column=spec.column, value=shown)
    elif isinstance(spec, RowTime):
        source = ctx.row if moment.via is None else ctx.linked.get(moment.via) or {}
        words = f"{spec.column} {source.get(spec.column) or say('(empty)')}"
    else:
        return say("%(column)s at %(time)s", column=column, time=spec)
    return say("%(words)s on %(day)s", words=words, day=say.weekday(day)) if day else words


def _day(value: object, zone: ZoneInfo) -> date | None:
    """The venue's day of a column's value (the engine reads the same day)."""
    if isinstance(value, datetime):
        return venue_day(value, zone) if value.utcoffset() is not None else None
    return value if isinstance(value, date) else None


def _amount_words(amount: int, unit: str, say: Speech) -> str:
    """ "1 day", "48 hours", "5 minutes" in the language's plural forms."""
    if unit == "days":
        return say.plural("%(num)d day", "%(num)d days", amount)
    if unit == "hours":
        return say.plural("%(num)d hour", "%(num)d hours", amount)
    return say.plural("%(num)d minute", "%(num)d minutes", amount)


def _short_words(amount: object, unit: str, say: Speech) -> str:
    """ "48 h", "2 d", "30 min": a setting's value in its unit, short."""
    try:
        number = int(str(amount))
    except ValueError:
        number = None
    single: Unit = "day" if unit == "days" else "hour" if unit == "hours" else "minute"
    return say.unit(number if number is not None else amount, single)


def shift_words(shift: Shift, ctx: MomentContext, say: Speech = ENGLISH) -> str:
    """A shift in words: "1 day", "offer_hours (48 h)"."""
    for unit in _UNITS:
        amount = getattr(shift, unit)
        if amount is None:
            continue
        if isinstance(amount, SettingRef):
            found = read_setting(amount, ctx.tables)
            shown = _short_words(found, unit, say) if found is not None else say("empty")
            return f"{amount.column} ({shown})"
        return _amount_words(int(amount), unit, say)
    return say("no shift")
