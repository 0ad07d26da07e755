"""In Chromium at 390×844 (a phone): every tap target of the set-aside list and the row page
at least 44 px, the first set-aside row in view with the app's bar behind Menu, a toast
that never covers the Save of the item whose move was refused, a set-aside card's reason on
the board at 16 px with its lines apart; and the clock's log listing a stall's skipped
minutes (a screenshot of the phone's list and of the log).

Three orders without a note for Wed 8 July 12:30 BST pickups are due at closing, 21:00 BST
= 20:00 UTC; the 20:01 UTC sweep is refused (the venue wants a note on a cancelled order)
and sets each aside. The web's clock reads 20:04 UTC."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from playwright.sync_api import Page, expect

from tests.browser.test_screens import sign_in, sweep, wait_live
from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import NEEDS_NOTE, add_order, served

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
TARGET = 44
"""The smallest tap target, in CSS px, each way."""

# Every control a finger taps, as its box: a checkbox by its label (its hit area) when it
# has one; hidden ones (behind a closed menu, display none) left out.
TAP_TARGETS = """(within) => {
  const root = document.querySelector(within) || document.body;
  const found = [];
  root.querySelectorAll("a[href], button, select, input:not([type=hidden]), summary, textarea")
    .forEach((element) => {
      const hit = element.matches("input[type=checkbox], input[type=radio]")
        ? (element.closest("label") || element) : element;
      const box = hit.getBoundingClientRect();
      if (!hit.getClientRects().length || box.width === 0) { return; }
      found.push({
        what: `${element.tagName.toLowerCase()}#${element.id || ""}`
          + ` ${(element.textContent || element.getAttribute("aria-label") || "").trim()}`,
        width: Math.round(box.width * 10) / 10,
        height: Math.round(box.height * 10) / 10,
      });
    });
  return found;
}"""


@pytest.fixture(scope="module")
def base(screens_site: Site) -> Iterator[str]:
    with served(screens_site.app) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def asides(screens_site: Site, redis_url: str) -> Iterator[list[int]]:
    with screens_site.store().engine.begin() as conn:
        conn.execute(sa.text(NEEDS_NOTE))
    keys = [add_order(screens_site, at("2026-07-08 11:30")) for _ in range(3)]
    sweep(screens_site, redis_url, "2026-07-08 20:01")
    screens_site.clock.now = at("2026-07-08 20:04")
    yield keys
    screens_site.clock.now = at("2026-07-10 09:00")
    with screens_site.store().engine.begin() as conn:
        conn.execute(sa.text("ALTER TABLE public.orders DROP CONSTRAINT cancelled_needs_note"))


def open_settled(page: Page, base: str, path: str, refetch: str) -> None:
    """Sign in as staff onto `path` at the phone's size, and wait until the list its socket
    fetches again as it opens (`refetch`, a part of that URL) has been drawn."""
    page.set_viewport_size(PHONE)
    with page.expect_response(lambda answer: refetch in answer.url):
        sign_in(page, base, "staff@venue.test", path)
    wait_live(page)
    page.wait_for_function(
        "() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling')"
    )


def screen_shot(page: Page, name: str) -> None:
    """What the phone's screen shows, as `<name>.png` in ADMINIUM_SCREENSHOTS (when set):
    the first screen, as a person sees it, not the whole page."""
    folder = os.environ.get("ADMINIUM_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"))


def small(page: Page, within: str = "body") -> list[dict[str, object]]:
    """The tap targets under 44 px either way."""
    found = page.evaluate(TAP_TARGETS, within)
    assert found, f"no tap target found in {within}"
    return [t for t in found if t["width"] < TARGET or t["height"] < TARGET]  # type: ignore[operator]


def test_the_phones_set_aside_list_has_44_px_targets_and_the_first_row_in_view(
    page: Page, base: str, asides: list[int]
) -> None:
    open_settled(page, base, "/connections/venue/set-aside", "/set-aside/list")
    expect(page.locator("#set-aside-list > li.aside")).to_have_count(3)
    assert small(page) == []
    # The content first: the app's bar is behind Menu, and the first row's refusal is in
    # view before any scrolling.
    assert page.evaluate("window.scrollY") == 0
    assert page.locator("nav.app-bar a").first.is_hidden()
    first = page.locator(f"#aside-orders-{asides[0]} .refused")
    expect(first).to_contain_text("Needs a note before it can be cancelled")
    bottom = page.wait_for_function(
        """(selector) => {
            const found = document.querySelector(selector);
            const drawn = found && found.getClientRects().length;
            return drawn ? found.getBoundingClientRect().bottom : null;
        }""",
        arg=f"#aside-orders-{asides[0]} .refused",
    ).json_value()
    assert bottom <= PHONE["height"], bottom
    screen_shot(page, "set_aside_phone")
    # Menu opens the bar: each of its links 44 px tall too; Escape closes it.
    page.get_by_role("button", name="Menu").click()
    expect(page.locator("nav.app-bar a").first).to_be_visible()
    assert small(page, "#site-menu") == []
    page.keyboard.press("Escape")
    expect(page.locator("nav.app-bar a").first).to_be_hidden()


def test_the_phones_row_page_has_44_px_targets(page: Page, base: str, asides: list[int]) -> None:
    open_settled(page, base, f"/apps/venue/venue/orders/{asides[1]}", "/detail")
    expect(page.locator(".aside-status")).to_contain_text("set aside until 22:01")
    assert small(page) == []


def test_a_toast_after_a_refused_move_does_not_cover_save(
    page: Page, base: str, asides: list[int], screens_site: Site
) -> None:
    key = asides[2]
    open_settled(page, base, "/connections/venue/set-aside", "/set-aside/list")
    save = page.locator(f"#aside-orders-{key}-save")
    move = page.locator(f"#aside-orders-{key}-move-cancelled")
    # Save near the foot of the screen, where a toast lands; its item's Move above it.
    save.scroll_into_view_if_needed()
    page.evaluate(
        """(id) => { const box = document.getElementById(id).getBoundingClientRect();
                     window.scrollBy(0, box.bottom - (window.innerHeight - 40)); }""",
        f"aside-orders-{key}-save",
    )
    assert move.bounding_box() is not None
    page.once("dialog", lambda dialog: dialog.accept())
    move.click()
    toast = page.locator(".toast.refused")
    expect(toast).to_contain_text(
        f"Not done: Orders #{key}: Needs a note before it can be cancelled. Fill in Note,"
    )
    expect(toast.locator("code")).to_have_text("VALUE_REFUSED")
    # Its placement: the page places toasts in the frame after an answer has settled.
    expect(page.locator(".htmx-request, .htmx-swapping, .htmx-settling")).to_have_count(0)
    page.evaluate(
        "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"
    )
    toasts, button = page.locator("#toasts").bounding_box(), save.bounding_box()
    assert toasts is not None and button is not None
    assert button["y"] >= 0 and button["y"] + button["height"] <= PHONE["height"], button
    apart = (
        toasts["y"] >= button["y"] + button["height"]
        or button["y"] >= toasts["y"] + toasts["height"]
    )
    assert apart, (toasts, button)
    assert screens_site.row("orders", key)["status"] == "placed"


def test_a_set_aside_cards_reason_reads_at_16_px_on_the_phones_board(
    page: Page, base: str, asides: list[int]
) -> None:
    open_settled(page, base, "/apps/venue/venue/orders", "/columns")
    reason = page.locator(f"#row-orders-{asides[0]} .aside-mark .badge")
    expect(reason).to_contain_text("set aside until 22:01: Needs a note before it can be")
    # Read in one go in the page (a refetch may swap the board in between two reads): its
    # size, and its lines' boxes, each below the one before.
    measured = page.wait_for_function(
        """(selector) => {
            const badge = document.querySelector(selector);
            const then = badge && badge.querySelector(".then");
            if (!then || !then.getClientRects().length) { return null; }
            return {
                size: parseFloat(getComputedStyle(badge).fontSize),
                lines: Array.from(then.getClientRects()).map((r) => [r.top, r.bottom]),
            };
        }""",
        arg=f"#row-orders-{asides[0]} .aside-mark .badge",
    ).json_value()
    assert measured["size"] >= 16, measured
    lines = measured["lines"]
    assert len(lines) >= 2, lines
    assert all(b[0] >= a[1] - 0.5 for a, b in itertools.pairwise(lines)), lines


def test_the_clock_log_lists_a_stalls_skipped_minutes(
    page: Page,
    base: str,
    asides: list[int],
    screens_site: Site,
    redis_url: str,
    screenshot: Callable[[str], Path],
) -> None:
    # After the 20:01 UTC sweep: none from 20:02 to 20:05 (a stall), then 20:06 and 20:07;
    # the web's clock at 20:08:10 UTC. An order with its note, due at 20:00 too, was added
    # during the stall: the 20:06 sweep moves it.
    add_order(screens_site, at("2026-07-08 11:30"), note="at the door")
    for when in ("20:06", "20:07"):
        sweep(screens_site, redis_url, f"2026-07-08 {when}")
    screens_site.clock.now = at("2026-07-08 20:08:10")
    try:
        page.set_viewport_size({"width": 1280, "height": 800})
        sign_in(page, base, "manager@venue.test", "/connections")
        page.locator(".clock-log-link").click()
        expect(page).to_have_title("The clock's log · venue · Adminium")
        gap = page.locator(".log-line.gap")
        expect(gap).to_have_count(1)
        expect(gap.locator("time")).to_have_text("21:02–21:05")
        expect(gap).to_contain_text("skipped 4 min: no sweep ran")
        swept = page.locator(".log-line.swept")
        expect(swept).to_have_count(2)
        expect(swept.nth(0).locator("time")).to_have_text("21:06")
        expect(swept.nth(0).locator(".what")).to_have_text("moved 1")
        expect(swept.nth(1).locator("time")).to_have_text("21:01")
        expect(swept.nth(1).locator(".what")).to_have_text("set aside 3")
        expect(page.locator(".log-sum")).to_contain_text("3 minutes swept, 4 skipped")
        screenshot("clock_log")
        page.set_viewport_size(PHONE)
        assert small(page) == []
        screen_shot(page, "clock_log_phone")
    finally:
        screens_site.clock.now = at("2026-07-08 20:04")
