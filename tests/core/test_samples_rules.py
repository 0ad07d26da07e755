"""Sample forms read the manifest's settings table and the hours table's closed-day rule.

Europe/London is BST (UTC+1) in July 2026. 1 July 2026 is a Wednesday, so Saturday is
4 July and Monday 6 July.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from core.manifest.model import App, load_app
from core.samples.files import Context, resolve_row, resolve_value

ROOT = Path(__file__).resolve().parents[2]
LONDON = ZoneInfo("Europe/London")
WEEK = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
SLOT = {"@in": "PT20M", "@slot": "orders"}


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def example(name: str, settings_table: str = "settings") -> App:
    """An example app, its settings table renamed when asked."""
    text = (ROOT / "examples" / f"{name}.json").read_text()
    data = json.loads(text.replace('"table": "settings"', f'"table": "{settings_table}"'))
    data["tables"][settings_table] = data["tables"].pop("settings")
    return load_app(data)


def day(weekday: str, opens: str = "11:00", closes: str = "22:00") -> dict[str, Any]:
    return {"weekday": weekday, "open": True, "opens": opens, "closes": closes}


def arrival_state(app: App, tables: dict[str, Any]) -> str:
    # Arrives today; 14:30Z is 15:30 BST.
    ctx = Context(app=app, now=utc(2026, 7, 1, 14, 30), zone=LONDON, tables=tables)
    row = {"arrive": date(2026, 7, 1), "nights": 1, "status": {"@byStay": {}}}
    return str(resolve_row("stays", row, ctx)[1]["status"])


def test_by_stay_reads_the_settings_table_the_manifest_names() -> None:
    # The app keeps arrive_from in "venue": from 16:00 BST, so 15:30 BST is before it.
    hotel = example("hotel", "venue")
    assert arrival_state(hotel, {"venue": [{"arrive_from": "16:00"}]}) == "booked"


def test_by_stay_leaves_a_table_the_manifest_does_not_name() -> None:
    # "settings" is no settings table of this app: 15:00 stands, and 15:30 BST is after it.
    hotel = example("hotel", "venue")
    assert arrival_state(hotel, {"settings": [{"arrive_from": "16:00"}]}) == "checked_in"


def test_slot_minutes_come_from_the_settings_table_the_manifest_names() -> None:
    # 20-minute slots from 11:00: 13:00 BST + 20 min = 13:20, a slot start = 12:20Z.
    # With 15-minute slots it would be 13:30 BST.
    takeaway = example("takeaway", "venue")
    tables = {"venue": [{"slot_minutes": 20}], "opening_hours": [day(d) for d in WEEK]}
    ctx = Context(app=takeaway, now=utc(2026, 7, 1, 12), zone=LONDON, tables=tables)
    assert resolve_value(SLOT, ctx) == utc(2026, 7, 1, 12, 20)


@pytest.mark.parametrize(
    "sundays",
    [
        pytest.param([], id="no-row"),
        pytest.param([{**day("sun"), "open": False}], id="marked-closed"),
        # Two rows for Sunday say two things: neither is read.
        pytest.param([day("sun"), day("sun", "12:00")], id="two-rows"),
    ],
)
def test_slot_skips_a_sunday_that_does_not_open(sundays: list[dict[str, Any]]) -> None:
    # Sat 4 Jul 21:50 BST + 20 min = 22:10, after closing; Sunday gives no slot, so the
    # pickup is Mon 6 Jul 11:00 BST = 10:00Z.
    takeaway = example("takeaway")
    hours = [day(d) for d in WEEK if d != "sun"] + sundays
    tables = {"settings": [{"slot_minutes": 15}], "opening_hours": hours}
    ctx = Context(app=takeaway, now=utc(2026, 7, 4, 20, 50), zone=LONDON, tables=tables)
    assert resolve_value(SLOT, ctx) == utc(2026, 7, 6, 10)
