"""In Chromium: a ticket moved on with one tap on the board or Enter on a picked card (the
table's first forward move the person may make), undone by the toast's Undo or `U`; the
recall list (`R`) of the tickets moved on from this screen, one brought back by its undo
move; the plain wall display-only (no links, no bump), the touch wall bumping on a tap."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.test_screens import LIVE_MS, sign_in, wait_live
from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import add_order, served

pytestmark = pytest.mark.browser
BOARD = "/apps/venue/venue/orders"


@pytest.fixture(scope="module")
def base(screens_site: Site) -> Iterator[str]:
    """The venue site served by a real threaded server."""
    with served(screens_site.app) as port:
        yield f"http://127.0.0.1:{port}"


def status(site: Site, key: int) -> str:
    return str(site.row("orders", key)["status"])


def test_a_tap_moves_a_ticket_on_and_the_toast_s_undo_brings_it_back(
    page: Page, base: str, screens_site: Site, screenshot: Callable[[str], Path]
) -> None:
    key = add_order(screens_site, at("2026-07-10 12:00"))
    sign_in(page, base, "staff@venue.test", BOARD)
    wait_live(page)
    card = page.locator(f"#row-orders-{key}")
    bump = card.get_by_role("button", name=f"Move #{key} to Confirmed")
    expect(bump).to_have_text("→ Confirmed")

    bump.click()

    toast = page.locator("#toasts .toast").last
    expect(toast).to_contain_text(f"Orders #{key} moved to Confirmed by you.")
    expect(page.locator(f"#column-orders-confirmed #row-orders-{key}")).to_be_visible(
        timeout=LIVE_MS
    )
    assert status(screens_site, key) == "confirmed"
    # On Confirmed the card offers its next forward move (Ready), never the undo.
    expect(card.locator(".bump")).to_have_text("→ Ready")
    screenshot("board_bump")

    toast.get_by_role("button", name="Undo to Placed").click()
    expect(page.locator(f"#column-orders-placed #row-orders-{key}")).to_be_visible(timeout=LIVE_MS)
    assert status(screens_site, key) == "placed"
    history = [e for e in screens_site.audit() if e["row_key"] == str(key)]
    # Both moves the person's own, through the write pipeline (its audit).
    assert [(e["move_from"], e["move_to"], e["actor"]) for e in history][-2:] == [
        ("placed", "confirmed", "staff@venue.test"),
        ("confirmed", "placed", "staff@venue.test"),
    ]


def test_keys_pick_bump_undo_and_recall_a_ticket(
    page: Page, base: str, screens_site: Site, screenshot: Callable[[str], Path]
) -> None:
    first = add_order(screens_site, at("2026-07-10 12:00"))
    second = add_order(screens_site, at("2026-07-10 12:15"))
    sign_in(page, base, "staff@venue.test", BOARD)
    wait_live(page)
    page.evaluate("window.localStorage.clear()")
    # Arrows pick a ticket: the first of the first column, then down its column.
    page.locator("body").press("ArrowDown")
    placed = page.locator("#column-orders-placed .card")
    expect(placed.first).to_be_focused()
    picked = placed.first.get_attribute("id")
    page.keyboard.press("ArrowDown")
    expect(placed.nth(1)).to_be_focused()
    page.keyboard.press("ArrowUp")
    expect(page.locator(f"#{picked}")).to_be_focused()
    # The placed column holds other tests' tickets of the site too: walk the arrows to
    # this test's first, one card at a time, each step the next card in the column.
    cards = placed.evaluate_all("cards => cards.map(card => card.id)")
    start, goal = cards.index(str(picked)), cards.index(f"row-orders-{first}")
    step = 1 if goal >= start else -1
    for index in range(start + step, goal + step, step):
        page.keyboard.press("ArrowDown" if step == 1 else "ArrowUp")
        expect(page.locator(f"#{cards[index]}")).to_be_focused()
    wanted = page.locator(f"#row-orders-{first}")
    expect(wanted).to_be_focused()

    page.keyboard.press("Enter")
    expect(page.locator(f"#column-orders-confirmed #row-orders-{first}")).to_be_visible(
        timeout=LIVE_MS
    )
    assert status(screens_site, first) == "confirmed"
    # The selection stays in its column.
    expect(page.locator("#column-orders-placed .card:focus")).to_have_count(1)

    page.keyboard.press("u")
    expect(page.locator(f"#column-orders-placed #row-orders-{first}")).to_be_visible(
        timeout=LIVE_MS
    )
    assert status(screens_site, first) == "placed"

    # Space bumps too; then R lists both moved on from here, the newest first.
    page.locator(f"#row-orders-{second}").focus()
    page.keyboard.press(" ")
    expect(page.locator(f"#column-orders-confirmed #row-orders-{second}")).to_be_visible(
        timeout=LIVE_MS
    )
    page.locator("#toasts .toast").evaluate_all("toasts => toasts.forEach(t => t.remove())")
    page.keyboard.press("r")
    recall = page.locator("dialog#recall")
    expect(recall).to_be_visible()
    items = recall.locator(".recall-item")
    expect(items).to_have_count(2)
    expect(items.nth(0)).to_contain_text(f"#{second}")
    # Moved on at the web's clock, 09:00 UTC on 10 July: 10:00 on the venue's (London, BST).
    expect(items.nth(0)).to_contain_text("Placed → Confirmed at 10:00")
    expect(items.nth(1)).to_contain_text(f"#{first}")
    expect(items.nth(1)).to_contain_text("back in Placed")
    screenshot("board_recall")

    back = items.nth(0).get_by_role("button", name="Back to Placed")
    expect(back).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(f"#column-orders-placed #row-orders-{second}")).to_be_visible(
        timeout=LIVE_MS
    )
    assert status(screens_site, second) == "placed"
    expect(items.nth(0)).to_contain_text("back in Placed")
    page.keyboard.press("Escape")
    expect(recall).to_be_hidden()


def test_the_plain_wall_is_display_only_and_the_touch_wall_bumps_on_a_tap(
    page: Page, base: str, screens_site: Site
) -> None:
    # The oldest pickup of the placed column (oldest first), so that its card is on the
    # wall's first page whatever the module's other tests left there: a full column pages.
    key = add_order(screens_site, at("2026-07-10 05:00"))
    sign_in(page, base, "staff@venue.test", f"{BOARD}/wall")
    wait_live(page)
    card = page.locator(f"#row-orders-{key}")
    expect(card).to_be_visible()
    expect(page.locator(".board a")).to_have_count(0)
    expect(page.locator(".board .bump, #bump")).to_have_count(0)
    card.click()
    page.keyboard.press("Enter")
    assert status(screens_site, key) == "placed"

    page.goto(f"{base}{BOARD}")
    page.get_by_role("link", name="Wall for a touch screen").click()
    expect(page).to_have_url(f"{base}{BOARD}/wall?touch=1")
    wait_live(page)
    expect(page.locator(".board a")).to_have_count(0)
    page.locator(f"#row-orders-{key}").click()
    moved = page.locator(f"#column-orders-confirmed #row-orders-{key}")
    expect(moved).to_be_visible(timeout=LIVE_MS)
    assert status(screens_site, key) == "confirmed"
    # The pushed card, drawn for this wall, is no link either.
    expect(moved.locator("a")).to_have_count(0)
    expect(page.locator("#toasts .toast").last).to_contain_text("Undo to Placed")


def test_a_refetch_of_the_columns_keeps_the_picked_ticket_focused(
    page: Page, base: str, screens_site: Site
) -> None:
    key = add_order(screens_site, at("2026-07-10 12:30"))
    sign_in(page, base, "staff@venue.test", BOARD)
    wait_live(page)
    card = page.locator(f"#row-orders-{key}")
    card.focus()
    expect(card).to_be_focused()
    # The minute's refetch draws the columns again (as the socket's catch-up does): the
    # focused card is replaced by a new one with its id.
    # What has the focus as the new columns land, in the same task (a key pressed then
    # goes where the focus is; htmx's own restoring of it comes a settle later).
    page.evaluate(
        """() => {
            document.querySelector('.board .columns').dataset.old = '1';
            window.focusedAsDrawn = [];
            new MutationObserver(() => {
                if (document.querySelector('.board .columns[data-old]')) { return; }
                window.focusedAsDrawn.push(document.activeElement.id || 'nothing');
            }).observe(document.body, { childList: true, subtree: true });
        }"""
    )
    page.locator(".board").dispatch_event("adminium:minute")
    page.wait_for_function("() => window.focusedAsDrawn.length > 0")
    assert page.evaluate("window.focusedAsDrawn[0]") == f"row-orders-{key}"
    expect(card).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(f"#column-orders-confirmed #row-orders-{key}")).to_be_visible(
        timeout=LIVE_MS
    )
    assert status(screens_site, key) == "confirmed"
