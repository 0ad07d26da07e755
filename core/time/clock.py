"""The venue's clock: wall time on the venue's day <-> exact instants in UTC.

Exact time (an aware datetime in UTC) and wall time (a date and a naive time on the
venue's clock) are kept apart. Every wall time becomes an instant through
`wall_to_instant`, with the spec's policy: a wall time the clocks skip reads as the
same distance after the skip (02:30 on a spring-forward morning reads 03:30), and a
wall time the clocks pass twice reads as the first. Every shift of an instant goes
through `shift_instant`: days on the wall clock, hours and minutes in UTC. A zone is
named by its IANA name (`known_zone`), and a weekday by its name in
`core.manifest.base.WEEKDAYS`.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from importlib import resources
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_UTC_ZONE = ZoneInfo("UTC")

# H:MM as a person types it, HH:MM, or HH:MM:SS as a database keeps it. ASCII digits only.
_WALL_TIME = re.compile(r"([0-9]{1,2}):([0-9]{2})(?::([0-9]{2}))?")


class UnknownZone(ValueError):
    """A name that is no IANA time zone tzdata ships."""


@cache
def iana_zones() -> frozenset[str]:
    """The IANA zone names tzdata ships: no `localtime` (the server's zone), no file paths."""
    return frozenset(resources.files("tzdata").joinpath("zones").read_text().split())


def known_zone(name: str) -> ZoneInfo:
    """The zone an IANA name names, as tzdata ships it; UnknownZone for any other name."""
    # Only names on tzdata's list: ZoneInfo would also read the system's `localtime` (the
    # server's own zone, which never matters) and files such as `posix/Europe/London`.
    if name not in iana_zones():
        raise UnknownZone(f"unknown time zone {name!r}")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise UnknownZone(f"unknown time zone {name!r}") from error


def venue_zone(name: str | None) -> ZoneInfo:
    """The venue's zone from its IANA name; UTC when none is set; UnknownZone when unknown."""
    return known_zone(name) if name else _UTC_ZONE


def wall_to_instant(day: date, wall: time, zone: ZoneInfo) -> datetime:
    """The instant (aware, UTC) of a wall time on the venue's day: gap -> after, fold -> first."""
    if wall.tzinfo is not None:
        raise ValueError("a wall time has no zone of its own")
    return on_venue_clock(datetime.combine(day, wall), zone).astimezone(UTC)


def on_venue_clock(wall: datetime, zone: ZoneInfo) -> datetime:
    """A date and wall time with no zone (a `timestamp without time zone` as stored) read on
    the venue's clock: aware in `zone`, its wall fields kept, so it is written back as it
    was stored; its instant follows the policy (gap -> after, fold -> first)."""
    if wall.tzinfo is not None:
        raise ValueError("a wall time has no zone of its own")
    # PEP 495: fold=0 reads a repeated wall time as the first pass, and a skipped wall time
    # with the offset before the skip, which lands the same distance after it (the spec's
    # "hour after"). That is exactly the policy, so zoneinfo does the work.
    return wall.replace(fold=0, tzinfo=zone)


def wall_clock_of(instant: datetime, zone: ZoneInfo) -> datetime:
    """The venue's wall time (no zone) an instant shows, as a `timestamp without time zone`
    keeps it; a wall time read by `on_venue_clock` comes back as it was stored."""
    if instant.utcoffset() is None:
        raise ValueError("an instant must carry its offset")
    return instant.astimezone(zone).replace(tzinfo=None, fold=0)


def shift_instant(
    instant: datetime, zone: ZoneInfo, *, days: int | None = None, elapsed: timedelta = timedelta()
) -> datetime:
    """`instant` moved `days` calendar days at the same wall time, then `elapsed` time in UTC.

    Days go on the venue's wall clock (read back with the gap and fold policy), so one day
    may be 23 or 25 hours; hours and minutes are elapsed time, whatever the clocks do.
    """
    if days is not None:
        local = instant.astimezone(zone)
        instant = wall_to_instant(local.date() + timedelta(days=days), local.time(), zone)
    return instant.astimezone(UTC) + elapsed


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
