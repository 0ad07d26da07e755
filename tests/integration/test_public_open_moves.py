"""A guest's GET lists only the moves open to them now: judged as the write would be.

London is on BST (UTC+1) until 25 October 2026, when the clocks go back at 02:00 BST.
Instants are written in UTC with `at`.
"""

from __future__ import annotations

import uuid
from datetime import date
from typing import Any

import pytest

from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at

pytestmark = pytest.mark.integration

DOORS = at("2026-07-10 18:00")
"""The event's doors: `returned` from `valid` closes then (a linked row's time)."""


def link(site: Site, table: str, column: str, length: int, **values: Any) -> str:
    """A row seeded with a link code of its own; its code."""
    code = uuid.uuid4().hex[:length]
    site.insert(table, **{**values, column: code})
    return code


def ticket(site: Site, **values: Any) -> str:
    """A ticket for an event whose doors open at DOORS; its link code."""
    event = site.insert("events", doors_at=DOORS)
    return link(site, "tickets", "link_token", 16, event_id=event, **values)


def listed(site: Site, table: str, code: str, now: str) -> Any:
    """The moves a guest's GET lists at `now` (UTC)."""
    site.clock.now = at(now)
    answer = site.client.get(f"/public/venue/venue/{table}/{code}")
    assert answer.status_code == 200, answer.json
    return answer.json["moves"]


# `returned` from `valid` opens one hour after sale_from and closes at the doors.
@pytest.mark.parametrize(
    ("now", "moves"),
    [
        # sale_from 14:00 UTC: the move opens at 15:00 UTC, six hours after 09:00.
        pytest.param("2026-07-10 09:00", [], id="opens_in_6_hours"),
        pytest.param("2026-07-10 14:59", [], id="a_minute_before_it_opens"),
        pytest.param("2026-07-10 15:00", ["returned"], id="as_it_opens"),
        pytest.param("2026-07-10 18:00", [], id="closed_by_the_doors"),
    ],
)
def test_a_move_not_yet_open_or_closed_by_a_linked_row_is_not_listed(
    site: Site, now: str, moves: list[str]
) -> None:
    code = ticket(site, status="valid", sale_from=at("2026-07-10 14:00"))
    assert listed(site, "tickets", code, now) == moves


# `returned` from `offered` is open to guests before the ticket's own valid_to.
@pytest.mark.parametrize(
    ("valid_to", "moves"),
    [
        pytest.param("2026-07-10 08:59", [], id="window_closed_a_minute_ago"),
        pytest.param("2026-07-10 09:01", ["returned"], id="window_open_a_minute_more"),
        pytest.param(None, [], id="no_time_to_be_open_until"),
    ],
)
def test_a_move_whose_window_closed_is_not_listed(
    site: Site, valid_to: str | None, moves: list[str]
) -> None:
    code = ticket(site, status="offered", valid_to=at(valid_to) if valid_to else None)
    assert listed(site, "tickets", code, "2026-07-10 09:00") == moves


# `withdrawn` is refused to guests within 24 hours of 15:00 on the arrival day: for an
# arrival on Sunday 25 October 2026 (GMT again), from 15:00 UTC on the 24th. The other
# moves from `booked` are kept for staff, so they are never listed.
@pytest.mark.parametrize(
    ("now", "moves"),
    [
        pytest.param("2026-10-24 14:59", ["withdrawn"], id="a_minute_before_the_late_window"),
        pytest.param("2026-10-24 15:01", [], id="a_late_rule_turns_guests_away"),
    ],
)
def test_a_move_a_late_rule_turns_away_from_guests_is_not_listed(
    site: Site, now: str, moves: list[str]
) -> None:
    code = link(site, "stays", "guest_code", 16, status="booked", arrive=date(2026, 10, 25))
    assert listed(site, "stays", code, now) == moves


def test_what_is_listed_is_what_the_guest_can_do(site: Site) -> None:
    # The list and the write judge alike: a listed move goes through, an unlisted one is
    # refused, at the same instant.
    opening = ticket(site, status="valid", sale_from=at("2026-07-10 08:00"))
    waiting = ticket(site, status="valid", sale_from=at("2026-07-10 14:00"))
    assert listed(site, "tickets", opening, "2026-07-10 09:00") == ["returned"]
    assert listed(site, "tickets", waiting, "2026-07-10 09:00") == []
    for code, status in ((opening, 200), (waiting, 409)):
        answer = site.client.post(
            f"/public/venue/venue/tickets/{code}/moves", json={"to": "returned"}
        )
        assert answer.status_code == status, answer.json
