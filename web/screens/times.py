"""Times as the screens show them: on the venue's clock, and how long from now."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from flask import Flask
from flask_babel import gettext as _

from core.manifest.board_rules import card_spec
from core.manifest.model import Table
from core.time.words import aside_words, overdue_words, span_words
from web.language import speech
from web.screens.labels import state_label


def _verbs() -> dict[str, str]:
    """How a card names a timed move by where it goes ("cancels Fri 21:00")."""
    say = speech()
    return {
        "cancelled": say("cancels"),
        "canceled": say("cancels"),
        "expired": say("expires"),
        "closed": say("closes"),
        "no_show": say("no-show"),
    }


SOON = timedelta(minutes=10)
"""A timed move due within this long is urgent on a board (a kitchen acts on it now)."""


def full(instant: datetime | None, zone: ZoneInfo) -> str:
    """An instant on the venue's clock with its date: `Fri 10 Jul 2026 21:00`."""
    return "" if instant is None else speech().dated(instant, zone)


def full_seconds(instant: datetime | None, zone: ZoneInfo) -> str:
    """An instant with its seconds, where the minute matters: `Fri 10 Jul 2026 08:34:02`."""
    return "" if instant is None else speech().dated(instant, zone, seconds=True)


def precise(instant: datetime | None, zone: ZoneInfo) -> str:
    """An instant with its date, and its seconds when it has any (a stamp's moment, a move
    made at 08:34:02): `Fri 10 Jul 2026 08:33:30`; else to the minute."""
    if instant is None or (instant.second == 0 and instant.microsecond == 0):
        return full(instant, zone)
    return full_seconds(instant, zone)


def precise_wall(instant: datetime | None, zone: ZoneInfo) -> str:
    """A wall time, with its seconds when it has any: `08:33`, `08:33:30`."""
    if instant is None or (instant.second == 0 and instant.microsecond == 0):
        return wall(instant, zone)
    return speech().clock(instant, zone, seconds=True)


def wall(instant: datetime | None, zone: ZoneInfo) -> str:
    """An instant's wall time alone: `08:33`."""
    return "" if instant is None else speech().clock(instant, zone)


def short(instant: datetime | None, zone: ZoneInfo) -> str:
    """An instant on the venue's clock as a card shows it: `Fri 21:00`."""
    return "" if instant is None else speech().weekday_clock(instant, zone)


def relative(instant: datetime | None, now: datetime) -> str:
    """How far an instant is from `now`: `in 2 h 5 min`, `12 min ago`, `now`."""
    if instant is None:
        return ""
    say = speech()
    seconds = (instant - now).total_seconds()
    span = span_words(timedelta(seconds=abs(seconds)), say)
    if span == "":
        return say("now")
    return say("in %(span)s", span=span) if seconds > 0 else say("%(span)s ago", span=span)


def minutes_words(minutes: int | None) -> str:
    """Whole minutes as a person says them: `5 min`, `6 h 51 min`."""
    say = speech()
    return span_words(timedelta(minutes=minutes or 0), say) or say.unit(0, "minute")


def day_wall(instant: datetime | None, now: datetime, zone: ZoneInfo) -> str:
    """A time on the venue's clock as a wall reads it: `12:30` on the venue's day of `now`,
    else with its day, `Sat 12:30`; a date alone reads `Sat 11 Jul`."""
    if instant is None:
        return ""
    say = speech()
    if not isinstance(instant, datetime):
        return say.day(instant, year=False)
    local = instant.astimezone(zone)
    same_day = local.date() == now.astimezone(zone).date()
    return say.clock(instant, zone) if same_day else say.weekday_clock(instant, zone)


def due_words(instant: datetime, now: datetime, zone: ZoneInfo, state: object = None) -> str:
    """A timed move's time left, true to the connection's clock (`state`, a ClockState):
    `in 25 min`, or once due "due 7 h ago: waiting for the clock (stalled since 06:09)"."""
    if instant > now:
        return relative(instant, now)
    kind = getattr(state, "kind", "running")
    return overdue_words(instant, now, zone, kind, getattr(state, "since", None), speech())


def set_aside_words(until: datetime, zone: ZoneInfo, why: str | None = None) -> str:
    """ "set aside until 07:07: <why>"."""
    return aside_words(until, zone, why, speech())


def urgency(instant: datetime, now: datetime) -> str:
    """How urgent a card's timed move looks: `overdue`, `soon` (within 10 min), `later`."""
    if instant <= now:
        return "overdue"
    return "soon" if instant - now <= SOON else "later"


@dataclass(frozen=True)
class Ticket:
    """How urgent an open card is by the time it is for (its board's `time`): `kind` is
    `on-time`, `soon` (within the board's `soon_minutes` of it) or `late` (past it by the
    board's `late_minutes`), empty for a final card or one without a time; `words` its
    timer ("in 25 min", "due now", "late 12 min"); `near`, whether its timed move is
    within the board's `move_near_minutes` or passed (the card brings it forward)."""

    kind: str
    words: str
    at: datetime | None
    soon: int
    late: int
    near: bool


def ticket_words(at: datetime, now: datetime) -> str:
    """A ticket's timer, to the minute (rounded down): `in 25 min`, `due now` within the
    minute either side, `late 12 min` (static/js/screens.js says the same as it ticks)."""
    say = speech()
    if at > now:
        span = span_words(at - now, say)
        return say("in %(span)s", span=span) if span else say("due now")
    span = span_words(now - at, say)
    return say("late %(span)s", span=span) if span else say("due now")


def ticket_kind(at: datetime, now: datetime, soon: timedelta, late: timedelta) -> str:
    """`late` once past its time by `late`, `soon` within `soon` before it, else `on-time`."""
    if now >= at + late:
        return "late"
    return "soon" if now >= at - soon else "on-time"


def ticket(card: Any, spec: Table, now: datetime, zone: ZoneInfo) -> Ticket:
    """A card's urgency by its own time (see `Ticket`)."""
    shown = card_spec(spec)
    due = card.due
    near = due is not None and due - now <= shown.near
    value = card.time[1] if card.time else None
    if card.final or not isinstance(value, datetime):
        return Ticket("", "", None, 0, 0, near)
    at = value if value.tzinfo is not None else value.replace(tzinfo=zone)
    soon, late = int(shown.soon.total_seconds()), int(shown.late.total_seconds())
    kind = ticket_kind(at, now, shown.soon, shown.late)
    return Ticket(kind, ticket_words(at, now), at, soon, late, near)


def verb(to: str, spec: object = None) -> str:
    """A timed move's verb on a card: `cancels`, else `moves to <state>` by its label
    (`moves to No show`; the table's `states.titles` where given)."""
    found = _verbs().get(to)
    return found or _("moves to %(state)s", state=state_label(to, spec))


def value(raw: object, zone: ZoneInfo) -> str:
    """A column's value as a screen shows it (instants on the venue's clock)."""
    if raw is None:
        return "—"
    if isinstance(raw, datetime):
        return full(raw, zone) if raw.utcoffset() is not None else raw.isoformat(" ")
    if isinstance(raw, date):
        return speech().day(raw)
    if isinstance(raw, bool):
        return _("yes") if raw else _("no")
    if isinstance(raw, Decimal | float) and not speech().english:
        return speech().number(raw)
    return str(raw)


def audit_value(raw: object, zone: ZoneInfo) -> str:
    """A value as the audit keeps it (JSON): an ISO instant shown on the venue's clock."""
    if isinstance(raw, str) and len(raw) >= 19 and raw[4:5] == "-" and raw[10:11] == "T":
        try:
            parsed = datetime.fromisoformat(raw)
        except ValueError:
            return raw
        return value(parsed, zone)
    return value(raw, zone)


def init_app(app: Flask) -> None:
    """Make the helpers template filters."""
    app.add_template_filter(full, "full")
    app.add_template_filter(short, "short")
    app.add_template_filter(full_seconds, "full_seconds")
    app.add_template_filter(wall, "wall")
    app.add_template_filter(precise, "precise")
    app.add_template_filter(precise_wall, "precise_wall")
    app.add_template_filter(relative, "relative")
    app.add_template_filter(verb, "verb")
    app.add_template_filter(urgency, "urgency")
    app.add_template_global(ticket, "ticket")
    app.add_template_filter(value, "value")
    app.add_template_filter(audit_value, "audit_value")
    app.add_template_filter(day_wall, "day_wall")
    app.add_template_filter(minutes_words, "minutes_words")
    app.add_template_filter(due_words, "due_words")
    app.add_template_filter(set_aside_words, "set_aside_words")
