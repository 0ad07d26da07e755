"""Issue 21 item 6: a refusal on the screens answers with the refusal's own HTTP status
(docs/errors.md), its words in the partial htmx swaps in, and a toast saying it was not done."""

from __future__ import annotations

from collections.abc import Callable

from flask.testing import FlaskClient

from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import add_order, csrf_of

ROW = "/apps/venue/venue/orders/{key}"


def post_move(client: FlaskClient, key: int, to: str, seen: str) -> tuple[int, str]:
    path = ROW.format(key=key)
    token = csrf_of(client.get(path).text)
    answer = client.post(
        f"{path}/move",
        data={"to": to, "seen": seen},
        headers={"X-CSRFToken": token, "HX-Request": "true"},
    )
    return answer.status_code, answer.text


def test_a_staff_members_manager_only_move_answers_403_with_its_words(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    key = add_order(screens_site, at("2026-07-11 11:30"), status="confirmed")
    status, html = post_move(signed_in("staff"), key, "refunded", seen="confirmed")
    assert status == 403
    assert "STATE_MOVE_FORBIDDEN" in html
    assert 'class="row-detail"' in html  # the row's partial, which htmx swaps in
    assert f"Not done: Orders #{key}: " in html  # and the toast
    assert screens_site.row("orders", key)["status"] == "confirmed"


def test_a_move_not_listed_answers_409_and_a_made_one_200(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    key = add_order(screens_site, at("2026-07-11 11:30"))
    client = signed_in("manager")
    status, html = post_move(client, key, "ready", seen="placed")
    assert (status, "STATE_MOVE_NOT_LISTED" in html) == (409, True)
    status, html = post_move(client, key, "confirmed", seen="placed")
    assert status == 200
    assert f"Orders #{key} moved to Confirmed by you." in html
