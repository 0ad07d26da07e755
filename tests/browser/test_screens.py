"""The screens in Chromium: sign in, a board a sweep changes without a reload, a set-aside
row fixed by hand leaving its list, a paused connection the board names; a screenshot each."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import redis
from playwright.sync_api import Page, expect

from core.basics.actors import Actor
from core.writes.pipeline import change_row
from core.writes.request import WriteRequest
from services import sweeps
from services.events import Publisher
from services.models import db
from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import PASSWORD, add_order, forbid_cancel_with_note, served

pytestmark = pytest.mark.browser
LIVE_MS = 15_000
"""The deadline for a pushed change to show on an open screen (as PUSH_DEADLINE in
tests/integration/test_screens_live.py): the wait ends when the change is drawn; a push
takes well under a second (bench/live.py measures it), but a loaded machine may hold the
page or the hub's thread for seconds."""


@pytest.fixture(scope="module")
def base(screens_site: Site) -> Iterator[str]:
    """The venue site served by a real threaded server."""
    with served(screens_site.app) as port:
        yield f"http://127.0.0.1:{port}"


def sign_in(page: Page, base: str, email: str, target: str = "/connections") -> None:
    """Sign in through the form, on the way to `target`, and wait until the page it leads to
    has loaded: its deferred scripts run, so htmx has bound its forms. (A button clicked
    before that submits its form as a plain GET, reloading the page with no request made:
    under load that lost "Add sample data"'s answer.)"""
    page.goto(f"{base}{target}")
    expect(page).to_have_title("Sign in · Adminium")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(lambda url: urlsplit(url).path != "/signin", wait_until="load")


def wait_live(page: Page) -> None:
    """Wait until the screen's socket is open (and its refetch made)."""
    expect(page.locator("body[data-live=open]")).to_have_count(1)


def wait_registered(site: Site, view: str = "") -> None:
    """Wait until the web's hub holds an open socket of a board drawn as `view` ("", "wall",
    "touch"): a page says it is live as its handshake is answered, a moment before the server
    adds its socket to the hub (`Hub.register`), so a close of every socket sent in between
    would miss it. Bounded by LIVE_MS."""
    hub = site.app.extensions["adminium.live"]
    deadline = time.monotonic() + LIVE_MS / 1000
    while not any(screen.view == view for screen, _ in list(hub.sockets.values())):
        assert time.monotonic() < deadline, f"no socket of a {view or 'board'} view registered"
        time.sleep(0.01)


def sweep(site: Site, redis_url: str, when: str) -> None:
    """The minute sweep of the venue at an instant in UTC, publishing its moves."""
    client = redis.Redis.from_url(redis_url)
    try:
        with site.app.app_context():
            sweeps.sweep(db.session, "venue", now=at(when), publisher=Publisher(client))
    finally:
        client.close()


def test_board_card_moves_to_cancelled_when_the_sweep_runs(
    page: Page,
    base: str,
    screens_site: Site,
    redis_url: str,
    screenshot: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Pickup Mon 6 July... Monday is closed: the day ends at midnight. Use Tuesday 7 July
    # 12:30 BST: cancelled at 21:00 BST = 20:00 UTC; swept at 20:01 UTC.
    key = add_order(screens_site, at("2026-07-07 11:30"), note="2 x falafel wrap")
    add_order(screens_site, at("2026-07-10 11:30"), note="1 x soup")
    sign_in(page, base, "manager@venue.test", "/apps/venue/venue/orders")
    expect(page.locator("h1")).to_have_text("Venue · Orders")
    card = page.locator(f"#row-orders-{key}")
    expect(page.locator(f"#column-orders-placed #row-orders-{key}")).to_be_visible()
    expect(card).to_contain_text("cancels Tue 21:00")
    wait_live(page)
    screenshot("board")

    # The board's clock at the sweep: Tuesday's cancelled orders are the column's today.
    monkeypatch.setattr(screens_site.clock, "now", at("2026-07-07 20:01"))
    sweep(screens_site, redis_url, "2026-07-07 20:01")

    moved = page.locator(f"#column-orders-cancelled #row-orders-{key}")
    expect(moved).to_be_visible(timeout=LIVE_MS)
    expect(page.locator(f"#column-orders-placed #row-orders-{key}")).to_have_count(0)
    expect(moved).not_to_contain_text("cancels")

    page.locator(f"#row-orders-{key} a.key").click()
    expect(page.locator(".history")).to_contain_text("Timed move")
    screenshot("row")
    page.goto(f"{base}/connections/venue/pending")
    expect(page.locator("table.pending")).to_be_visible()
    screenshot("pending")


def test_set_aside_row_fixed_by_hand_leaves_the_list(
    page: Page,
    base: str,
    screens_site: Site,
    redis_url: str,
    screenshot: Callable[[str], Path],
) -> None:
    # The venue's own database refuses cancelling an order with a note: Wed 8 July closes
    # 21:00 BST = 20:00 UTC, so the sweep at 20:01 UTC sets it aside.
    forbid_cancel_with_note(screens_site)
    key = add_order(screens_site, at("2026-07-08 11:30"), note="allergy: nuts")
    sweep(screens_site, redis_url, "2026-07-08 20:01")
    sign_in(page, base, "staff@venue.test", "/connections/venue/set-aside")
    item = page.locator(f"#aside-orders-{key}")
    expect(item).to_contain_text("VALUE_REFUSED")
    wait_live(page)
    screenshot("set_aside")

    item.get_by_role("button", name="Move to confirmed").click()

    expect(item).to_have_count(0, timeout=LIVE_MS)
    assert screens_site.row("orders", key)["status"] == "confirmed"


def test_paused_connection_is_named_on_the_open_board(
    page: Page, base: str, screenshot: Callable[[str], Path]
) -> None:
    sign_in(page, base, "admin@venue.test")
    screenshot("connections")
    board = page.context.new_page()
    board.goto(f"{base}/apps/venue/venue/orders")
    banner = board.locator("#paused-venue")
    expect(banner).to_be_empty()
    wait_live(board)

    asked: list[str] = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    page.get_by_role("button", name="Pause").click()

    expect(banner).to_contain_text("Connection venue is paused", timeout=LIVE_MS)
    expect(page.locator("#connection-venue")).to_contain_text("paused")
    assert asked == ["Pause venue? No timed move is made on any of its apps until it is resumed."]
    page.get_by_role("button", name="Resume").click()
    expect(banner).to_be_empty(timeout=LIVE_MS)
    board.close()


def test_reopened_socket_refetches_what_it_missed(
    page: Page, base: str, screens_site: Site
) -> None:
    key = add_order(screens_site, at("2026-07-10 11:30"))
    # The refetch the socket's first opening makes is answered before the row changes.
    with page.expect_response(lambda answer: "/columns" in answer.url):
        sign_in(page, base, "manager@venue.test", "/apps/venue/venue/orders")
    wait_live(page)
    # A move whose event is never published: what pub/sub loses while a screen is away.
    change_row(
        screens_site.store(),
        WriteRequest(
            "orders",
            Actor.person("manager@venue.test", frozenset({"manager"})),
            at("2026-07-10 09:00"),
            key=key,
            move_to="confirmed",
        ),
    )
    expect(page.locator(f"#column-orders-placed #row-orders-{key}")).to_be_visible()

    # The server side fails: every socket is closed with 1011, and the ws extension reconnects.
    screens_site.app.extensions["adminium.live"].close_all()

    expect(page.locator(f"#column-orders-confirmed #row-orders-{key}")).to_be_visible(
        timeout=LIVE_MS
    )
    expect(page.locator("body[data-live=open]")).to_have_count(1)


def test_sign_in_page(page: Page, base: str, screenshot: Callable[[str], Path]) -> None:
    page.goto(f"{base}/signin")
    page.get_by_label("Email").fill("manager@venue.test")
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("do not match")
    screenshot("sign_in")
