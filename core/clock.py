"""The venue's clock: wall time on the venue's day <-> exact instants in UTC.

Exact time (an aware datetime in UTC) and wall time (a date and a naive time on the
venue's clock) are kept apart. Every wall time becomes an instant through
`wall_to_instant`, with the spec's policy: a wall time the clocks skip reads as the
same distance after the skip (02:30 on a spring-forward morning reads 03:30), and a
wall time the clocks pass twice reads as the first.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_UTC_ZONE = ZoneInfo("UTC")

# H:MM as a person types it, HH:MM, or HH:MM:SS as a database keeps it. ASCII digits only.
_WALL_TIME = re.compile(r"([0-9]{1,2}):([0-9]{2})(?::([0-9]{2}))?")


def venue_zone(name: str | None) -> ZoneInfo:
    """The venue's zone from its IANA name; UTC when none is set; ValueError when unknown."""
    if not name:
        return _UTC_ZONE
    if name.rsplit("/", 1)[-1] == "localtime":
        # The system's zoneinfo links "localtime" to the server's own zone, which never matters.
        raise ValueError(f"unknown time zone {name!r}")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise ValueError(f"unknown time zone {name!r}") from error


def wall_to_instant(day: date, wall: time, zone: ZoneInfo) -> datetime:
    """The instant (aware, UTC) of a wall time on the venue's day: gap -> after, fold -> first."""
    if wall.tzinfo is not None:
        raise ValueError("a wall time has no zone of its own")
    # PEP 495: fold=0 reads a repeated wall time as the first pass, and a skipped wall time
    # with the offset before the skip, which lands the same distance after it (the spec's
    # "hour after"). That is exactly the policy, so zoneinfo does the work.
    local = datetime.combine(day, wall.replace(fold=0), tzinfo=zone)
    return local.astimezone(UTC)


def venue_day(instant: datetime, zone: ZoneInfo) -> date:
    """The venue's day of an instant."""
    if instant.tzinfo is None or instant.utcoffset() is None:
        # A naive datetime would be read on the server's zone, which never matters.
        raise ValueError("an instant must carry its offset")
    return instant.astimezone(zone).date()


def parse_wall_time(text: object) -> time | None:
    """A kept wall time: "HH:MM", "H:MM" or "HH:MM:SS"; anything else, or empty, is None."""
    if isinstance(text, time):
        return text if text.tzinfo is None else None
    if not isinstance(text, str):
        return None
    match = _WALL_TIME.fullmatch(text)
    if match is None:
        return None
    hour, minute, second = (int(part) if part else 0 for part in match.groups())
    if hour > 23 or minute > 59 or second > 59:
        return None
    return time(hour, minute, second)
