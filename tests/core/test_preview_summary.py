"""The preview's summary line counts in words that agree: `1 row`, `2 rows`, `1 moment`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from core.preview.changes import Changed
from core.preview.preview import HORIZON, Preview

NOW = datetime(2026, 7, 10, 9, tzinfo=UTC)
HOUR = timedelta(hours=1)


def change(kind: str, old: datetime | None, new: datetime | None, key: str = "1") -> Changed:
    return Changed(kind, "venue", "orders", key, "placed → cancelled", old, new)


def test_one_of_each_is_said_in_the_singular() -> None:
    preview = Preview(
        NOW,
        HORIZON,
        [
            change("timed", NOW + HOUR, NOW - HOUR),  # due at once
            change("timed", NOW + HOUR, NOW + 2 * HOUR, "2"),  # later
            change("reminder", NOW + HOUR, NOW - HOUR, "3"),  # sent at once
        ],
    )
    assert preview.summary() == (
        "1 row due at once, 1 moment later, 0 earlier; 1 reminder sent at once, 0 no longer sent"
    )


def test_none_and_many_are_said_in_the_plural() -> None:
    preview = Preview(
        NOW,
        HORIZON,
        [change("timed", NOW + HOUR, NOW - HOUR, str(k)) for k in range(12)]
        + [change("timed", NOW + HOUR, NOW + 3 * HOUR, f"l{k}") for k in range(2)],
    )
    assert preview.summary() == "12 rows due at once, 2 moments later, 0 earlier"
    assert Preview(NOW, HORIZON).summary() == "0 rows due at once, 0 moments later, 0 earlier"


LONDON = ZoneInfo("Europe/London")


def test_with_the_zone_it_says_how_far_ahead_it_read() -> None:
    # Sun 28 Mar 2021 09:30Z is 10:30 BST (the clocks went forward at 01:00Z); 192 hours
    # on, Mon 5 Apr 09:30Z, is 10:30 BST too.
    now = datetime(2021, 3, 28, 9, 30, tzinfo=UTC)
    preview = Preview(now, HORIZON, [change("timed", now + HOUR, now - 2 * HOUR)])
    assert preview.summary(LONDON) == (
        "1 row due at once, 0 moments later, 0 earlier (read to Mon 5 Apr 10:30, 8 days)"
    )
    assert preview.reach() == datetime(2021, 4, 5, 9, 30, tzinfo=UTC)


def test_the_horizon_is_elapsed_hours_so_its_wall_time_moves_with_the_clocks() -> None:
    # Sat 27 Mar 2021 10:30Z is 10:30 GMT; 192 hours on, Sun 4 Apr 10:30Z, is 11:30 BST.
    now = datetime(2021, 3, 27, 10, 30, tzinfo=UTC)
    assert Preview(now, HORIZON).horizon_words(LONDON) == "read to Sun 4 Apr 11:30, 8 days"
    assert Preview(now, timedelta(days=1)).horizon_words(LONDON) == (
        "read to Sun 28 Mar 11:30, 1 day"
    )
    assert Preview(now, timedelta(hours=36)).horizon_words(LONDON) == (
        "read to Sun 28 Mar 23:30, 36 hours"
    )
