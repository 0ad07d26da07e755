"""What a due row is told, by the connection's clock, worked on the calendar of July 2026 in
London (BST, UTC+1): "due 7 h ago: waiting for the clock (stalled since 06:09)"."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from core.time.words import aside_words, overdue_words, span_words

LONDON = ZoneInfo("Europe/London")
# Due Mon 13 July 23:00 BST = 22:00 UTC; now Tue 14 July 05:05 UTC = 06:05 BST, 7 h 5 min
# later; the last sweep ran at 04:09 UTC = 05:09 BST.
DUE = datetime(2026, 7, 13, 22, 0, tzinfo=UTC)
NOW = datetime(2026, 7, 14, 5, 5, tzinfo=UTC)
LAST_SWEEP = datetime(2026, 7, 14, 4, 9, tzinfo=UTC)


@pytest.mark.parametrize(
    ("clock", "words"),
    [
        ("running", "due 7 h 5 min ago: moves at the next minute"),
        ("stalled", "due 7 h 5 min ago: waiting for the clock (stalled since 05:09)"),
        ("paused", "due 7 h 5 min ago: waiting: the connection is paused"),
        ("redis", "due 7 h 5 min ago: waiting for the clock (Redis does not answer)"),
    ],
)
def test_an_overdue_row_says_what_its_clock_does(clock: str, words: str) -> None:
    assert overdue_words(DUE, NOW, LONDON, clock, LAST_SWEEP) == words


def test_a_row_due_this_minute_moves_at_the_next_one() -> None:
    assert overdue_words(DUE, DUE + timedelta(seconds=40), LONDON) == "moves at the next minute"


def test_a_set_aside_row_says_until_when_on_the_venues_clock_and_why() -> None:
    until = datetime(2026, 7, 14, 6, 7, tzinfo=UTC)
    assert aside_words(until, LONDON, "the database refused the value") == (
        "set aside until 07:07: the database refused the value"
    )
    # To the minute, as every time on the screens (it read "07:07:30" before issue 35).
    assert aside_words(until + timedelta(seconds=30), LONDON) == "set aside until 07:07"


def test_spans_keep_their_two_largest_units_rounded_down() -> None:
    assert span_words(timedelta(days=2, hours=3, minutes=59, seconds=59)) == "2 d 3 h"
    assert span_words(timedelta(days=1, minutes=5)) == "1 d 5 min"
    assert span_words(timedelta(seconds=59)) == ""
