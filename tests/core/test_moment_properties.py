"""Property tests: the clock rules against an independent, brute-force statement of them.

The statement scans UTC minute by minute and asks only "what does the venue's wall
clock show at this instant?" (a UTC -> local reading, which is never ambiguous):

- a wall time the clock shows is read at the FIRST instant it shows it (fold: the first);
- a wall time the clock never shows lies in a jump of the clock; it is read at the first
  instant the clock shows that wall time plus the jump's length (the hour after);
- minutes and hours are elapsed seconds; days are calendar days at the same wall time.
"""

from __future__ import annotations

import itertools
import zoneinfo
from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from zoneinfo import ZoneInfo

from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.manifest.model import Shift
from core.time.clock import venue_zone, wall_to_instant
from core.time.moments import apply_shift

MINUTE = timedelta(minutes=1)
# Offsets run from UTC-12 to UTC+14, so a wall time is shown within these bounds of itself.
EARLIEST, LATEST = timedelta(hours=-15), timedelta(hours=13)
# From 1990 on, every zone's offsets are whole minutes, so a minute scan sees every wall minute.
FIRST_YEAR, LAST_YEAR = 1990, 2037
ZONES = sorted(name for name in zoneinfo.available_timezones() if "localtime" not in name)
# How many examples, and whether derandomized, comes from the profile (tests/conftest.py).
PROPERTY = settings(deadline=None)


# America/Scoresbysund sprang from -02:00 to -01:00 at 01:00 UTC on 30 March 2025: its
# clock went from 22:59 on the 29th straight to 00:00 on the 30th, so 23:59 on the 29th
# was never shown. The hour after it is 00:59 on the 30th (-01:00), which is 01:59 UTC:
# the next calendar day, which the statement must keep.
SCORESBYSUND = ZoneInfo("America/Scoresbysund")
SKIPPED_BEFORE_MIDNIGHT = (date(2025, 3, 29), time(23, 59))
HOUR_AFTER_NEXT_DAY = datetime(2025, 3, 30, 1, 59, tzinfo=UTC)


def wall_at(instant: datetime, zone: ZoneInfo) -> datetime:
    """What the venue's clock shows at an instant (naive)."""
    return instant.astimezone(zone).replace(tzinfo=None)


def expected_instant(day: date, wall: time, zone: ZoneInfo) -> datetime:
    """The independent statement: scan UTC minutes around the wall time."""
    target = datetime.combine(day, wall)
    start = target.replace(tzinfo=UTC) + EARLIEST
    scan = [start + i * MINUTE for i in range(int((LATEST - EARLIEST) / MINUTE) + 1)]
    shown = [wall_at(instant, zone) for instant in scan]
    for instant, wall_shown in zip(scan, shown, strict=True):
        if wall_shown == target:
            return instant
    for before, after in itertools.pairwise(shown):
        if before < target < after:
            # The hour after may fall on the next day (a jump at midnight): keep its date.
            jump = after - (before + MINUTE)
            later = target + jump
            return expected_instant(later.date(), later.time(), zone)
    raise AssertionError(f"{target} is neither shown nor skipped in {zone.key}")


@cache
def transitions(zone_name: str, year: int) -> tuple[datetime, ...]:
    """The instants a zone's offset changes in a year, to the minute."""
    zone = ZoneInfo(zone_name)
    hour = timedelta(hours=1)
    at = datetime(year, 1, 1, tzinfo=UTC)
    found = []
    while at.year == year:
        if at.astimezone(zone).utcoffset() != (at + hour).astimezone(zone).utcoffset():
            minute = at
            offset = at.astimezone(zone).utcoffset()
            while minute.astimezone(zone).utcoffset() == offset:
                minute += MINUTE
            found.append(minute)
        at += hour
    return tuple(found)


@st.composite
def venue_walls(draw: st.DrawFn) -> tuple[ZoneInfo, date, time]:
    """A zone and a whole-minute wall time, half of them within two hours of a transition."""
    name = draw(st.sampled_from(ZONES))
    zone = venue_zone(name)
    if draw(st.booleans()):
        changes = transitions(name, draw(st.integers(FIRST_YEAR, LAST_YEAR)))
        if changes:
            change = draw(st.sampled_from(changes))
            near = wall_at(change, zone) + draw(st.integers(-120, 120)) * MINUTE
            return zone, near.date(), near.time()
    day = draw(st.dates(date(FIRST_YEAR, 1, 2), date(LAST_YEAR, 12, 30)))
    return zone, day, time(draw(st.integers(0, 23)), draw(st.integers(0, 59)))


@PROPERTY
@given(venue_walls())
def test_wall_time_matches_the_brute_force_statement(case: tuple[ZoneInfo, date, time]) -> None:
    zone, day, wall = case
    assert wall_to_instant(day, wall, zone) == expected_instant(day, wall, zone)


@PROPERTY
@given(
    st.datetimes(datetime(FIRST_YEAR, 1, 1), datetime(LAST_YEAR, 12, 31), timezones=st.just(UTC)),
    st.sampled_from(["minutes", "hours"]),
    st.integers(0, 100_000),
    st.sampled_from([1, -1]),
    st.sampled_from(ZONES),
)
def test_minutes_and_hours_are_elapsed_time(
    instant: datetime, unit: str, count: int, sign: int, zone_name: str
) -> None:
    elapsed = timedelta(seconds={"minutes": 60, "hours": 3600}[unit] * count * sign)
    shifted = apply_shift(
        instant, Shift.model_validate({unit: count}), sign, {}, ZoneInfo(zone_name)
    )
    assert shifted is not None
    # Aware datetimes subtract as exact elapsed time, whatever their zones.
    assert shifted - instant == elapsed
    assert shifted.tzinfo is UTC


@PROPERTY
@given(venue_walls(), st.integers(0, 400), st.sampled_from([1, -1]))
@example((SCORESBYSUND, *SKIPPED_BEFORE_MIDNIGHT), 1, 1)
def test_days_are_calendar_days_at_the_same_wall_time(
    target: tuple[ZoneInfo, date, time], count: int, sign: int
) -> None:
    # Start `count` days away from a (often transition) day at the same wall time, so the
    # shift lands on it; the start itself is read by the independent statement.
    zone, day, wall = target
    instant = expected_instant(day - timedelta(days=sign * count), wall, zone)
    shown = wall_at(instant, zone)
    expected = expected_instant(shown.date() + timedelta(days=sign * count), shown.time(), zone)
    assert apply_shift(instant, Shift(days=count), sign, {}, zone) == expected


def test_a_skipped_wall_time_whose_hour_after_is_the_next_day() -> None:
    day, wall = SKIPPED_BEFORE_MIDNIGHT
    assert expected_instant(day, wall, SCORESBYSUND) == HOUR_AFTER_NEXT_DAY
    assert wall_to_instant(day, wall, SCORESBYSUND) == HOUR_AFTER_NEXT_DAY
    assert HOUR_AFTER_NEXT_DAY.astimezone(SCORESBYSUND).isoformat() == "2025-03-30T00:59:00-01:00"


def test_one_day_after_the_day_before_lands_on_the_hour_after() -> None:
    # 23:59 on the 28th (-02:00) plus one calendar day is 23:59 on the 29th: skipped, so
    # the hour after, 00:59 on the 30th.
    start = datetime(2025, 3, 29, 1, 59, tzinfo=UTC)
    assert start.astimezone(SCORESBYSUND).isoformat() == "2025-03-28T23:59:00-02:00"
    assert apply_shift(start, Shift(days=1), 1, {}, SCORESBYSUND) == HOUR_AFTER_NEXT_DAY
