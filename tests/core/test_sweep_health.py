"""A stall is said a minute after the first sweep that did not come, not two and a half
minutes after the last sweep."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.sweep.health import stalled_minutes

# The last sweep started at 12:00:03; the one due at 12:01 never came.
LAST = datetime(2026, 5, 4, 12, 0, 3, tzinfo=UTC)


def test_no_stall_while_the_next_sweep_may_still_be_waiting_in_the_queue() -> None:
    assert stalled_minutes(LAST, LAST + timedelta(seconds=59)) is None  # 12:01:02
    # 12:02:03: the 12:01 sweep has had its minute in the queue.
    assert stalled_minutes(LAST, datetime(2026, 5, 4, 12, 2, 3, tzinfo=UTC)) is None


def test_a_stall_is_said_a_minute_after_the_first_sweep_that_did_not_come() -> None:
    # 12:02:04 is 64 s after 12:01, the minute of the first sweep that did not come.
    assert stalled_minutes(LAST, datetime(2026, 5, 4, 12, 2, 4, tzinfo=UTC)) == 2
    assert stalled_minutes(LAST, datetime(2026, 5, 4, 12, 5, 4, tzinfo=UTC)) == 5
    assert stalled_minutes(None, LAST) is None  # no sweep yet: nothing says one was due
