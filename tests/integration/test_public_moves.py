"""The public API on real PostgreSQL: link codes, public fields, guest moves and their times.

London is on BST (UTC+1) from 29 March to 25 October 2026, when the clocks go back at
02:00 BST. Instants are written in UTC with `at`.
"""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Any, NamedTuple

import pytest
from werkzeug.test import TestResponse

from tests.integration.api_fixtures import Site, rows_path
from tests.integration.pipeline_fixtures import at
from web.errors import PUBLIC_NOT_FOUND

pytestmark = pytest.mark.integration


# The event's doors open at 18:00 UTC (19:00 BST) on Friday 10 July 2026.
DOORS = at("2026-07-10 18:00")


class Ticket(NamedTuple):
    """A ticket seeded for a test: its key and its link code."""

    key: int
    code: str


def new_code(length: int) -> str:
    """A link code no other row of the module holds."""
    return uuid.uuid4().hex[:length]


def ticket(site: Site, sale_from: datetime | None, **values: Any) -> Ticket:
    """A valid ticket with a link code of its own, for an event whose doors open at DOORS."""
    event = site.insert("events", doors_at=DOORS)
    code = new_code(16)
    row = {"event_id": event, "status": "valid", "sale_from": sale_from, "link_token": code}
    return Ticket(site.insert("tickets", **{**row, **values}), code)


def guest_move(site: Site, to: str, code: str, table: str = "tickets", **body: Any) -> Any:
    """A guest's move by link code."""
    return site.client.post(f"/public/venue/venue/{table}/{code}/moves", json={"to": to, **body})


def refusal(answer: TestResponse, code: str, status: int) -> dict[str, Any]:
    """Assert a guest's refusal: code, status, and `params` in place of details; the params."""
    assert (answer.status_code, answer.json["error"]["code"]) == (status, code), answer.json
    assert set(answer.json["error"]) == {"code", "message", "params"}
    return answer.json["error"]["params"]  # type: ignore[no-any-return]


def instants(params: dict[str, str]) -> dict[str, datetime]:
    """A refusal's params read back as instants."""
    return {name: datetime.fromisoformat(value) for name, value in params.items()}


def test_a_guest_reads_only_the_public_fields(site: Site) -> None:
    made = ticket(site, at("2026-07-10 09:00"), pending_email="friend@example.test")
    site.clock.now = at("2026-07-10 10:00")  # `returned` opens an hour after sale_from
    answer = site.client.get(f"/public/venue/venue/tickets/{made.code}")
    assert answer.status_code == 200
    assert answer.json == {
        "row": {
            "status": "valid",
            "sale_from": "2026-07-10T09:00:00+00:00",
            "valid_to": None,
        },
        "moves": ["returned"],
    }


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/public/venue/venue/tickets/tk-unknown-code-", id="unknown_code"),
        pytest.param("/public/venue/venue/tickets/short", id="wrong_length"),
        pytest.param("/public/venue/venue/orders/{code}", id="table_without_code"),
        pytest.param("/public/venue/venue/nope/{code}", id="unknown_table"),
        pytest.param("/public/venue/nope/tickets/{code}", id="unknown_app"),
        pytest.param("/public/nope/venue/tickets/{code}", id="unknown_connection"),
        pytest.param("/public/venue/venue", id="no_table_no_code"),
    ],
)
def test_anything_but_a_live_code_is_the_same_404(site: Site, path: str) -> None:
    # A live code, in the wrong place: it opens nothing there.
    path = path.format(code=ticket(site, None).code)
    for answer in (site.client.get(path), site.client.post(path + "/moves", json={"to": "x"})):
        assert (answer.status_code, answer.json) == (404, PUBLIC_NOT_FOUND)


def test_a_renewed_code_opens_nothing(site: Site) -> None:
    key, code = ticket(site, at("2026-07-10 09:00"))
    # Staff give the ticket to a friend: pending_email changes, so the link code renews.
    answer = site.client.patch(
        rows_path("tickets", key),
        json={"values": {"pending_email": "friend@example.test"}},
        headers=site.headers("staff"),
    )
    renewed = answer.json["row"]["link_token"]
    assert len(renewed) == 16 and renewed != code
    old = site.client.get(f"/public/venue/venue/tickets/{code}")
    assert (old.status_code, old.json) == (404, PUBLIC_NOT_FOUND)
    moved = guest_move(site, "returned", code)
    assert (moved.status_code, moved.json) == (404, PUBLIC_NOT_FOUND)
    assert site.client.get(f"/public/venue/venue/tickets/{renewed}").status_code == 200


# `returned` is open to the public after sale_from plus one hour and before the event's
# doors (a linked row). sale_from 09:00 UTC (10:00 BST): the move opens at 10:00 UTC.
def test_too_early_names_when_it_opens_and_the_time_it_counts_from(site: Site) -> None:
    key, code = ticket(site, at("2026-07-10 09:00"))
    site.clock.now = at("2026-07-10 09:59")
    params = refusal(guest_move(site, "returned", code), "PUBLIC_TOO_EARLY", 409)
    assert instants(params) == {"from": at("2026-07-10 10:00"), "at": at("2026-07-10 09:00")}
    assert site.row("tickets", key)["status"] == "valid"


def test_a_guest_move_opens_at_its_moment_and_is_audited_as_public(site: Site) -> None:
    key, code = ticket(site, at("2026-07-10 09:00"))
    site.clock.now = at("2026-07-10 10:00")
    answer = guest_move(site, "returned", code)
    assert answer.status_code == 200
    assert answer.json == {
        "row": {"status": "returned", "sale_from": "2026-07-10T09:00:00+00:00", "valid_to": None},
        "moves": [],
    }
    assert site.row("tickets", key)["status"] == "returned"
    assert site.audit()[-1]["actor"] == "Public"


@pytest.mark.parametrize(
    ("sale_from", "now"),
    [
        # The doors (a linked row's time) close the window at 18:00 UTC: no time is named.
        pytest.param(at("2026-07-10 09:00"), "2026-07-10 18:00", id="closed_by_a_linked_row"),
        # No sale_from: the window's moment has no value, and no time is named either.
        pytest.param(None, "2026-07-10 12:00", id="a_moment_with_no_value"),
    ],
)
def test_a_window_closed_without_a_time_to_name(
    site: Site, sale_from: datetime | None, now: str
) -> None:
    key, code = ticket(site, sale_from)
    site.clock.now = at(now)
    assert refusal(guest_move(site, "returned", code), "PUBLIC_TOO_LATE", 409) == {}
    assert site.row("tickets", key)["status"] == "valid"


# An offered ticket may be returned by the guest before its own valid_to, 20:00 UTC.
@pytest.mark.parametrize(
    ("now", "refused"),
    [
        pytest.param("2026-07-10 19:59", False, id="a_minute_before"),
        pytest.param("2026-07-10 20:00", True, id="at_valid_to"),
    ],
)
def test_a_window_closed_by_the_rows_own_time_names_it(site: Site, now: str, refused: bool) -> None:
    made = ticket(site, None, status="offered", valid_to=at("2026-07-10 20:00"))
    site.clock.now = at(now)
    answer = guest_move(site, "returned", made.code)
    if refused:
        params = refusal(answer, "PUBLIC_TOO_LATE", 409)
        assert instants(params) == {"at": at("2026-07-10 20:00")}
    else:
        assert answer.json["row"]["status"] == "returned"


def stay(site: Site) -> tuple[int, str]:
    """A booked stay arriving Sunday 25 October 2026, with a guest code; its key and code."""
    code = new_code(16)
    row = {"status": "booked", "arrive": date(2026, 10, 25), "guest_code": code}
    return site.insert("stays", **row), code


# `withdrawn` is refused to guests within 24 hours of 15:00 on the arrival day. The clocks
# went back at 02:00 on the 25th, so 15:00 that day is GMT: 15:00 UTC. Hours are elapsed
# time: the window opens 24 real hours earlier, 15:00 UTC on the 24th (16:00 BST), not at
# 15:00 BST (14:00 UTC) as a calendar day would have it.
@pytest.mark.parametrize(
    ("now", "refused"),
    [
        pytest.param("2026-10-24 14:30", False, id="after_a_calendar_day_but_not_24_hours"),
        pytest.param("2026-10-24 15:01", True, id="inside_24_hours"),
    ],
)
def test_a_late_move_refused_to_guests_names_the_moment(
    site: Site, now: str, refused: bool
) -> None:
    key, code = stay(site)
    site.clock.now = at(now)
    answer = guest_move(site, "withdrawn", code, "stays")
    if refused:
        params = refusal(answer, "PUBLIC_TOO_LATE", 409)
        assert instants(params) == {"at": at("2026-10-25 15:00")}
        # Staff are not turned away by a refuse rule for the public.
        staff = site.client.post(
            rows_path("stays", key) + "/moves",
            json={"to": "withdrawn"},
            headers=site.headers("staff"),
        )
        assert staff.json["row"]["status"] == "withdrawn"
    else:
        assert answer.json["row"] == {"status": "withdrawn", "arrive": "2026-10-25"}


@pytest.mark.parametrize(
    ("to", "code", "status"),
    [
        pytest.param("offered", "STATE_MOVE_FORBIDDEN", 403, id="a_move_for_staff"),
        pytest.param("nowhere", "STATE_MOVE_NOT_LISTED", 409, id="not_listed"),
    ],
)
def test_moves_not_open_to_the_public_tell_nothing_more(
    site: Site, to: str, code: str, status: int
) -> None:
    made = ticket(site, at("2026-07-10 09:00"))
    assert refusal(guest_move(site, to, made.code), code, status) == {}


def test_a_guest_sends_only_public_fields(site: Site) -> None:
    made = ticket(site, at("2026-07-10 09:00"))
    site.clock.now = at("2026-07-10 10:00")
    answer = guest_move(site, "returned", made.code, values={"pending_email": "me@example.test"})
    assert refusal(answer, "COLUMN_READ_ONLY", 422) == {}


@pytest.mark.parametrize(
    "body", [pytest.param(b"{}", id="no_to"), pytest.param(b'{"to": 1}', id="to_not_text")]
)
def test_a_guest_body_out_of_shape_is_400(site: Site, body: bytes) -> None:
    made = ticket(site, None)
    answer = site.client.post(
        f"/public/venue/venue/tickets/{made.code}/moves", data=body, content_type="application/json"
    )
    assert refusal(answer, "INVALID_REQUEST", 400) == {}


def test_one_address_is_throttled_past_120_requests_a_minute(site: Site) -> None:
    made = ticket(site, None)
    path = f"/public/venue/venue/tickets/{made.code}"
    guest = {"REMOTE_ADDR": "203.0.113.9"}
    answers = [site.client.get(path, environ_base=guest).status_code for _ in range(120)]
    assert answers == [200] * 120
    # The 121st within the minute, for any row (a code that opens nothing counts too).
    throttled = site.client.get("/public/venue/venue/tickets/" + "x" * 16, environ_base=guest)
    params = refusal(throttled, "TOO_MANY_REQUESTS", 429)
    assert params == {}
    assert 0 < int(throttled.headers["Retry-After"]) <= 60
    # Another address is not.
    other = site.client.get(path, environ_base={"REMOTE_ADDR": "203.0.113.10"})
    assert other.status_code == 200
