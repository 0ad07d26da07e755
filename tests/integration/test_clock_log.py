"""The clock's log, the row's history of the clock's refused attempts, who moved a row last,
and refusals in plain words, on the venue site with a second app (the sweep tests' shop)
on the same connection: real sweeps at chosen instants, a stall between them.

The venue is in London (BST, UTC+1, in July). Wednesday 8 July 2026: a venue order for a
12:30 BST pickup is cancelled at closing, 21:00 BST = 20:00 UTC; the venue's own rule wants
a note on a cancelled order. The shop's order is due at 20:03 UTC and its timed move sets
cancel_code "late". Sweeps run at 19:58 and 19:59 UTC, none from 20:00 to 20:06 (a stall:
seven minutes), then at 20:07 and 20:08; the web's clock reads 20:09:30 UTC.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
import sqlalchemy as sa
from flask.testing import FlaskClient

from services import sweeps
from services.apps import add_app
from services.events import NO_PUBLISHER
from services.models import db
from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import NEEDS_NOTE, add_order, csrf_of
from tests.integration.sweep_fixtures import SHOP

pytestmark = pytest.mark.integration

LOG = "/connections/venue/clock"


@dataclass(frozen=True)
class Night:
    """The rows of the night: the venue's order moved and the one set aside, the shop's."""

    moved: int
    aside: int
    shop: int


def sweep(site: Site, when: str) -> None:
    with site.app.app_context():
        sweeps.sweep(db.session, "venue", now=at(when), publisher=NO_PUBLISHER)


@pytest.fixture(scope="module")
def night(screens_site: Site) -> Iterator[Night]:
    """The shop added to the venue's connection, the night swept with its stall."""
    shop = copy.deepcopy(SHOP)
    shop["schema"] = "shop"
    with screens_site.app.app_context():
        add_app(db.session, "venue", shop, create_tables=True)
    with screens_site.store().engine.begin() as conn:
        conn.execute(sa.text(NEEDS_NOTE))
        conn.execute(sa.text("INSERT INTO shop.settings DEFAULT VALUES"))
        shop_key = conn.execute(
            sa.text(
                "INSERT INTO shop.orders (status, due_at) VALUES ('placed', :due) RETURNING id"
            ),
            {"due": at("2026-07-08 20:03")},
        ).scalar_one()
    moved = add_order(screens_site, at("2026-07-08 11:30"), note="at the door")
    aside = add_order(screens_site, at("2026-07-08 11:30"))
    for when in ("19:58", "19:59", "20:07", "20:08"):
        sweep(screens_site, f"2026-07-08 {when}")
    screens_site.clock.now = at("2026-07-08 20:09:30")
    yield Night(moved, aside, int(shop_key))
    screens_site.clock.now = at("2026-07-10 09:00")


def lines(html: str) -> list[str]:
    """The log's lines as text, the newest first ("21:07 moved 2, set aside 1 …"), without
    how long each sweep took."""
    found = re.findall(r'<li class="log-line[^"]*"[^>]*>(.*?)</li>', html, re.S)
    untimed = [re.sub(r'<span class="took">.*?</span>', "", line) for line in found]
    return [" ".join(re.sub(r"<[^>]+>", " ", line).split()) for line in untimed]


def test_the_log_lists_the_minutes_a_stall_skipped_as_one_gap(
    night: Night, signed_in: Callable[[str], FlaskClient]
) -> None:
    html = signed_in("admin").get(LOG).text
    assert lines(html) == [
        "21:08 nothing due",
        "21:07 moved 2, set aside 1 VALUE_REFUSED",
        "21:00–21:06 skipped 7 min: no sweep ran (the worker or the clock away, or the"
        " connection paused)",
        "20:58–20:59 2 sweeps, nothing due",
    ]
    assert "4 minutes swept, " in html and "7 skipped" in html


def test_the_log_filtered_by_app_counts_that_apps_rows_alone(
    night: Night, signed_in: Callable[[str], FlaskClient]
) -> None:
    client = signed_in("admin")
    venue = lines(client.get(f"{LOG}?app=venue").text)
    assert venue[1] == "21:07 moved 1, set aside 1 VALUE_REFUSED"
    shop = lines(client.get(f"{LOG}?app=shop").text)
    assert shop[1] == "21:07 moved 1"
    # The stall is the connection's: each app's log shows it.
    assert [line for line in shop if "skipped 7 min" in line] != []


def test_the_card_links_the_log_and_staff_see_their_apps_alone(
    night: Night, signed_in: Callable[[str], FlaskClient]
) -> None:
    card = signed_in("staff").get("/connections").text
    assert 'href="/connections/venue/clock" class="clock-log-link"' in card
    # Staff hold a role in the venue app only: the counts are the venue's, not the shop's.
    staff = lines(signed_in("staff").get(LOG).text)
    assert staff[1] == "21:07 moved 1, set aside 1 VALUE_REFUSED"
    assert 'id="clock-log-app"' not in signed_in("staff").get(LOG).text  # one app: no filter


def test_the_rows_history_shows_the_clocks_refused_attempt(
    night: Night, signed_in: Callable[[str], FlaskClient]
) -> None:
    html = signed_in("staff").get(f"/apps/venue/venue/orders/{night.aside}").text
    history = html[html.index('<section class="history">') :]
    attempt = re.search(r'<li class="refused-attempt">(.*?)</li>', history, re.S)
    assert attempt is not None, history
    said = " ".join(re.sub(r"<[^>]+>", " ", attempt.group(1)).split())
    # Refused at the 20:07 UTC sweep = 21:07 BST; left alone until 22:07 BST.
    assert said == (
        "Wed 08 Jul 2026 21:07 Timed move refused rule 1: Placed → Cancelled: Needs a note"
        " before it can be cancelled. Fill in Note, then try again. VALUE_REFUSED set aside"
        " until 22:07"
    )


def test_a_set_aside_row_is_not_said_to_move_at_the_next_minute(
    night: Night, signed_in: Callable[[str], FlaskClient]
) -> None:
    html = signed_in("staff").get(f"/apps/venue/venue/orders/{night.aside}").text
    timed = html[html.index('<section class="timed">') : html.index('<section class="fields">')]
    assert "moves at the next minute" not in timed
    found = re.search(r'<p class="aside-status">(.*?)</p>', timed, re.S)
    assert found is not None, timed
    status = " ".join(re.sub(r"<[^>]+>", " ", found.group(1)).split())
    # Until 21:07 UTC: 57 min 30 s after the web's 20:09:30, read to the minute.
    assert status == (
        "set aside until 22:07 (in 57 min): Needs a note before it can be cancelled. Fill in"
        " Note, then try again. VALUE_REFUSED"
    )


def test_who_moved_a_row_last_the_clock_with_its_code_or_a_person(
    night: Night, signed_in: Callable[[str], FlaskClient], screens_site: Site
) -> None:
    admin = signed_in("admin")
    shop_row = admin.get(f"/apps/venue/shop/orders/{night.shop}").text
    assert "Moved by the clock at 21:07 (Cancel code: late)." in shop_row
    board = admin.get("/apps/venue/shop/orders").text
    card = board[board.index(f'id="row-orders-{night.shop}"') :]
    assert '<p class="moved-by">moved by the clock at 21:07 (Cancel code: late)</p>' in card
    # A person's move: staff confirm an order at the web's 20:09:30 UTC = 21:09 BST.
    staff = signed_in("staff")
    key = add_order(screens_site, at("2026-07-10 11:30"))
    token = csrf_of(staff.get(f"/apps/venue/venue/orders/{key}").text)
    answer = staff.post(
        f"/apps/venue/venue/orders/{key}/move",
        data={"to": "confirmed", "seen": "placed"},
        headers={"X-CSRFToken": token, "HX-Request": "true"},
    )
    assert answer.status_code == 200, answer.text
    assert "Moved by staff@venue.test at 21:09." in answer.text
    venue_board = staff.get("/apps/venue/venue/orders").text
    card = venue_board[venue_board.index(f'id="row-orders-{key}"') :]
    assert card.index("moved by staff@venue.test at 21:09") < card.index("</article>")


def test_a_refused_move_reads_in_plain_words_first_with_the_code_small(
    night: Night, signed_in: Callable[[str], FlaskClient], screens_site: Site
) -> None:
    staff = signed_in("staff")
    key = add_order(screens_site, at("2026-07-10 11:30"))
    token = csrf_of(staff.get(f"/apps/venue/venue/orders/{key}").text)
    answer = staff.post(
        f"/apps/venue/venue/orders/{key}/move",
        data={"to": "cancelled", "seen": "placed"},
        headers={"X-CSRFToken": token, "HX-Request": "true"},
    )
    assert answer.status_code == 422
    refusal = re.search(r'<p class="refusal" role="alert">(.*?)</p>', answer.text, re.S)
    assert refusal is not None
    assert refusal.group(1) == (
        '<span class="refusal-words">Needs a note before it can be cancelled. Fill in Note,'
        ' then try again.</span> <code class="code">VALUE_REFUSED</code>'
    )
    # The toast says what was not done and what to do, the code apart.
    assert (
        f'<span class="toast-words">Not done: Orders #{key}: Needs a note before it can be'
        " cancelled. Fill in Note, then try again.</span>"
        ' <code class="code">VALUE_REFUSED</code>' in answer.text
    )
    assert "the database refused the value" not in answer.text


def test_a_board_search_that_finds_nothing_says_so(
    night: Night, signed_in: Callable[[str], FlaskClient]
) -> None:
    html = signed_in("staff").get("/apps/venue/venue/orders?q=zzz").text
    assert (
        '<p class="empty-search" role="status">Nothing on the Orders board matches “zzz”.'
        " The search looks in the number and the text of each row.</p>" in html
    )
    found = signed_in("staff").get("/apps/venue/venue/orders?q=door").text
    assert 'class="empty-search"' not in found


def test_the_header_s_clock_state_is_read_afresh_for_a_signed_in_user(
    night: Night, signed_in: Callable[[str], FlaskClient], screens_site: Site
) -> None:
    # 20:09:30 UTC, the last sweep at 20:08: running. A screen asks for it as its socket opens.
    state = signed_in("staff").get("/connections/venue/clock-state")
    assert state.status_code == 200
    assert '<span class="clock-state running clock-state-venue"' in state.text
    assert "· clock running</span>" in state.text
    # The span asks for itself again at the next open: its trigger stays when it is swapped.
    assert 'hx-get="/connections/venue/clock-state"' in state.text
    assert 'hx-trigger="htmx:wsOpen from:body, adminium:back from:body"' in state.text
    # Nothing swept since 20:08 and the clock at 20:19: stalled, as the header then says.
    screens_site.clock.now = at("2026-07-08 20:19")
    try:
        stalled = signed_in("staff").get("/connections/venue/clock-state").text
    finally:
        screens_site.clock.now = at("2026-07-08 20:09:30")
    assert '<span class="clock-state stalled clock-state-venue"' in stalled
    assert signed_in("staff").get("/connections/nowhere/clock-state").status_code == 404
    unsigned = screens_site.app.test_client().get("/connections/venue/clock-state")
    assert unsigned.status_code == 302 and unsigned.location.startswith("/signin")
    assert "<span" not in unsigned.text
