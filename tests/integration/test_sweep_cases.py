"""The spec's three cases, end to end through the sweep, in London.

British Summer Time 2026 runs from Sunday 29 March 01:00 UTC to Sunday 25 October
01:00 UTC: a London wall time is UTC+1 between those instants and UTC+0 outside them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest

from core.sweep.report import SweepOutcome
from tests.integration.pipeline_fixtures import MANIFEST, at
from tests.integration.sweep_fixtures import Shop

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def venue(make_shop: Callable[..., Shop]) -> Shop:
    """The pipeline's test venue (orders close at 21:00, Mondays closed; ticket offers)."""
    shop = make_shop(MANIFEST)
    shop.sql("UPDATE settings SET offer_hours = 24")
    return shop


@pytest.mark.parametrize(
    ("pickup", "before", "closing"),
    [
        # Friday 27 March 2026 is still GMT: 12:30 pickup, closing 21:00 GMT = 21:00 UTC.
        (at("2026-03-27 12:30"), at("2026-03-27 20:59"), at("2026-03-27 21:00")),
        # Friday 12 June 2026 is BST: 12:30 BST = 11:30 UTC; closing 21:00 BST = 20:00 UTC.
        (at("2026-06-12 11:30"), at("2026-06-12 19:59"), at("2026-06-12 20:00")),
        # Monday 15 June 2026 is closed: the day ends at midnight BST, Tue 00:00 BST
        # = Monday 23:00 UTC.
        (at("2026-06-15 11:00"), at("2026-06-15 22:59"), at("2026-06-15 23:00")),
    ],
    ids=["friday-in-winter", "friday-in-summer", "closed-monday-ends-at-midnight"],
)
def test_order_still_placed_at_closing_is_cancelled_closed(
    venue: Shop, pickup: datetime, before: datetime, closing: datetime
) -> None:
    key = venue.insert("orders", status="placed", pickup_at=pickup)
    assert venue.sweep(before).moved == ()
    assert venue.row("orders", key)["status"] == "placed"
    report = venue.sweep(closing)
    assert [d.key for d in report.moved] == [key]
    assert report.moved[0].moment == closing
    row = venue.row("orders", key)
    assert (row["status"], row["cancel_code"], row["cancelled_at"]) == (
        "cancelled",
        "closed",
        closing,
    )
    (entry,) = venue.audit()
    assert (entry["actor"], entry["move_from"], entry["move_to"]) == (
        "Timed move",
        "placed",
        "cancelled",
    )


def test_confirmed_order_is_not_swept_by_the_placed_rule(venue: Shop) -> None:
    key = venue.insert("orders", status="confirmed", pickup_at=at("2026-03-27 12:30"))
    assert venue.sweep(at("2026-03-28 12:00")).moved == ()
    assert venue.row("orders", key)["status"] == "confirmed"


def test_ticket_offer_lapses_and_its_link_code_renews(venue: Shop) -> None:
    event = venue.insert("events", doors_at=at("2026-06-20 18:00"))
    # Offered at 10:00 UTC on 9 June for offer_hours = 24: it lapses at 10:00 UTC on 10 June.
    key = venue.insert(
        "tickets",
        event_id=event,
        status="offered",
        pending_email="friend@example.test",
        link_token="OLDLINKOLDLINK00",
        offer_until=at("2026-06-10 10:00"),
    )
    assert venue.sweep(at("2026-06-10 09:59")).moved == ()
    report = venue.sweep(at("2026-06-10 10:00"))
    assert [d.key for d in report.moved] == [key]
    row = venue.row("tickets", key)
    assert (row["status"], row["pending_email"]) == ("valid", None)
    assert row["link_token"] != "OLDLINKOLDLINK00"
    assert len(row["link_token"]) == 16


def hotel() -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads((EXAMPLES / "hotel.json").read_text())
    return manifest


@pytest.mark.parametrize(
    ("now", "moved"),
    [
        # Saturday 24 Oct 10:00 BST + 24 elapsed hours would be Sunday 09:00 UTC: too soon.
        (at("2026-10-25 09:00"), False),
        (at("2026-10-25 09:59"), False),
        # One calendar day keeps the wall time: Sunday 10:00 GMT = 10:00 UTC.
        (at("2026-10-25 10:00"), True),
    ],
    ids=["twenty-four-hours-is-not-a-day", "a-minute-before", "ten-on-sunday-after-the-change"],
)
def test_guest_who_never_arrives_is_a_no_show_across_the_clock_change(
    make_shop: Callable[..., Shop], now: datetime, moved: bool
) -> None:
    shop = make_shop(hotel())
    room = shop.insert("rooms", number="12", kind="double", rate=90)
    key = shop.insert(
        "stays",
        room_id=room,
        guest_name="Ann",
        guest_email="ann@example.test",
        arrive=date(2026, 10, 24),
        status="booked",
    )
    report = shop.sweep(now)
    assert report.outcome is SweepOutcome.done
    assert shop.row("stays", key)["status"] == ("no_show" if moved else "booked")
    if moved:
        assert report.moved[0].moment == at("2026-10-25 10:00")
