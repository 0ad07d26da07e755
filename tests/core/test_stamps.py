"""Stamps and codes, judged without a database: the tickets example's offer and link code."""

from __future__ import annotations

from datetime import UTC, datetime

from core.rules.stamps import code_values, firing_stamps, stamp_values
from core.time.clock import venue_zone
from tests.core.example_rows import (
    TICKETS,
)

# --- stamps and codes --------------------------------------------------------------


def test_an_offer_stamps_offer_until_offer_hours_later() -> None:
    held = {"id": 1, "status": "valid", "pending_email": None}
    after = {**held, "status": "offered"}
    names = firing_stamps(TICKETS, held, after)
    assert names == ["offer_until"]
    now = datetime(2026, 10, 24, 0, 30, tzinfo=UTC)
    tables = {"settings": [{"id": 1, "offer_hours": 48}]}
    # 48 elapsed hours across the night the clocks go back: 26 October 00:30 UTC.
    stamps = stamp_values(TICKETS, names, now, tables, venue_zone("Europe/London"))
    assert stamps == {"offer_until": datetime(2026, 10, 26, 0, 30, tzinfo=UTC)}


def test_a_write_that_keeps_the_state_stamps_nothing() -> None:
    held = {"id": 1, "status": "offered"}
    assert firing_stamps(TICKETS, held, {**held, "pending_name": "Bo"}) == []


def test_a_new_pending_email_renews_the_link_code() -> None:
    held = {"id": 1, "link_token": "a" * 16, "pending_email": None}
    codes = code_values(TICKETS, held, {**held, "pending_email": "bo@example.com"})
    assert set(codes) == {"link_token"} and len(codes["link_token"]) == 16
    assert codes["link_token"] != "a" * 16


def test_a_new_row_gets_a_code_unless_it_brings_one() -> None:
    assert set(code_values(TICKETS, None, {"link_token": None})) == {"link_token"}
    assert code_values(TICKETS, None, {"link_token": "b" * 16}) == {}


def test_a_write_that_keeps_the_pending_email_keeps_the_link_code() -> None:
    held = {"id": 1, "link_token": "a" * 16, "pending_email": "bo@example.com"}
    assert code_values(TICKETS, held, {**held, "pending_name": "Bo"}) == {}
