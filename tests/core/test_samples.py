"""Sample forms land at the right time on the venue's clock (Europe/London, DST dates included).

Europe/London: GMT (UTC+0) in winter, BST (UTC+1) in summer. In 2026 the clocks go
forward on Sunday 29 March at 01:00 UTC (01:00 GMT -> 02:00 BST) and back on Sunday
25 October at 01:00 UTC (02:00 BST -> 01:00 GMT).
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from core.manifest.model import load_app
from core.samples.files import (
    Context,
    SampleRefused,
    load_sample,
    parse_duration,
    read_sample,
    resolve_row,
    resolve_value,
)

ROOT = Path(__file__).resolve().parents[2]
LONDON = ZoneInfo("Europe/London")
TAKEAWAY = load_app(json.loads((ROOT / "examples" / "takeaway.json").read_text()))
HOTEL = load_app(json.loads((ROOT / "examples" / "hotel.json").read_text()))
WEEK = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def hours(opens: str = "11:00", closes: str = "22:00", closed: tuple[str, ...] = ()) -> list[Any]:
    return [{"weekday": d, "open": d not in closed, "opens": opens, "closes": closes} for d in WEEK]


def takeaway(now: datetime, **tables: Any) -> Context:
    tables.setdefault("settings", [{"slot_minutes": 15}])
    tables.setdefault("opening_hours", hours())
    return Context(app=TAKEAWAY, now=now, zone=LONDON, tables=tables)


@pytest.mark.parametrize(
    ("now", "duration", "expected"),
    [
        # 12:00 UTC plus 20 elapsed minutes.
        pytest.param(utc(2026, 7, 1, 12), "PT20M", utc(2026, 7, 1, 12, 20), id="minutes"),
        # Sat 28 Mar 12:00 GMT; a day on the wall clock is Sun 29 Mar 12:00 BST = 11:00 UTC,
        # only 23 elapsed hours later.
        pytest.param(utc(2026, 3, 28, 12), "P1D", utc(2026, 3, 29, 11), id="day-over-spring"),
        # 24 elapsed hours over the same night: 29 Mar 12:00 UTC (13:00 BST).
        pytest.param(utc(2026, 3, 28, 12), "PT24H", utc(2026, 3, 29, 12), id="hours-over-spring"),
        # 00:30 GMT plus one hour is 01:30 UTC, which the clock shows as 02:30 BST.
        pytest.param(utc(2026, 3, 29, 0, 30), "PT1H", utc(2026, 3, 29, 1, 30), id="hour-in-jump"),
        # Sat 28 Mar 01:30 GMT; next day's 01:30 is skipped, read as 02:30 BST = 01:30 UTC.
        pytest.param(utc(2026, 3, 28, 1, 30), "P1D", utc(2026, 3, 29, 1, 30), id="day-into-gap"),
        # Sat 24 Oct 01:30 BST (00:30 UTC); Sun 25 Oct 01:30 comes twice: the first is BST.
        pytest.param(utc(2026, 10, 24, 0, 30), "P1D", utc(2026, 10, 25, 0, 30), id="day-into-fold"),
        # Sat 24 Oct 12:00 BST (11:00 UTC); Sun 25 Oct 12:00 GMT = 12:00 UTC, 25 hours on.
        pytest.param(utc(2026, 10, 24, 11), "P1D", utc(2026, 10, 25, 12), id="day-over-autumn"),
        # Mon 30 Mar 12:00 BST (11:00 UTC) back two wall days: Sat 28 Mar 12:00 GMT.
        pytest.param(utc(2026, 3, 30, 11), "-P2D", utc(2026, 3, 28, 12), id="back-over-spring"),
        # A week and a half hour: 8 Jul 12:30 UTC, both dates in BST.
        pytest.param(utc(2026, 7, 1, 12), "P1WT30M", utc(2026, 7, 8, 12, 30), id="week"),
    ],
)
def test_in_lands_on_the_venue_clock(now: datetime, duration: str, expected: datetime) -> None:
    assert resolve_value({"@in": duration}, takeaway(now)) == expected


@pytest.mark.parametrize(
    ("now", "ahead", "tables", "expected"),
    [
        # Wed 1 Jul 13:00 BST + 20 min = 13:20; slots every 15 min from 11:00: 13:30 BST.
        pytest.param(utc(2026, 7, 1, 12), "PT20M", {}, utc(2026, 7, 1, 12, 30), id="next-slot"),
        # 13:10 BST + 20 min = 13:30, a slot start itself.
        pytest.param(utc(2026, 7, 1, 12, 10), "PT20M", {}, utc(2026, 7, 1, 12, 30), id="on-slot"),
        # 07:00 BST + 20 min is before opening: the first slot, 11:00 BST = 10:00 UTC.
        pytest.param(utc(2026, 7, 1, 6), "PT20M", {}, utc(2026, 7, 1, 10), id="before-opening"),
        # 21:20 BST + 20 min = 21:40: the last slot 21:45-22:00 still ends by closing.
        pytest.param(utc(2026, 7, 1, 20, 20), "PT20M", {}, utc(2026, 7, 1, 20, 45), id="last-slot"),
        # 21:50 BST + 20 min = 22:10, after the last slot: Thu 2 Jul 11:00 BST.
        pytest.param(utc(2026, 7, 1, 20, 50), "PT20M", {}, utc(2026, 7, 2, 10), id="after-closing"),
        # Sat 24 Oct 21:50 BST: Sunday's first slot is 11:00 GMT = 11:00 UTC (not 10:00).
        pytest.param(utc(2026, 10, 24, 20, 50), "PT20M", {}, utc(2026, 10, 25, 11), id="over-fold"),
        # Sat 28 Mar 21:50 GMT: Sunday's first slot is 11:00 BST = 10:00 UTC (not 11:00).
        pytest.param(utc(2026, 3, 28, 21, 50), "PT20M", {}, utc(2026, 3, 29, 10), id="over-gap"),
        # Sat 4 Jul 21:50 BST with Sundays closed: Mon 6 Jul 11:00 BST.
        pytest.param(
            utc(2026, 7, 4, 20, 50),
            "PT20M",
            {"opening_hours": hours(closed=("sun",))},
            utc(2026, 7, 6, 10),
            id="closed-day",
        ),
        # 20-minute slots: 13:00 BST + 25 min = 13:25; slots 13:20, 13:40: 13:40 BST.
        pytest.param(
            utc(2026, 7, 1, 12),
            "PT25M",
            {"settings": [{"slot_minutes": 20}]},
            utc(2026, 7, 1, 12, 40),
            id="slot-minutes-setting",
        ),
        # No slot_minutes: 15 minutes. 13:00 BST + 25 min = 13:25 -> 13:30 BST.
        pytest.param(
            utc(2026, 7, 1, 12),
            "PT25M",
            {"settings": [{}]},
            utc(2026, 7, 1, 12, 30),
            id="slot-default-15",
        ),
        # Open Sat 20:00 BST (19:00 UTC) to Sun 03:00 GMT (03:00 UTC), an 8-hour night.
        # Sat 23:50 BST + 1 h = 23:50 UTC; slots run every 15 elapsed minutes from
        # 19:00 UTC, so the next is 00:00 UTC = 01:00 BST, the first of Sunday's two 01:00s.
        pytest.param(
            utc(2026, 10, 24, 22, 50),
            "PT1H",
            {"opening_hours": hours("20:00", "03:00")},
            utc(2026, 10, 25, 0, 0),
            id="overnight-over-fold",
        ),
    ],
)
def test_slot_is_the_next_open_slot(
    now: datetime, ahead: str, tables: dict[str, Any], expected: datetime
) -> None:
    value = {"@in": ahead, "@slot": "orders"}
    assert resolve_value(value, takeaway(now, **tables)) == expected


def stay(now: datetime, arrive: date, nights: int, settings: dict[str, Any], **opts: Any) -> str:
    ctx = Context(app=HOTEL, now=now, zone=LONDON, tables={"settings": [settings]})
    row = {"arrive": arrive, "nights": nights, "status": {"@byStay": opts}}
    return str(resolve_row("stays", row, ctx)[1]["status"])


@pytest.mark.parametrize(
    ("now", "arrive", "nights", "settings", "opts", "expected"),
    [
        # Arrives tomorrow.
        (utc(2026, 7, 1, 12), date(2026, 7, 2), 2, {"arrive_from": "15:00"}, {}, "booked"),
        # Arrives today from 15:00 BST = 14:00 UTC: a minute before, booked; at it, in house.
        (utc(2026, 7, 1, 13, 59), date(2026, 7, 1), 2, {"arrive_from": "15:00"}, {}, "booked"),
        (utc(2026, 7, 1, 14), date(2026, 7, 1), 2, {"arrive_from": "15:00"}, {}, "checked_in"),
        # Arrival from the settings row: 16:00 BST = 15:00 UTC, so 14:30 UTC is before it.
        (utc(2026, 7, 1, 14, 30), date(2026, 7, 1), 1, {"arrive_from": "16:00"}, {}, "booked"),
        # No setting: 15:00; the option `from` wins over it.
        (utc(2026, 7, 1, 13, 30), date(2026, 7, 1), 1, {}, {}, "booked"),
        (utc(2026, 7, 1, 13, 30), date(2026, 7, 1), 1, {}, {"from": "14:00"}, "checked_in"),
        # Two nights from 29 Jun leave 1 Jul by 11:00 BST = 10:00 UTC.
        (utc(2026, 7, 1, 9, 59), date(2026, 6, 29), 2, {"arrive_from": "15:00"}, {}, "checked_in"),
        (utc(2026, 7, 1, 10), date(2026, 6, 29), 2, {"arrive_from": "15:00"}, {}, "checked_out"),
        # Over the fold: one night from Sat 24 Oct leaves Sun 25 Oct 11:00 GMT = 11:00 UTC,
        # so 10:30 UTC is still in house (24 hours after a BST arrival would say gone).
        (
            utc(2026, 10, 25, 10, 30),
            date(2026, 10, 24),
            1,
            {"arrive_from": "15:00"},
            {},
            "checked_in",
        ),
        # Departure wall time as an option: leaving by 12:00 GMT = 12:00 UTC.
        (
            utc(2026, 10, 25, 11, 30),
            date(2026, 10, 24),
            1,
            {"arrive_from": "15:00"},
            {"until": "12:00"},
            "checked_in",
        ),
    ],
)
def test_by_stay_gives_the_state_of_the_clock(
    now: datetime,
    arrive: date,
    nights: int,
    settings: dict[str, Any],
    opts: dict[str, Any],
    expected: str,
) -> None:
    assert stay(now, arrive, nights, settings, **opts) == expected


def test_in_on_a_date_column_is_the_venue_day() -> None:
    # Wed 1 Jul 00:30 BST is still 30 Jun in UTC; the stay arrives on the venue's 1 Jul.
    ctx = Context(app=HOTEL, now=utc(2026, 6, 30, 23, 30), zone=LONDON)
    row = {"arrive": {"@in": "P0D"}, "nights": 1}
    assert resolve_row("stays", row, ctx)[1]["arrive"] == date(2026, 7, 1)


def test_by_stay_reads_the_resolved_arrival() -> None:
    # Arrived yesterday (30 Jun) for 3 nights; at 13:00 BST on 1 Jul the guest is in house.
    ctx = Context(app=HOTEL, now=utc(2026, 7, 1, 12), zone=LONDON, tables={"settings": [{}]})
    row = {"arrive": {"@in": "-P1D"}, "nights": 3, "status": {"@byStay": {}}}
    label, values = resolve_row("stays", {"@as": "lena", **row}, ctx)
    assert (label, values) == (
        "lena",
        {"arrive": date(2026, 6, 30), "nights": 3, "status": "checked_in"},
    )


def test_row_refers_to_an_earlier_label() -> None:
    ctx = Context(app=HOTEL, now=utc(2026, 7, 1), zone=LONDON, labels={"r101": 7})
    assert resolve_row("stays", {"room_id": {"@row": "r101"}}, ctx) == (None, {"room_id": 7})


@pytest.mark.parametrize(
    ("table", "row"),
    [
        pytest.param("orders", {"pickup_at": {"@in": "20M"}}, id="duration-without-P"),
        pytest.param("orders", {"pickup_at": {"@in": "PT"}}, id="empty-duration"),
        pytest.param("orders", {"pickup_at": {"@in": "P1M"}}, id="months-not-taken"),
        pytest.param("orders", {"pickup_at": {"@in": "PT5M", "@at": "x"}}, id="unknown-beside-in"),
        pytest.param("orders", {"customer_id": {"@row": "nobody"}}, id="unknown-label"),
        pytest.param("customers", {"email": {"@byStay": {}}}, id="by-stay-needs-a-stay"),
        pytest.param("customers", {"x": {"@in": "PT1M", "@slot": "customers"}}, id="slot-no-hours"),
        pytest.param("dishes", {"name": "soup"}, id="unknown-table"),
    ],
)
def test_refused_forms(table: str, row: dict[str, Any]) -> None:
    with pytest.raises(SampleRefused):
        resolve_row(table, row, takeaway(utc(2026, 7, 1, 12)))


def test_no_slot_when_never_open() -> None:
    ctx = takeaway(utc(2026, 7, 1, 12), opening_hours=hours(closed=WEEK))
    with pytest.raises(SampleRefused, match="no open slot"):
        resolve_value({"@in": "PT20M", "@slot": "orders"}, ctx)


def test_duration_parts() -> None:
    parsed = parse_duration("-P1W2DT3H4M5S")
    assert (parsed.sign, parsed.days, parsed.elapsed.total_seconds()) == (-1, 9, 3 * 3600 + 245)


@pytest.mark.parametrize("app", ["takeaway", "tickets", "hotel"])
def test_example_samples_read(app: str) -> None:
    sample = load_sample(ROOT / "examples" / f"{app}.sample.json")
    manifest = load_app(json.loads((ROOT / "examples" / f"{app}.json").read_text()))
    assert sample.app == app
    assert set(sample.rows) <= set(manifest.tables)


def test_sample_file_shape_is_checked() -> None:
    with pytest.raises(SampleRefused):
        read_sample({"app": "takeaway", "rows": {}, "extra": 1})
