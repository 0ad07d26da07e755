"""A bump from a screen (web/screens/bump.py): the first forward move the person may make,
through the write pipeline with CSRF; refused with a toast for a ticket that moved since it
was seen or a state with no move on; another app's user refused; the recall list."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from flask.testing import FlaskClient

from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import add_order, csrf_of

pytestmark = pytest.mark.integration
BOARD = "/apps/venue/venue/orders"


def bump(client: FlaskClient, key: int, seen: str, token: str | None) -> tuple[int, str, str]:
    headers = {"HX-Request": "true", **({"X-CSRFToken": token} if token else {})}
    answer = client.post(f"{BOARD}/{key}/bump", data={"seen": seen}, headers=headers)
    return answer.status_code, answer.text, answer.headers.get("Adminium-Bumped", "")


def test_a_bump_moves_by_the_first_forward_move_with_csrf_and_says_what_it_moved(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    key = add_order(screens_site, at("2026-07-10 11:30"))
    client = signed_in("staff")
    token = csrf_of(client.get(BOARD).text)
    # Without the CSRF token: refused, the row as it was.
    assert bump(client, key, "placed", None)[0] == 400
    assert screens_site.row("orders", key)["status"] == "placed"

    status, text, said = bump(client, key, "placed", token)
    assert status == 200
    assert f"Orders #{key} moved to Confirmed by you." in text and "Undo to Placed" in text
    assert json.loads(said) == {
        "key": str(key),
        "left": "placed",
        "to": "confirmed",
        "at": "2026-07-10T09:00:00+00:00",
    }
    # Confirmed's first forward move is Ready (its undo back to Placed is never a bump).
    assert bump(client, key, "confirmed", token)[0] == 200
    assert screens_site.row("orders", key)["status"] == "ready"
    entries = [e for e in screens_site.audit() if e["row_key"] == str(key)]
    assert [(e["actor"], e["move_from"], e["move_to"]) for e in entries] == [
        ("staff@venue.test", "placed", "confirmed"),
        ("staff@venue.test", "confirmed", "ready"),
    ]


def test_a_bump_of_a_ticket_moved_since_or_with_no_move_on_is_refused_with_a_toast(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    key = add_order(screens_site, at("2026-07-10 11:45"), status="confirmed")
    client = signed_in("staff")
    token = csrf_of(client.get(BOARD).text)
    # The card said Placed; the row is Confirmed now: nothing moves.
    status, text, said = bump(client, key, "placed", token)
    assert status == 409 and "Not bumped: Orders #" in text and said == ""
    assert screens_site.row("orders", key)["status"] == "confirmed"
    # No move leaves Cancelled.
    gone = add_order(screens_site, at("2026-07-10 11:50"), status="cancelled")
    status, text, _ = bump(client, gone, "cancelled", token)
    assert status == 409
    assert f"Not bumped: Orders #{gone}: no move on from Cancelled is yours to make." in text
    assert "STATE_MOVE_NOT_LISTED" in text


def test_another_app_s_user_may_not_bump_and_the_recall_list_reads_each_ticket_now(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    key = add_order(screens_site, at("2026-07-10 12:05"), status="confirmed")
    clerk = signed_in("clerk")
    token = csrf_of(clerk.get("/connections").text)
    assert bump(clerk, key, "confirmed", token)[0] == 403
    assert screens_site.row("orders", key)["status"] == "confirmed"

    staff = signed_in("staff")
    recall = staff.get(
        f"{BOARD}/recall",
        query_string={"key": [key], "left": ["placed"], "to": ["confirmed"], "at": [""]},
    )
    assert recall.status_code == 200
    assert f"#{key}" in recall.text and "Back to Placed" in recall.text
    assert f"/apps/venue/venue/orders/{key}/move" in recall.text
