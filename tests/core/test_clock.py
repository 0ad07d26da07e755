"""The venue's clock: zones, wall time -> instant (gap, fold), the venue's day, kept times."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from core.manifest.base import WEEKDAYS
from core.time.clock import (
    UnknownZone,
    known_zone,
    parse_wall_time,
    shift_instant,
    venue_day,
    venue_zone,
    wall_to_instant,
)

LONDON = venue_zone("Europe/London")
BERLIN = venue_zone("Europe/Berlin")
NEW_YORK = venue_zone("America/New_York")
LORD_HOWE = venue_zone("Australia/Lord_Howe")
AUCKLAND = venue_zone("Pacific/Auckland")


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


@pytest.mark.parametrize("name", [None, ""])
def test_no_zone_is_utc(name: str | None) -> None:
    assert venue_zone(name).key == "UTC"


@pytest.mark.parametrize(
    "name", ["Europe/Nowhere", "../etc/passwd", "localtime", "posix/localtime"]
)
def test_unknown_zone_is_a_value_error(name: str) -> None:
    with pytest.raises(ValueError, match="unknown time zone"):
        venue_zone(name)


@pytest.mark.parametrize(
    ("zone", "day", "wall", "expected"),
    [
        # An ordinary summer day in London: BST is UTC+1, so 21:00 BST is 20:00Z.
        pytest.param(LONDON, date(2026, 6, 5), time(21, 0), utc(2026, 6, 5, 20, 0), id="bst"),
        # An ordinary winter day in London: GMT is UTC+0.
        pytest.param(LONDON, date(2026, 1, 9), time(21, 0), utc(2026, 1, 9, 21, 0), id="gmt"),
        # Berlin springs forward on Sunday 29 March 2026 (last Sunday of March; 31 March
        # 2026 is a Tuesday): at 02:00 CET the clocks read 03:00 CEST. 02:30 is skipped and
        # reads the hour after, 03:30 CEST (UTC+2) = 01:30Z.
        pytest.param(BERLIN, date(2026, 3, 29), time(2, 30), utc(2026, 3, 29, 1, 30), id="gap"),
        # The skip's first minute: 02:00 reads 03:00 CEST = 01:00Z.
        pytest.param(BERLIN, date(2026, 3, 29), time(2, 0), utc(2026, 3, 29, 1, 0), id="gap-start"),
        # 03:00 CEST exists (the first minute after the skip): also 01:00Z.
        pytest.param(BERLIN, date(2026, 3, 29), time(3, 0), utc(2026, 3, 29, 1, 0), id="after-gap"),
        # London skips 01:00-02:00 GMT that same morning: 01:30 reads 02:30 BST = 01:30Z.
        pytest.param(LONDON, date(2026, 3, 29), time(1, 30), utc(2026, 3, 29, 1, 30), id="gap-ldn"),
        # New York springs forward on the second Sunday of March: 1 March 2026 is a Sunday,
        # so 8 March. 02:30 reads 03:30 EDT (UTC-4) = 07:30Z.
        pytest.param(NEW_YORK, date(2026, 3, 8), time(2, 30), utc(2026, 3, 8, 7, 30), id="gap-ny"),
        # New York falls back on the first Sunday of November, 1 November 2026: 01:30 comes
        # first in EDT (UTC-4) = 05:30Z, then again in EST (06:30Z). The first stands.
        pytest.param(NEW_YORK, date(2026, 11, 1), time(1, 30), utc(2026, 11, 1, 5, 30), id="fold"),
        # London falls back on Sunday 25 October 2026 (31 October is a Saturday): 01:30 BST
        # (00:30Z) comes before 01:30 GMT (01:30Z).
        pytest.param(
            LONDON, date(2026, 10, 25), time(1, 30), utc(2026, 10, 25, 0, 30), id="fold-ldn"
        ),
        # Lord Howe moves its clocks by half an hour, 02:00 -> 02:30 on the first Sunday of
        # October (1 October 2026 is a Thursday, so the 4th). 02:15 reads the same distance
        # after, 02:45 at UTC+11 = 15:45Z the day before.
        pytest.param(
            LORD_HOWE, date(2026, 10, 4), time(2, 15), utc(2026, 10, 3, 15, 45), id="half-hour-gap"
        ),
        # Auckland's autumn fold, first Sunday of April 2026 (the 5th): 03:00 NZDT -> 02:00
        # NZST. 02:30 first comes in NZDT (UTC+13) = 13:30Z on Saturday the 4th.
        pytest.param(
            AUCKLAND, date(2026, 4, 5), time(2, 30), utc(2026, 4, 4, 13, 30), id="fold-akl"
        ),
    ],
)
def test_wall_time_reads_on_the_venue_clock(
    zone: ZoneInfo, day: date, wall: time, expected: datetime
) -> None:
    at = wall_to_instant(day, wall, zone)
    assert at == expected
    assert at.tzinfo is UTC


def test_wall_time_with_a_zone_of_its_own_is_refused() -> None:
    with pytest.raises(ValueError):
        wall_to_instant(date(2026, 6, 5), time(9, 0, tzinfo=UTC), LONDON)


def test_gap_reading_keeps_the_seconds() -> None:
    # 02:30:15 in Berlin's skipped hour reads 03:30:15 CEST = 01:30:15Z.
    assert wall_to_instant(date(2026, 3, 29), time(2, 30, 15), BERLIN) == utc(
        2026, 3, 29, 1, 30, 15
    )


@pytest.mark.parametrize(
    ("instant", "zone", "expected"),
    [
        # 23:30Z on Thursday 4 June 2026 is 00:30 BST on Friday the 5th.
        pytest.param(utc(2026, 6, 4, 23, 30), LONDON, date(2026, 6, 5), id="london-next-day"),
        # 11:00Z on Friday 5 June is 23:00 NZST (UTC+12) on Friday in Auckland.
        pytest.param(utc(2026, 6, 5, 11, 0), AUCKLAND, date(2026, 6, 5), id="auckland-same-day"),
        # 12:00Z on Friday is 00:00 on Saturday the 6th in Auckland.
        pytest.param(utc(2026, 6, 5, 12, 0), AUCKLAND, date(2026, 6, 6), id="auckland-midnight"),
        # 02:00Z on Saturday 6 June is 22:00 EDT on Friday in New York.
        pytest.param(utc(2026, 6, 6, 2, 0), NEW_YORK, date(2026, 6, 5), id="new-york-day-before"),
        # An instant stored with its own offset: 2026-06-05T00:30+09:00 is 15:30Z on the 4th,
        # 16:30 BST on Thursday in London.
        pytest.param(
            datetime(2026, 6, 5, 0, 30, tzinfo=timezone(timedelta(hours=9))),
            LONDON,
            date(2026, 6, 4),
            id="foreign-offset",
        ),
    ],
)
def test_venue_day_of_an_instant(instant: datetime, zone: ZoneInfo, expected: date) -> None:
    assert venue_day(instant, zone) == expected


def test_venue_day_refuses_a_naive_datetime() -> None:
    with pytest.raises(ValueError):
        venue_day(datetime(2026, 6, 5, 12, 30), LONDON)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("10:00", time(10, 0), id="hh-mm"),
        pytest.param("9:30", time(9, 30), id="h-mm-as-typed"),
        pytest.param("09:30:00", time(9, 30), id="hh-mm-ss-as-kept"),
        pytest.param("23:59:59", time(23, 59, 59), id="last-second"),
        pytest.param("00:00", time(0, 0), id="midnight"),
        pytest.param(time(18, 45), time(18, 45), id="a-time-value"),
        pytest.param("", None, id="empty"),
        pytest.param(None, None, id="null"),
        pytest.param("24:00", None, id="hour-24"),
        pytest.param("12:60", None, id="minute-60"),
        pytest.param("12:30:60", None, id="second-60"),
        pytest.param("9.30", None, id="dot"),
        pytest.param("930", None, id="no-colon"),
        pytest.param("9:3", None, id="one-minute-digit"),
        pytest.param(" 9:30", None, id="leading-space"),
        pytest.param("09:30 ", None, id="trailing-space"),
        pytest.param("9:30pm", None, id="am-pm"),
        pytest.param("１０:００", None, id="full-width-digits"),
        pytest.param("10:00:00.5", None, id="fraction"),
        pytest.param("100:00", None, id="three-hour-digits"),
        pytest.param(930, None, id="a-number"),
        pytest.param(time(9, 30, tzinfo=UTC), None, id="a-time-with-zone"),
    ],
)
def test_kept_wall_time(text: object, expected: time | None) -> None:
    assert parse_wall_time(text) == expected


@pytest.mark.parametrize(
    "name",
    ["Europe/London", "UTC", "Etc/UTC", "America/Argentina/Buenos_Aires", "Antarctica/Troll"],
)
def test_known_zone_reads_an_iana_name(name: str) -> None:
    assert known_zone(name).key == name


@pytest.mark.parametrize(
    "name",
    [
        # The server's own zone, under both names the system gives it.
        pytest.param("localtime", id="localtime"),
        pytest.param("posix/localtime", id="posix-localtime"),
        # Files of the system's zoneinfo folder that are no IANA names.
        pytest.param("posix/Europe/London", id="posix-copy"),
        pytest.param("right/UTC", id="leap-second-copy"),
        pytest.param("posixrules", id="posixrules"),
        # Paths, absolute or climbing out of the zone folder.
        pytest.param("/usr/share/zoneinfo/Europe/London", id="absolute-path"),
        pytest.param("../etc/passwd", id="climbing-path"),
        pytest.param("Europe/./London", id="dotted-path"),
        # IANA names are spelled with their capitals.
        pytest.param("europe/london", id="lower-case"),
        pytest.param("Europe/Nowhere", id="no-such-zone"),
        pytest.param("", id="empty"),
    ],
)
def test_known_zone_refuses_what_is_no_iana_name(name: str) -> None:
    with pytest.raises(UnknownZone, match="unknown time zone"):
        known_zone(name)


def test_an_unknown_zone_is_a_value_error() -> None:
    assert issubclass(UnknownZone, ValueError)


def test_weekday_names_follow_the_calendar() -> None:
    # 1 January 2026 is a Thursday, so 29 June 2026 (179 days on, 25 weeks and 4 days)
    # is a Monday, and 5 July the Sunday that ends that week.
    week = [date(2026, 6, 29) + timedelta(days=n) for n in range(7)]
    assert [WEEKDAYS[day.weekday()] for day in week] == [
        "mon",
        "tue",
        "wed",
        "thu",
        "fri",
        "sat",
        "sun",
    ]


@pytest.mark.parametrize(
    ("instant", "days", "elapsed", "expected"),
    [
        # Sat 28 Mar 2026 12:00 GMT; one day on is Sun 29 Mar 12:00 BST = 11:00Z, 23 hours.
        pytest.param(utc(2026, 3, 28, 12), 1, timedelta(), utc(2026, 3, 29, 11), id="day-23h"),
        # 24 hours over the same night are elapsed time: 12:00Z, which reads 13:00 BST.
        pytest.param(
            utc(2026, 3, 28, 12), None, timedelta(hours=24), utc(2026, 3, 29, 12), id="24-hours"
        ),
        # Sat 24 Oct 12:00 BST (11:00Z); one day on is Sun 25 Oct 12:00 GMT = 12:00Z, 25 hours.
        pytest.param(utc(2026, 10, 24, 11), 1, timedelta(), utc(2026, 10, 25, 12), id="day-25h"),
        # Mon 30 Mar 12:00 BST (11:00Z) back two days: Sat 28 Mar 12:00 GMT = 12:00Z.
        pytest.param(utc(2026, 3, 30, 11), -2, timedelta(), utc(2026, 3, 28, 12), id="back-2d"),
        # Sat 28 Mar 01:30 GMT; Sunday's 01:30 is skipped, read as 02:30 BST = 01:30Z.
        pytest.param(utc(2026, 3, 28, 1, 30), 1, timedelta(), utc(2026, 3, 29, 1, 30), id="gap"),
        # Sat 24 Oct 01:30 BST (00:30Z); Sunday's 01:30 comes twice, the first is BST: 00:30Z.
        pytest.param(utc(2026, 10, 24, 0, 30), 1, timedelta(), utc(2026, 10, 25, 0, 30), id="fold"),
        # Days first, then elapsed time: Sun 29 Mar 12:00 BST (11:00Z) and 30 minutes.
        pytest.param(
            utc(2026, 3, 28, 12), 1, timedelta(minutes=30), utc(2026, 3, 29, 11, 30), id="both"
        ),
        # The second 01:30 of Sun 25 Oct (01:30 GMT = 01:30Z): zero days is the same wall
        # time, read as the first pass, 01:30 BST = 00:30Z; no days leaves the instant alone.
        pytest.param(utc(2026, 10, 25, 1, 30), 0, timedelta(), utc(2026, 10, 25, 0, 30), id="0d"),
        pytest.param(
            utc(2026, 10, 25, 1, 30), None, timedelta(), utc(2026, 10, 25, 1, 30), id="no-days"
        ),
    ],
)
def test_shift_days_on_the_wall_clock_and_the_rest_in_utc(
    instant: datetime, days: int | None, elapsed: timedelta, expected: datetime
) -> None:
    moved = shift_instant(instant, LONDON, days=days, elapsed=elapsed)
    assert moved == expected
    assert moved.tzinfo is UTC
