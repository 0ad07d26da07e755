"""In Chromium: set-aside fixes keep keyboard focus where the person was, Save
confirms, the header's badge follows each fix, several rows move at once and the empty state
comes back; the pending screen draws its 24-hour timeline (a screenshot of each)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
import sqlalchemy as sa
from playwright.sync_api import Page, expect

from core.basics.events import RowEvent
from services.events import events_channel
from tests.browser.test_screens import LIVE_MS, sign_in, sweep, wait_live
from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import NEEDS_NOTE, add_order, served

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def base(screens_site: Site) -> Iterator[str]:
    """The venue site served by a real threaded server."""
    with served(screens_site.app) as port:
        yield f"http://127.0.0.1:{port}"


def focused(page: Page) -> str:
    return str(page.evaluate("document.activeElement.id"))


def test_set_aside_fixes_keep_focus_confirm_and_empty_the_list(
    page: Page, base: str, screens_site: Site, redis_url: str, screenshot: Callable[[str], Path]
) -> None:
    # Three orders without a note for Wed 8 July 12:30 BST: due at 21:00 BST = 20:00 UTC;
    # the 20:01 UTC sweep is refused (the venue wants a note on a cancelled order). The
    # web's clock reads 20:04 UTC: each is tried again at 21:01 UTC = 22:01 BST, in 57 min.
    with screens_site.store().engine.begin() as conn:
        conn.execute(sa.text(NEEDS_NOTE))
    first, second, third = (add_order(screens_site, at("2026-07-08 11:30")) for _ in range(3))
    sweep(screens_site, redis_url, "2026-07-08 20:01")
    screens_site.clock.now = at("2026-07-08 20:04")
    page.set_viewport_size({"width": 1440, "height": 1000})
    sign_in(page, base, "staff@venue.test", "/connections/venue/set-aside")
    wait_live(page)
    item = page.locator(f"#aside-orders-{first}")
    expect(item).to_contain_text(
        "the database refused the value: orders.note must be filled when cancelled"
        " (check cancelled_needs_note)"
    )
    expect(item).to_contain_text("tried again at 22:01, in 57 min")
    expect(page.locator("#aside-count-venue .badge")).to_have_text("3")
    screenshot("set_aside")

    # Fix what refused it, from the keyboard: Save confirms, and focus stays on Save.
    page.locator(f"#aside-orders-{first}-value").fill("at the door")
    page.locator(f"#aside-orders-{first}-save").focus()
    page.keyboard.press("Enter")
    expect(item.locator(".said")).to_contain_text(
        f"Saved: Orders #{first}: Note is now at the door."
    )
    expect(page.locator(f"#aside-orders-{first}-save")).to_be_focused()
    # Try again now: it moves and leaves; focus goes on to the next row.
    page.locator(f"#aside-orders-{first}-retry").focus()
    page.keyboard.press("Enter")
    expect(item).to_have_count(0, timeout=LIVE_MS)
    expect(page.locator(f"#aside-orders-{second}-pick")).to_be_focused()
    expect(page.locator("#aside-count-venue .badge")).to_have_text("2", timeout=LIVE_MS)

    # Several at once: select all, move to confirmed; one answer; the empty state is back.
    page.locator("#set-aside-pick-all").check()
    page.locator("#bulk-to").select_option("confirmed")
    page.locator("#bulk-move").click()
    expect(page.locator("#bulk-answer")).to_contain_text("Moved to Confirmed: 2 of 2 moved.")
    expect(page.locator("#set-aside-empty")).to_be_visible(timeout=LIVE_MS)
    expect(page.locator("#aside-count-venue .badge")).to_have_text("0", timeout=LIVE_MS)
    statuses = [screens_site.row("orders", k)["status"] for k in (first, second, third)]
    assert statuses == ["cancelled", "confirmed", "confirmed"]
    screens_site.clock.now = at("2026-07-10 09:00")
    with screens_site.store().engine.begin() as conn:
        conn.execute(sa.text("ALTER TABLE public.orders DROP CONSTRAINT cancelled_needs_note"))


def test_a_push_redrawing_the_focused_item_gives_focus_back_before_any_key_can_land(
    page: Page, base: str, screens_site: Site, redis_url: str
) -> None:
    """A push that draws again the item whose "Try again now" has focus puts focus back on
    the new button within the push's own task, so an Enter pressed as the push lands reaches
    the button, not the page's body (a clean-clone run lost one so: no request was sent)."""
    with screens_site.store().engine.begin() as conn:
        conn.execute(sa.text(NEEDS_NOTE))
    key = add_order(screens_site, at("2026-07-08 11:30"))
    sweep(screens_site, redis_url, "2026-07-08 20:01")
    was = screens_site.clock.now
    screens_site.clock.now = at("2026-07-08 20:04")
    try:
        sign_in(page, base, "staff@venue.test", "/connections/venue/set-aside")
        wait_live(page)
        retry = page.locator(f"#aside-orders-{key}-retry")
        retry.focus()
        # What has focus as the push's message is done, read in the push's own task.
        page.evaluate(
            """() => {
              window.focusAtPush = [];
              document.addEventListener("htmx:wsAfterMessage", () => {
                const active = document.activeElement;
                window.focusAtPush.push(active && active.isConnected ? active.id : "");
              });
            }"""
        )
        before = retry.element_handle()
        event = RowEvent("venue", "venue", "orders", key, "placed", "staff@venue.test")
        with redis.Redis.from_url(redis_url) as client:
            client.publish(events_channel("venue"), json.dumps(event.as_dict()))
        page.wait_for_function("() => window.focusAtPush.length > 0", timeout=LIVE_MS)
        assert page.evaluate("window.focusAtPush[0]") == f"aside-orders-{key}-retry"
        # The item was drawn afresh: the button that has focus is the new one.
        assert before.evaluate("(old) => !old.isConnected")
    finally:
        # The venue's rule goes; the row's next try (21:01 UTC) moves it and it leaves.
        with screens_site.store().engine.begin() as conn:
            conn.execute(sa.text("ALTER TABLE public.orders DROP CONSTRAINT cancelled_needs_note"))
        sweep(screens_site, redis_url, "2026-07-08 21:02")
        screens_site.clock.now = was
        assert screens_site.row("orders", key)["status"] == "cancelled"


def test_pending_screen_draws_the_next_24_hours(
    page: Page, base: str, screens_site: Site, screenshot: Callable[[str], Path]
) -> None:
    # The web's clock: Fri 10 July 09:00 UTC = 10:00 BST. Friday pickups close 21:00 BST;
    # an offer runs out at 13:33:30 BST.
    for hour in ("11:30", "12:00", "12:30"):
        add_order(screens_site, at(f"2026-07-10 {hour}"))
    event = screens_site.insert("events")
    screens_site.insert(
        "tickets", event_id=event, status="offered", offer_until=at("2026-07-10 12:33:30")
    )
    page.set_viewport_size({"width": 1440, "height": 1000})
    sign_in(page, base, "manager@venue.test", "/connections/venue/pending")
    wait_live(page)
    expect(page.locator(".pending.htmx-request, .htmx-settling")).to_have_count(0)
    chart = page.locator("svg.timeline")
    expect(chart).to_be_visible()
    expect(chart.locator("rect.bar")).to_have_count(2)
    expect(page.locator(".timeline-figure .legend li")).to_have_count(2)
    expect(page.locator("table.pending")).to_contain_text("Fri 10 Jul 2026 13:33")
    expect(page.locator("table.pending")).to_contain_text("closing hour on Friday (opening hours)")
    # The bars are coloured by the stylesheet (no style attribute: the CSP refuses them).
    # Read in the page until it holds (a refetch may swap the chart in between).
    page.wait_for_function(
        """() => {
            const bar = document.querySelector("svg.timeline rect.bar");
            const fill = bar ? getComputedStyle(bar).fill : "";
            return fill !== "" && fill !== "none" && fill !== "rgb(0, 0, 0)";
        }"""
    )
    screenshot("pending")
