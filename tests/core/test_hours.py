"""The weekly opening-hours table: opening and closing edges on the venue's clock."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest

from core.manifest.refs import HoursRef
from core.time.clock import venue_zone
from core.time.hours import hours_edge

LONDON = venue_zone("Europe/London")
SANTIAGO = venue_zone("America/Santiago")
REF = HoursRef(
    table="opening_hours", weekday="weekday", open="open", opens="opens", closes="closes"
)
NO_OPEN_COLUMN = HoursRef(table="opening_hours", weekday="weekday", opens="opens", closes="closes")

# June 2026: the 1st is a Monday, so Friday is the 5th, Saturday the 6th, Monday the 8th.
# London is on BST (UTC+1) all month.
FRIDAY = date(2026, 6, 5)
MONDAY = date(2026, 6, 8)


def day(weekday: str, opens: str | None, closes: str | None, is_open: Any = True) -> dict[str, Any]:
    return {"weekday": weekday, "open": is_open, "opens": opens, "closes": closes}


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


WEEK = [
    day("mon", "11:00", "21:00", is_open=False),
    day("tue", "11:00", "21:00"),
    day("fri", "11:00", "21:00"),
    day("sat", "18:00", "02:00"),
    day("sun", "12:00", "12:00"),
]


@pytest.mark.parametrize(
    ("on", "edge", "expected"),
    [
        # Friday 11:00-21:00 BST: 10:00Z and 20:00Z.
        pytest.param(FRIDAY, "opens", utc(2026, 6, 5, 10, 0), id="friday-opens"),
        pytest.param(FRIDAY, "closes", utc(2026, 6, 5, 20, 0), id="friday-closes"),
        # A closed Monday ends at midnight: both edges read 00:00 BST on Tuesday the 9th,
        # 23:00Z on Monday the 8th.
        pytest.param(MONDAY, "opens", utc(2026, 6, 8, 23, 0), id="closed-monday-opens"),
        pytest.param(MONDAY, "closes", utc(2026, 6, 8, 23, 0), id="closed-monday-closes"),
        # Wednesday the 10th has no row: it ends at midnight, 00:00 BST on the 11th = 23:00Z.
        pytest.param(date(2026, 6, 10), "closes", utc(2026, 6, 10, 23, 0), id="no-row-closes"),
        pytest.param(date(2026, 6, 10), "opens", utc(2026, 6, 10, 23, 0), id="no-row-opens"),
        # Saturday 18:00-02:00: the closing is before the opening, so it is 02:00 BST on
        # Sunday the 7th = 01:00Z. The opening stays on Saturday, 17:00Z.
        pytest.param(date(2026, 6, 6), "closes", utc(2026, 6, 7, 1, 0), id="past-midnight"),
        pytest.param(date(2026, 6, 6), "opens", utc(2026, 6, 6, 17, 0), id="late-opening"),
        # Sunday 12:00-12:00: a closing AT the opening is the next day's 12:00 BST, Monday
        # the 8th at 11:00Z.
        pytest.param(date(2026, 6, 7), "closes", utc(2026, 6, 8, 11, 0), id="closing-at-opening"),
    ],
)
def test_hours_edge_in_a_summer_week(on: date, edge: str, expected: datetime) -> None:
    assert hours_edge(WEEK, REF, on, edge, LONDON) == expected


def test_two_rows_for_one_weekday_say_nothing() -> None:
    rows = [day("fri", "11:00", "21:00"), day("fri", "12:00", "22:00")]
    assert hours_edge(rows, REF, FRIDAY, "closes", LONDON) is None
    assert hours_edge(rows, REF, FRIDAY, "opens", LONDON) is None


def test_two_rows_for_another_weekday_leave_friday_alone() -> None:
    rows = [day("fri", "11:00", "21:00"), day("mon", "1:00", "2:00"), day("mon", "3:00", "4:00")]
    # Friday 21:00 BST = 20:00Z.
    assert hours_edge(rows, REF, FRIDAY, "closes", LONDON) == utc(2026, 6, 5, 20, 0)


def test_table_without_an_open_column_reads_its_times() -> None:
    rows = [{"weekday": "fri", "opens": "9:00", "closes": "17:30:00"}]
    # 17:30 BST = 16:30Z; the kept forms H:MM and HH:MM:SS are read as on the row.
    assert hours_edge(rows, NO_OPEN_COLUMN, FRIDAY, "closes", LONDON) == utc(2026, 6, 5, 16, 30)


@pytest.mark.parametrize("is_open", [True, None], ids=["open-yes", "open-null"])
def test_only_a_no_closes_the_day(is_open: Any) -> None:
    rows = [day("fri", "11:00", "21:00", is_open=is_open)]
    assert hours_edge(rows, REF, FRIDAY, "closes", LONDON) == utc(2026, 6, 5, 20, 0)


@pytest.mark.parametrize(
    ("opens", "closes", "edge"),
    [
        pytest.param("", "21:00", "opens", id="empty-opening"),
        pytest.param(None, "21:00", "closes", id="no-opening-so-no-closing-day"),
        pytest.param("11:00", "9pm", "closes", id="unreadable-closing"),
    ],
)
def test_open_day_with_unreadable_times_has_no_value(opens: Any, closes: Any, edge: str) -> None:
    assert hours_edge([day("fri", opens, closes)], REF, FRIDAY, edge, LONDON) is None


def test_closed_day_before_the_clocks_go_back() -> None:
    # Saturday 24 October 2026 closed in London: it ends at 00:00 BST on Sunday the 25th
    # (the clocks go back later that night, at 02:00 BST), = 23:00Z on the 24th.
    rows = [day("sat", "11:00", "21:00", is_open=False)]
    assert hours_edge(rows, REF, date(2026, 10, 24), "closes", LONDON) == utc(2026, 10, 24, 23, 0)


def test_closed_day_whose_midnight_is_skipped() -> None:
    # Chile springs forward at 24:00 on the first Saturday of September: 1 September 2026
    # is a Tuesday, so Saturday the 5th. Midnight ending it is skipped (00:00 -04 becomes
    # 01:00 -03) and reads the hour after: 01:00 -03 on Sunday the 6th = 04:00Z.
    rows = [day("sat", "11:00", "21:00", is_open=False)]
    assert hours_edge(rows, REF, date(2026, 9, 5), "closes", SANTIAGO) == utc(2026, 9, 6, 4, 0)


def test_an_edge_is_opens_or_closes() -> None:
    with pytest.raises(ValueError):
        hours_edge(WEEK, REF, FRIDAY, "lunch", LONDON)
