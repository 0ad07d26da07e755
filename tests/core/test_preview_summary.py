"""The preview's summary line counts in words that agree: `1 row`, `2 rows`, `1 moment`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

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
