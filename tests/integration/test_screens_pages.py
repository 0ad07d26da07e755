"""What the screens show: the board's columns and cards on the venue's clock, the row page's
moves, timed move and history, pending moves in order, and set-aside rows with their fixes."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from zoneinfo import ZoneInfo

import pytest
import sqlalchemy as sa
from flask.testing import FlaskClient

from core.manifest.model import load_app
from core.store.store import Store
from core.sweep.pending import rules_of, waiting_on
from services import sweeps
from services.events import NO_PUBLISHER
from services.models import db
from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import MANIFEST, at
from tests.integration.screens_fixtures import add_order, csrf_of, forbid_cancel_with_note
from web.screens.times import audit_value

pytestmark = pytest.mark.integration
BOARD = "/apps/venue/venue/orders"


def column_of(html: str, state: str) -> str:
    """The HTML of one board column's cards."""
    found = re.search(
        rf'<div class="cards" id="column-orders-{state}">(.*?)</div>\s*</section>', html, re.S
    )
    assert found is not None, f"no column {state}"
    return found.group(1)


def sweep(site: Site, when: str) -> None:
    """Run the minute sweep of the venue at an instant written in UTC."""
    with site.app.app_context():
        sweeps.sweep(db.session, "venue", now=at(when), publisher=NO_PUBLISHER)


def test_board_shows_a_column_per_state_and_when_the_clock_cancels(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    # Friday 10 July 2026, London on BST (UTC+1). The test clock reads 09:00 UTC = 10:00 BST.
    # A 12:30 BST pickup (11:30 UTC) still placed is cancelled at Friday's closing, 21:00 BST
    # (20:00 UTC): 11 hours after the clock's 10:00 BST.
    placed = add_order(screens_site, at("2026-07-10 11:30"), note="board-case")
    confirmed = add_order(
        screens_site, at("2026-07-10 11:30"), status="confirmed", note="board-case"
    )
    page = signed_in("staff").get(BOARD).text
    for state in ("placed", "confirmed", "ready", "cancelled", "refunded"):
        assert f'id="column-orders-{state}"' in page
    card = re.search(
        rf'<article class="card[^"]*" id="row-orders-{placed}".*?</article>', page, re.S
    )
    assert card is not None
    assert "cancels 21:00" in card.group(0)  # today, on the venue's clock
    assert "in 11 h" in card.group(0)
    assert f'id="row-orders-{placed}"' in column_of(page, "placed")
    assert f'id="row-orders-{confirmed}"' in column_of(page, "confirmed")
    # No timed move leaves `confirmed` in this app: its card says nothing of one.
    other = re.search(rf'id="row-orders-{confirmed}".*?</article>', page, re.S)
    assert other is not None and "cancels" not in other.group(0)
    assert page.count("Times on the venue's clock: <strong>Europe/London</strong>") == 1


def test_active_search_answers_the_board_partial_filtered(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    wanted = add_order(screens_site, at("2026-07-10 11:30"), note="needle-42")
    other = add_order(screens_site, at("2026-07-10 11:30"), note="haystack")
    answer = signed_in("staff").get(f"{BOARD}?q=needle-42", headers={"HX-Request": "true"})
    assert answer.text.lstrip().startswith('<section id="board-orders"')
    assert "<html" not in answer.text
    assert f'id="row-orders-{wanted}"' in answer.text
    assert f'id="row-orders-{other}"' not in answer.text
    # The socket the new board opens carries the search, so pushes keep to it.
    assert "q=needle-42" in answer.text


@pytest.mark.parametrize(
    ("user", "shows_refund"),
    [("manager", True), ("staff", False)],
    ids=["manager-sees-kept-move", "staff-does-not"],
)
def test_row_page_offers_the_moves_open_to_the_user_and_undo_asks_what_was_seen(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], user: str, shows_refund: bool
) -> None:
    key = add_order(screens_site, at("2026-07-10 11:30"), status="confirmed")
    page = signed_in(user).get(f"{BOARD}/{key}").text
    assert "Move to Ready" in page
    assert ("Move to Refunded" in page) is shows_refund
    assert "Undo to Placed" in page
    # The undo asks with the state on the screen, never a list of every state.
    assert 'hx-confirm="Undo: Confirmed → Placed?"' in page
    assert "Which state did you see?" not in page


def test_undo_naming_the_wrong_state_is_refused_on_the_page(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    key = add_order(screens_site, at("2026-07-10 11:30"), status="confirmed")
    client = signed_in("manager")
    token = csrf_of(client.get(f"{BOARD}/{key}").text)
    answer = client.post(
        f"{BOARD}/{key}/move",
        data={"to": "placed", "seen": "ready"},
        headers={"X-CSRFToken": token, "HX-Request": "true"},
    )
    assert "STATE_CHANGED" in answer.text
    assert screens_site.row("orders", key)["status"] == "confirmed"
    answer = client.post(
        f"{BOARD}/{key}/move",
        data={"to": "placed", "seen": "confirmed"},
        headers={"X-CSRFToken": token, "HX-Request": "true"},
    )
    assert screens_site.row("orders", key)["status"] == "placed"


def test_row_page_shows_the_waiting_timed_move_then_the_clock_in_its_history(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    # Pickup Thursday 9 July 2026 12:30 BST: cancelled at Thursday's 21:00 BST = 20:00 UTC.
    key = add_order(screens_site, at("2026-07-09 11:30"))
    client = signed_in("staff")
    page = client.get(f"{BOARD}/{key}").text
    assert "Placed → Cancelled at" in page
    assert "Thu 09 Jul 2026 21:00" in page
    assert "read from its own column pickup_at" in page
    assert "Not set aside." in page
    sweep(screens_site, "2026-07-09 20:01")
    page = client.get(f"{BOARD}/{key}").text
    assert '<span class="actor clock">Timed move</span>' in page
    assert "moved Placed → Cancelled" in page
    assert "No timed move waits on this row." in page


def test_waiting_move_names_the_fallback_that_gave_its_moment() -> None:
    manifest = copy.deepcopy(MANIFEST)
    rule = manifest["tables"]["tickets"]["states"]["timed"][0]
    rule["at"] = {"column": "offer_until", "or": [{"column": "valid_to"}]}
    store = Store(sa.create_engine("postgresql+psycopg://"), load_app(manifest), ZoneInfo("UTC"))
    row = {"status": "offered", "offer_until": None, "valid_to": at("2026-07-10 18:00")}
    waiting = waiting_on(rules_of(store, "tickets"), row, {})
    assert waiting is not None
    assert waiting.reading.at == at("2026-07-10 18:00")
    assert waiting.source == "fallback 1 (column valid_to)"


def test_pending_lists_timed_moves_next_due_first(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    # Clock 09:00 UTC Fri 10 July. Saturday's pickup cancels Sat 21:00 BST, Friday's at Fri
    # 21:00 BST: Friday's first though it was added second.
    later = add_order(screens_site, at("2026-07-11 11:30"), note="pending-case")
    sooner = add_order(screens_site, at("2026-07-10 12:30"), note="pending-case")
    page = signed_in("staff").get("/connections/venue/pending").text
    assert page.index(f'id="pending-orders-{sooner}"') < page.index(f'id="pending-orders-{later}"')
    line = re.search(rf'id="pending-orders-{later}".*?</tr>', page, re.S)
    assert line is not None
    # Sat 21:00 BST is 20:00 UTC Saturday: 35 hours after Friday 09:00 UTC.
    assert "Sat 11 Jul 2026 21:00" in line.group(0)
    assert "in 1 d 11 h" in line.group(0)
    assert "rule 1: Placed → Cancelled" in line.group(0)


@pytest.fixture
def aside_order(screens_site: Site) -> int:
    """An order the sweep set aside: the venue's database refuses cancelling it (its note)."""
    forbid_cancel_with_note(screens_site)
    key = add_order(screens_site, at("2026-07-08 11:30"), note="allergy: nuts")
    # Wednesday 8 July closes 21:00 BST = 20:00 UTC; swept a minute later, refused.
    sweep(screens_site, "2026-07-08 20:01")
    yield key
    with screens_site.store().engine.begin() as conn:
        conn.execute(sa.text("ALTER TABLE public.orders DROP CONSTRAINT ck_cancelled_without_note"))
        conn.execute(sa.text("UPDATE public.orders SET note = NULL WHERE status = 'placed'"))
        conn.execute(sa.text("DELETE FROM adminium.set_aside"))


def test_set_aside_list_shows_the_refusal_in_words_and_code(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], aside_order: int
) -> None:
    # Set aside at 20:01 UTC for an hour: tried again at 21:01 UTC = 22:01 BST, which at
    # 20:04 UTC is 57 min ahead.
    screens_site.clock.now = at("2026-07-08 20:04")
    try:
        page = signed_in("staff").get("/connections/venue/set-aside").text
    finally:
        screens_site.clock.now = at("2026-07-10 09:00")
    item = re.search(rf'<li class="aside" id="aside-orders-{aside_order}".*?</li>', page, re.S)
    assert item is not None
    text = item.group(0)
    assert "VALUE_REFUSED" in text
    assert "ck_cancelled_without_note" in text
    assert "tried again at <time" in text and ">22:01</time>, in 57 min" in text
    assert "Move to Confirmed" in text
    assert "Try again now" in text


def fix(client: FlaskClient, key: int, action: str, status: int = 200, **form: str) -> str:
    """Post one of the set-aside fixes as htmx does; the answer's HTML (a refusal answers
    with its own status)."""
    token = csrf_of(client.get("/connections/venue/set-aside").text)
    answer = client.post(
        f"/connections/venue/set-aside/venue/orders/{key}/{action}",
        data=form,
        headers={"X-CSRFToken": token, "HX-Request": "true"},
    )
    assert answer.status_code == status
    return answer.text


def test_moved_by_hand_leaves_the_list(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], aside_order: int
) -> None:
    client = signed_in("staff")
    # A line saying what became of it stands in its place, and a toast offers the undo.
    answer = fix(client, aside_order, "move", to="confirmed", seen="placed")
    assert 'id="aside-orders-' not in answer
    assert f"Orders #{aside_order} moved to Confirmed by you." in answer
    assert "Undo to Placed" in answer
    assert screens_site.row("orders", aside_order)["status"] == "confirmed"
    assert f"aside-orders-{aside_order}" not in client.get("/connections/venue/set-aside").text


def test_fixed_field_then_try_again_now_moves_it_and_it_leaves(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], aside_order: int
) -> None:
    client = signed_in("staff")
    # The field is fixed, but the row stays set aside until it is tried again.
    still = fix(client, aside_order, "edit", column="note", value="")
    assert f'id="aside-orders-{aside_order}"' in still
    moved = fix(client, aside_order, "retry")
    assert 'id="aside-orders-' not in moved
    assert f"Orders #{aside_order} moved to Cancelled by its timed move." in moved
    assert "stays set aside" not in moved
    row = screens_site.row("orders", aside_order)
    assert (row["status"], row["cancel_code"]) == ("cancelled", "closed")
    assert screens_site.audit()[-1]["actor"] == "Timed move"


def test_try_again_now_refused_again_stays_with_the_refusal(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], aside_order: int
) -> None:
    answer = fix(signed_in("staff"), aside_order, "retry", status=422)
    assert f'id="aside-orders-{aside_order}"' in answer
    assert "VALUE_REFUSED" in answer
    assert screens_site.row("orders", aside_order)["status"] == "placed"


def test_new_moment_leaves_the_list_until_it_passes(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], aside_order: int
) -> None:
    # Re-dated to Saturday 11 July 12:30 on the venue's clock (BST): due again at Sat 21:00.
    answer = fix(
        signed_in("staff"), aside_order, "edit", column="pickup_at", value="2026-07-11T12:30"
    )
    # The item leaves the list; a line in its place (and a toast) says what was saved.
    assert 'id="aside-orders-' not in answer
    assert "Saved: Orders #" in answer and "Pickup at is now Sat 11 Jul 2026 12:30" in answer
    row = screens_site.row("orders", aside_order)
    assert row["pickup_at"] == at("2026-07-11 11:30")


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        # 20:01 UTC on 7 July is 21:01 BST.
        ("2026-07-07T20:01:00+00:00", "Tue 07 Jul 2026 21:01"),
        (None, "—"),
        ("closed", "closed"),
        (True, "yes"),
    ],
    ids=["instant-on-venue-clock", "null-as-dash", "text-as-is", "boolean-as-yes"],
)
def test_audit_values_read_on_the_venue_clock(raw: object, shown: str) -> None:
    assert audit_value(raw, ZoneInfo("Europe/London")) == shown


# A refusal on the screens answers with the refusal's own HTTP status
# (docs/errors.md), its words in the partial htmx swaps in, and a toast saying it was not done.


def post_move(client: FlaskClient, key: int, to: str, seen: str) -> tuple[int, str]:
    path = f"{BOARD}/{key}"
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


@pytest.mark.parametrize(
    "path",
    [
        "/connections/venue/pending",
        "/connections/venue/set-aside",
        "/connections/venue/deliveries",
        BOARD,
    ],
)
def test_every_page_names_the_venues_zone(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], path: str
) -> None:
    # The Deliveries page said "Times on the venue's clock: UTC" for a London connection.
    page = signed_in("manager").get(path)
    assert page.status_code == 200, page.text
    assert page.text.count("Times on the venue's clock: <strong>Europe/London</strong>") == 1
