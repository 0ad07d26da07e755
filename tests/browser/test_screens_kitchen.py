"""In Chromium: the wall as a kitchen display (the fields the manifest's `board`
names, never a customer's contact details, 28 px type, columns and cards filling 1920×1080,
the time each row is for, time left coloured by urgency); its clock set by the server's
time with the round trip taken into account; true words for a due row by the clock's
state; one health state per connection, said once, and the header saying both the socket
and the clock; the manifest's titles on the row page and its history."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import redis
from playwright.sync_api import Page, Route, expect

from core.basics.actors import Actor
from core.writes.pipeline import create_row
from core.writes.request import WriteRequest
from services.apps import add_app
from services.models import App, db
from tests.browser.test_screens import LIVE_MS, sign_in, sweep, wait_live
from tests.browser.test_screens_wall import record_sweep
from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import add_order, forbid_cancel_with_note, served

pytestmark = pytest.mark.browser
WALL = "/apps/venue/venue/orders/wall"
EMAIL = "ann.guest@example.com"
KITCHEN_BOARD = {"card": ["items", "note"], "time": "pickup_at"}


def save_board(site: Site, board: dict[str, Any] | None) -> None:
    """The venue app saved again with orders' `board` (None: none, the defaults)."""
    with site.app.app_context():
        app = db.session.execute(db.select(App).filter_by(name="venue")).scalar_one()
        manifest = dict(app.manifest)
        tables = dict(manifest["tables"])
        orders = {k: v for k, v in tables["orders"].items() if k != "board"}
        if board is not None:
            orders["board"] = board
        tables["orders"] = orders
        add_app(db.session, "venue", {**manifest, "tables": tables}, replace=True)


@pytest.fixture(scope="module")
def base(screens_site: Site) -> Iterator[str]:
    """The venue site, its orders holding a customer's email (listed right after the key,
    where a card's first fields were read) and the items, served by a real server."""
    with screens_site.store().engine.begin() as conn:
        conn.exec_driver_sql(
            "ALTER TABLE public.orders ADD COLUMN email text, ADD COLUMN items text"
        )
    with screens_site.app.app_context():
        app = db.session.execute(db.select(App).filter_by(name="venue")).scalar_one()
        manifest = dict(app.manifest)
        orders = dict(manifest["tables"]["orders"])
        extra = [
            {"ref": "email", "type": "text", "nullable": True},
            {"ref": "items", "type": "text", "nullable": True},
        ]
        orders["columns"] = [orders["columns"][0], *extra, *orders["columns"][1:]]
        manifest["tables"] = {**manifest["tables"], "orders": orders}
        add_app(db.session, "venue", manifest, replace=True)
    screens_site.app.config["LIVE_WATCH_SECONDS"] = 0.3
    with served(screens_site.app) as port:
        yield f"http://127.0.0.1:{port}"


def smallest_card_text(page: Page) -> float:
    """The smallest font size (px) of any text on the wall's cards."""
    return float(
        page.evaluate(
            """() => Math.min(...Array.from(document.querySelectorAll('.card *'))
                 .filter((e) => e.offsetParent !== null && Array.from(e.childNodes)
                   .some((n) => n.nodeType === 3 && n.textContent.trim()))
                 .map((e) => parseFloat(getComputedStyle(e).fontSize)))"""
        )
    )


def test_wall_at_1080p_is_a_kitchen_display(
    page: Page, base: str, screens_site: Site, redis_url: str, screenshot: Callable[[str], Path]
) -> None:
    # Orders close at 21:00 BST (20:00 UTC) on their pickup day. Fri 10 July 19:30 UTC the
    # sweep finds Thursday's order with a note overdue; the venue's rule refuses cancelling
    # it, so it is set aside until 20:30 UTC = 21:30 BST.
    forbid_cancel_with_note(screens_site)
    aside = add_order(screens_site, at("2026-07-09 11:30"), note="nut allergy", items="2 × wrap")
    sweep(screens_site, redis_url, "2026-07-10 19:30")
    # Then, at 19:55 UTC (20:55 BST, the clock keeping time): Friday's order is due in
    # 5 min (soon), another of Thursday's came in after the sweep (overdue 23 h 55 min),
    # Saturday's is for tomorrow (later).
    screens_site.clock.now = at("2026-07-10 19:55")
    record_sweep(screens_site, minutes_ago=0)
    soon = add_order(screens_site, at("2026-07-10 19:30"), email=EMAIL, items="1 × falafel")
    overdue = add_order(screens_site, at("2026-07-09 12:00"), email=EMAIL, items="3 × soup")
    later = add_order(screens_site, at("2026-07-11 11:30"), email=EMAIL, items="1 × salad")
    save_board(screens_site, None)
    page.set_viewport_size({"width": 1920, "height": 1080})
    sign_in(page, base, "manager@venue.test", WALL)
    wait_live(page)
    # Without a board: the defaults from the column types, never the customer's email.
    expect(page.locator(f"#row-orders-{soon}")).to_be_visible()
    assert EMAIL not in page.locator("main").inner_text()
    expect(page.locator(f"#row-orders-{soon} dl")).to_contain_text("1 × falafel")

    save_board(screens_site, KITCHEN_BOARD)
    page.reload()
    wait_live(page)
    page.wait_for_load_state("networkidle")
    assert EMAIL not in page.locator("main").inner_text()
    card = page.locator(f"#row-orders-{soon}")
    # The fields the manifest names, in its order; the time it is for, on the venue's clock.
    expect(card.locator("dd")).to_have_text(["1 × falafel"])  # no note: nothing said
    expect(card.locator(".for time")).to_have_text("20:30")
    expect(card.locator(".waits")).to_contain_text("cancels 21:00")
    expect(card.locator(".relative")).to_have_text("in 5 min")
    # Urgency by the time each is for (issue 35): Friday's pickup 20:30 BST was 25 min ago,
    # Thursday's a day ago: both late; Saturday's on time. The timed move's words stay.
    expect(card).to_have_class("card late")
    expect(card.locator(".timer")).to_have_text("late 25 min")
    expect(card.locator(".waits")).to_have_class(re.compile(r"\bnear\b"))  # 5 min to 21:00
    expect(page.locator(f"#row-orders-{overdue}")).to_have_class("card late")
    expect(page.locator(f"#row-orders-{overdue} .for time")).to_have_text("Thu 13:00")
    expect(page.locator(f"#row-orders-{later}")).to_have_class("card on-time")
    expect(page.locator(f"#row-orders-{later} .relative")).to_have_text("in 1 d 5 min")
    held = page.locator(f"#row-orders-{aside}")
    expect(held).to_have_class("card aside late")
    expect(held.locator(".badge.aside")).to_contain_text("set aside until 21:30: ")
    expect(held.locator("dd")).to_have_text(["2 × wrap", "nut allergy"])
    screenshot("wall")
    # Read from three metres: no card text under 28 px at 1080p.
    assert smallest_card_text(page) >= 28
    # Columns fill the screen, in width and in height.
    box = page.locator(".columns").evaluate("c => c.getBoundingClientRect().toJSON()")
    assert box["width"] > 1850 and box["right"] <= 1920
    assert box["bottom"] > 1000 and box["bottom"] <= 1080
    card_box = card.evaluate("c => c.getBoundingClientRect().toJSON()")
    assert card_box["width"] >= 320  # cards as wide as a column of 1920 px lets them
    # The pending screen says the same of the row set aside (in staff's words, as the card)
    # and of the overdue one.
    page.goto(f"{base}/connections/venue/pending")
    expect(page.locator(f"#pending-orders-{aside} .time-left")).to_contain_text(
        "set aside until 21:30: Note breaks a rule of the table"
    )
    expect(page.locator(f"#pending-orders-{overdue} .time-left")).to_have_text(
        "due 23 h 55 min ago: moves at the next minute"
    )


def test_a_full_wall_column_pages_instead_of_shrinking_its_type(
    page: Page, base: str, screens_site: Site
) -> None:
    # 20 open orders for Sunday: more than a column shows at 1080p. Type stays at 28 px
    # and more (issue 35 item 3; before, it shrank to 20 px); the column pages instead.
    screens_site.clock.now = at("2026-07-10 12:00")
    record_sweep(screens_site, minutes_ago=0)
    save_board(screens_site, KITCHEN_BOARD)
    page.set_viewport_size({"width": 1920, "height": 1080})
    sign_in(page, base, "manager@venue.test", WALL)
    for _ in range(20):
        add_order(screens_site, at("2026-07-12 11:30"), status="confirmed", items="1 × wrap")
    page.reload()
    page.wait_for_load_state("networkidle")
    column = page.locator(".column[data-state=confirmed]")
    expect(column.locator(".more")).to_have_text(re.compile(r"^\+\d+ more · page 1 of \d+$"))
    assert smallest_card_text(page) >= 28


def test_wall_clock_is_set_by_the_server_with_the_round_trip(
    page: Page, base: str, screens_site: Site
) -> None:
    # The web's clock runs (as a real one does), set to read Fri 10 July 19:58:53 UTC now,
    # whatever this machine's clock says; the page loads slowly (its script 1.5 s late),
    # which a clock set at render or load time would lag. Friday's order closes at 21:00
    # BST = 20:00 UTC: "in 1 min" until 19:59:00, then under a minute ("now").
    ahead = at("2026-07-10 19:58:53") - datetime.now(UTC)
    screens_site.clock.now = at("2026-07-10 19:58:53")
    record_sweep(screens_site, minutes_ago=0)  # the clock keeps time
    key = add_order(screens_site, at("2026-07-10 18:00"), items="1 × tart")
    screens_site.app.config["CLOCK"] = lambda: datetime.now(UTC) + ahead
    try:

        def slow(route: Route) -> None:
            time.sleep(1.5)
            route.continue_()

        page.route("**/static/js/screens.js", slow)
        page.set_viewport_size({"width": 1920, "height": 1080})
        sign_in(page, base, "manager@venue.test", WALL)
        clock = page.locator("time.venue-clock")
        expect(clock).to_have_attribute("data-trip", re.compile(r"\d+"))
        for _ in range(3):
            shown = page.evaluate(
                "() => Date.now() + Number(document.querySelector('.venue-clock').dataset.offset)"
            )
            server = (datetime.now(UTC) + ahead).timestamp() * 1000
            assert abs(server - shown) < 500, f"the wall's clock is {server - shown:.0f} ms off"
            page.wait_for_timeout(300)
        # The card's time left changes as the server's minute turns, not a minute after load.
        expect(page.locator(f"#row-orders-{key} .relative")).to_have_text("now")
    finally:
        screens_site.app.config["CLOCK"] = screens_site.clock


def test_a_clock_measured_after_the_minute_turned_still_refetches_that_minute(
    page: Page, base: str, screens_site: Site
) -> None:
    # Friday's order closes at 21:00 BST = 20:00 UTC. The wall is drawn at 19:59:59 UTC and
    # fetched again as its socket opens ("now": under a minute left); only then does its
    # clock's measurement come back, reading 20:00:00, the minute its words were drawn in
    # being over. They are fetched again at 20:00:01.5 ("moves at the next minute"), not at
    # 20:01:01.5 as the next minute seen from the measurement would have it. The server's
    # clock stands still at each reading, and the measurement is held until the socket's
    # fetch is done, so nothing here depends on how fast the machine is.
    screens_site.clock.now = at("2026-07-10 19:59")
    record_sweep(screens_site, minutes_ago=0)
    key = add_order(screens_site, at("2026-07-10 18:00"), items="1 × pie")
    page.set_viewport_size({"width": 1920, "height": 1080})
    sign_in(page, base, "manager@venue.test", "/connections")
    expect(page.locator("#connection-venue")).to_have_count(1)
    screens_site.app.config["CLOCK"] = lambda: at("2026-07-10 19:59:59")
    held: list[Route] = []
    released = threading.Event()

    def measurement(route: Route) -> None:
        if released.is_set():
            route.fulfill(json={"now": "2026-07-10T20:00:00+00:00"})
        else:
            held.append(route)

    try:
        page.route("**/clock", measurement)
        with page.expect_response(lambda r: "/orders/columns" in r.url) as fetched:
            page.goto(f"{base}{WALL}")
        card = page.locator(f"#row-orders-{key} .relative")
        expect(card).to_have_text("now")
        assert fetched.value.ok
        screens_site.app.config["CLOCK"] = lambda: at("2026-07-10 20:00:01.5")
        released.set()
        for route in held:
            route.fulfill(json={"now": "2026-07-10T20:00:00+00:00"})
        expect(card).to_have_text("moves at the next minute")
    finally:
        screens_site.app.config["CLOCK"] = screens_site.clock


def test_due_rows_say_what_is_true_of_a_stalled_clock_said_once(
    page: Page, base: str, screens_site: Site, screenshot: Callable[[str], Path]
) -> None:
    # Sat 11 July 05:09 UTC (06:09 BST) was the last sweep; now 12:00 UTC (13:00 BST):
    # stalled 6 h 51 min. Friday's order closed Fri 21:00 BST, 16 h ago.
    screens_site.clock.now = at("2026-07-11 12:00")
    record_sweep(screens_site, minutes_ago=6 * 60 + 51)
    save_board(screens_site, KITCHEN_BOARD)
    key = add_order(screens_site, at("2026-07-10 11:30"), items="1 × stew")
    page.set_viewport_size({"width": 1920, "height": 1080})
    sign_in(page, base, "manager@venue.test", "/apps/venue/venue/orders")
    wait_live(page)
    words = "due 16 h ago: waiting for the clock (stalled since 06:09)"
    expect(page.locator(f"#row-orders-{key} .relative")).to_have_text(words)
    # The header says both the socket and the clock, in the stalled colour.
    state = page.locator("header.top .live-state")
    expect(state.locator(".clock-state")).to_have_text(" · clock stalled 6 h 51 min")
    colour = state.evaluate("s => getComputedStyle(s, '::before').color")
    assert colour == "rgb(255, 138, 128)", colour
    board = page  # stays open on the board, live
    page = board.context.new_page()
    page.goto(f"{base}/connections/venue/pending")
    row = page.locator(f"#pending-orders-{key}")
    expect(row.locator(".time-left")).to_have_text(words)
    expect(row.locator("td").first).to_have_text(f"Venue · Orders #{key}")
    expect(row.locator("td").nth(1)).to_have_text("rule 1: Placed → Cancelled")
    # The connection's card: one state, said once.
    page.goto(f"{base}/connections")
    card = page.locator("#connection-venue")
    expect(card.locator(".badge.health")).to_have_text("stalled 6 h 51 min")
    expect(card.locator("h2 .badge")).to_have_count(1)
    expect(card).to_contain_text("Timed moves stalled: last sweep 6 h 51 min ago.")
    # The header of the list of connections says the worst clock among them.
    expect(page.locator("header.top .clock-state")).to_have_text(" · clock stalled 6 h 51 min")
    assert "running" not in card.inner_text()
    screenshot("board_stalled")  # the board, its header and card words while stalled

    # The clock back: the open board's header says so, and its card, fetched again as the
    # state changed (no reload), that the row moves at the next minute.
    record_sweep(screens_site, minutes_ago=0)
    expect(board.locator("header.top .clock-state")).to_have_text(
        " · clock running", timeout=2 * LIVE_MS
    )
    expect(board.locator(f"#row-orders-{key} .relative")).to_have_text(
        "due 16 h ago: moves at the next minute", timeout=2 * LIVE_MS
    )
    page.close()


def test_redis_unreachable_is_the_connections_one_state(
    page: Page, base: str, screens_site: Site
) -> None:
    screens_site.clock.now = at("2026-07-11 12:00")
    record_sweep(screens_site, minutes_ago=0)
    publisher = screens_site.app.extensions["adminium.publisher"]
    working = publisher.client
    sign_in(page, base, "manager@venue.test")
    expect(page.locator("#connection-venue .badge.health")).to_have_text("running")
    # The web's Redis gone (a port nothing listens on).
    publisher.client = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=1)
    try:
        page.reload()
        card = page.locator("#connection-venue")
        expect(card.locator(".badge.health")).to_have_text("Redis unreachable")
        expect(card).to_contain_text("Redis does not answer")
        assert "running" not in card.inner_text()
    finally:
        publisher.client.close()
        publisher.client = working


def test_row_page_and_history_use_the_manifests_titles(
    page: Page, base: str, screens_site: Site
) -> None:
    screens_site.clock.now = at("2026-07-10 09:00")
    sign_in(page, base, "manager@venue.test", "/apps/venue/venue/orders")
    wait_live(page)  # signed in, on the board
    # A row made through the write pipeline has its creation in its history.
    made = create_row(
        screens_site.store(),
        WriteRequest(
            "orders",
            Actor.person("manager@venue.test"),
            at("2026-07-10 08:59"),
            values={"pickup_at": at("2026-07-11 11:30"), "items": "1 × pie"},
        ),
    )
    key = made.row["id"]
    page.goto(f"{base}/apps/venue/venue/orders/{key}")
    expect(page.locator("main h1")).to_have_text(f"Orders #{key}")
    expect(page).to_have_title(f"Orders #{key} · Venue · Adminium")
    page.get_by_role("button", name="Move to Confirmed").click()
    history = page.locator(".history .audit li")
    expect(history.first).to_contain_text("moved Placed → Confirmed", timeout=LIVE_MS)
    expect(history.last).to_contain_text("created as Placed")
    expect(history.last).not_to_contain_text("—")
