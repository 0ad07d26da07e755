"""A reminder's send time and lead, on the venue's clock (London), worked by hand."""

from __future__ import annotations

from datetime import UTC, datetime, time
from zoneinfo import ZoneInfo

import pytest

from core.manifest.outbox_model import Lead
from core.outbox.reminders import lead_hours, send_time

LONDON = ZoneInfo("Europe/London")


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


# Saturday 13 June 2026, 20:00 BST (UTC+1) is 19:00 UTC.
SATURDAY_PICKUP = utc("2026-06-13 19:00")
# Sunday 25 October 2026, 20:00 GMT: London's clocks went back at 02:00 BST that morning,
# so 20:00 is UTC+0 and the Saturday before is still BST (UTC+1).
AUTUMN_PICKUP = utc("2026-10-25 20:00")
# Sunday 29 March 2026, 20:00 BST: the clocks went forward at 01:00 GMT that morning, so
# 01:00-02:00 does not exist on the wall.
SPRING_PICKUP = utc("2026-03-29 19:00")

CASES = {
    # The spec's table. 24 h before Saturday 20:00 reaches Friday 20:00 BST: at 09:00 BST
    # on Friday, 08:00 UTC.
    "spec_24h_at_nine_goes_friday": (SATURDAY_PICKUP, 24, time(9), utc("2026-06-12 08:00")),
    # 3 h reaches Saturday 17:00: the day is Saturday, so 09:00 BST Saturday.
    "spec_3h_at_nine_goes_saturday": (SATURDAY_PICKUP, 3, time(9), utc("2026-06-13 08:00")),
    # Without `at`: the hour itself, 17:00 BST = 16:00 UTC.
    "spec_3h_without_at_goes_at_five": (SATURDAY_PICKUP, 3, None, utc("2026-06-13 16:00")),
    # Across the autumn change: 24 elapsed hours before Sunday 20:00 GMT is Saturday
    # 20:00 UTC, 21:00 BST on the wall (the day between had 25 hours); its day is
    # Saturday, so 09:00 BST Saturday = 08:00 UTC.
    "autumn_24h_at_nine_goes_saturday_bst": (AUTUMN_PICKUP, 24, time(9), utc("2026-10-24 08:00")),
    "autumn_24h_without_at_is_elapsed": (AUTUMN_PICKUP, 24, None, utc("2026-10-24 20:00")),
    # 3 h reaches Sunday 17:00 GMT: 09:00 GMT Sunday = 09:00 UTC (the offset after the change).
    "autumn_3h_at_nine_reads_gmt": (AUTUMN_PICKUP, 3, time(9), utc("2026-10-25 09:00")),
    # A wall time in the spring gap reads the hour after: 01:30 -> 02:30 BST = 01:30 UTC.
    "spring_gap_reads_the_hour_after": (SPRING_PICKUP, 3, time(1, 30), utc("2026-03-29 01:30")),
}


@pytest.mark.parametrize(("moment", "hours", "at", "expected"), CASES.values(), ids=CASES.keys())
def test_send_time(moment: datetime, hours: int, at: time | None, expected: datetime) -> None:
    assert send_time(moment, hours, at, LONDON) == expected


def test_a_wall_time_later_than_the_moment_sends_after_it() -> None:
    # 3 h before Saturday 20:00 BST at 21:00 is Saturday 21:00 BST: after the moment, so
    # the minute job, which queues only while the moment is ahead, never sends it.
    assert send_time(SATURDAY_PICKUP, 3, time(21), LONDON) == utc("2026-06-13 20:00")
    assert send_time(SATURDAY_PICKUP, 3, time(21), LONDON) > SATURDAY_PICKUP


LEAD = Lead.model_validate({"table": "settings", "column": "reminder_hours", "max": 48})

LEADS = {
    "linked_value_first": (5, 24, 5),
    "fallback_when_linked_is_empty": (None, 24, 24),
    "never_more_than_max": (72, 24, 48),
    "no_lead_no_reminder": (None, None, None),
    "a_boolean_is_no_number": (True, None, None),
}


@pytest.mark.parametrize(("linked", "fallback", "expected"), LEADS.values(), ids=LEADS.keys())
def test_lead_hours(linked: object, fallback: object, expected: int | None) -> None:
    assert lead_hours(LEAD, linked, fallback) == expected
