"""The moment's reading in words, worked on the calendar of July 2026 in London (BST)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from core.manifest.model import Moment
from core.time.moments import MomentContext
from core.time.words import explain_moment, why_no_time

LONDON = ZoneInfo("Europe/London")
HOURS = {
    "table": "opening_hours",
    "weekday": "weekday",
    "open": "open",
    "opens": "opens",
    "closes": "closes",
}
TABLES: dict[str, Any] = {
    "opening_hours": [
        {"weekday": d, "open": True, "opens": "11:00", "closes": "21:00"}
        for d in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
    ],
    "settings": [{"no_show_at": "10:00", "offer_hours": 48}],
}


def words(moment: dict[str, Any], row: dict[str, Any]) -> str:
    ctx = MomentContext(row=row, zone=LONDON, tables=TABLES)
    return explain_moment(Moment.model_validate(moment), ctx)


@pytest.mark.parametrize(
    ("moment", "row", "expected"),
    [
        pytest.param(
            # Fri 10 July 12:30 BST pickup: Friday closes 21:00.
            {"column": "pickup_at", "time": {"hours": HOURS, "edge": "closes"}},
            {"pickup_at": datetime(2026, 7, 10, 11, 30, tzinfo=UTC)},
            "closing hour on Friday (opening hours) → Fri 21:00",
            id="closing_hour",
        ),
        pytest.param(
            # Arrival Sat 11 July: no-show at 10:00 the day after, Sun 12 July.
            {
                "column": "arrive",
                "time": {"table": "settings", "column": "no_show_at"},
                "plus": {"days": 1},
            },
            {"arrive": date(2026, 7, 11)},
            "no_show_at setting 10:00 on Saturday, plus 1 day → Sun 10:00",
            id="setting_plus_a_day",
        ),
        pytest.param(
            # No offer_until: valid_to Mon 13 July 14:00 BST less 48 h = Sat 11 July 14:00.
            {
                "column": "offer_until",
                "or": [
                    {
                        "column": "valid_to",
                        "minus": {"hours": {"table": "settings", "column": "offer_hours"}},
                    }
                ],
            },
            {"offer_until": None, "valid_to": datetime(2026, 7, 13, 13, tzinfo=UTC)},
            "offer_until, empty → fallback 1: valid_to less offer_hours (48 h) → Sat 14:00",
            id="fallback",
        ),
    ],
)
def test_reading_in_words(moment: dict[str, Any], row: dict[str, Any], expected: str) -> None:
    assert words(moment, row) == expected


def test_no_time_says_which_column_is_empty() -> None:
    ctx = MomentContext(row={"offer_until": None}, zone=LONDON, tables=TABLES)
    assert why_no_time(Moment.model_validate({"column": "offer_until"}), ctx) == (
        "offer_until is empty"
    )
