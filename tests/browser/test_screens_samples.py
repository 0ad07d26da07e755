"""In Chromium: a manager removes sample data from the connections screen and a board open
in another tab loses the sample cards; a row the sweep sets aside joins an open list."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Dialog, Page, expect

from core.samples.data import add_sample, remove_sample
from core.samples.files import read_sample
from tests.browser.test_screens import LIVE_MS, sign_in, sweep, wait_live
from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import add_order, forbid_cancel_with_note, served

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def base(screens_site: Site) -> Iterator[str]:
    """The venue site served by a real threaded server."""
    with served(screens_site.app) as port:
        yield f"http://127.0.0.1:{port}"


def test_removing_sample_data_clears_the_board_open_in_another_tab(
    page: Page, base: str, screens_site: Site, screenshot: Callable[[str], Path]
) -> None:
    # Two sample orders picked up five hours after the sample's moment, and one real order.
    sample = read_sample({"app": "venue", "rows": {"orders": [{"pickup_at": {"@in": "PT5H"}}] * 2}})
    samples = [
        row.key for row in add_sample(screens_site.store(), sample, now=at("2026-07-10 09:00"))
    ]
    real = add_order(screens_site, at("2026-07-10 14:00"), note="a real order")
    sign_in(page, base, "manager@venue.test", "/apps/venue/venue/orders")
    for key in (*samples, real):
        expect(page.locator(f"#row-orders-{key}")).to_be_visible()
    wait_live(page)
    connections = page.context.new_page()
    connections.goto(f"{base}/connections")
    wait_live(connections)
    asked: list[str] = []

    def accept(dialog: Dialog) -> None:
        asked.append(dialog.message)
        dialog.accept()

    connections.once("dialog", accept)
    connections.get_by_role("button", name="Remove sample data · venue").click()

    expect(connections.locator("#sample-result")).to_contain_text("2 rows from orders")
    # It says what it will remove, and looks destructive.
    assert asked == [
        "Remove the 2 sample rows of venue (Orders: 2)? They are deleted for good."
        " Real rows stay, and so do its settings and opening hours."
    ]
    remove = connections.get_by_role("button", name="Remove sample data · venue")
    expect(remove).to_have_class("secondary danger")
    # Read again until it holds: the live push of the removal draws the card (and its
    # button) again, and a style read of the button it replaced is empty.
    expect(remove).to_have_css("border-color", "rgb(179, 38, 30)")
    for key in samples:
        expect(page.locator(f"#row-orders-{key}")).to_have_count(0, timeout=LIVE_MS)
    expect(page.locator(f"#row-orders-{real}")).to_be_visible()
    connections.close()
    screenshot("sample_removed")


def test_row_the_sweep_sets_aside_joins_the_open_list(
    page: Page, base: str, screens_site: Site, redis_url: str
) -> None:
    # The venue refuses cancelling an order with a note: Wed 8 July closes 21:00 BST =
    # 20:00 UTC, so the sweep at 20:01 UTC sets it aside while the list is open.
    forbid_cancel_with_note(screens_site)
    key = add_order(screens_site, at("2026-07-08 11:30"), note="allergy: nuts")
    sign_in(page, base, "staff@venue.test", "/connections/venue/set-aside")
    expect(page.locator("#set-aside-empty")).to_be_visible()
    wait_live(page)

    sweep(screens_site, redis_url, "2026-07-08 20:01")

    item = page.locator(f"#aside-orders-{key}")
    expect(item).to_contain_text("VALUE_REFUSED", timeout=LIVE_MS)
    expect(page.locator("#set-aside-empty")).to_be_hidden()
    # The pushed item's forms work as the page's own: moved by hand, it leaves the list,
    # and the empty state is back.
    item.get_by_role("button", name="Move to confirmed").click()
    expect(item).to_have_count(0, timeout=LIVE_MS)
    expect(page.locator("#set-aside-empty")).to_be_visible()
    assert screens_site.row("orders", key)["status"] == "confirmed"


def test_a_sample_that_would_be_swept_at_once_asks_before_adding(
    page: Page, base: str, screens_site: Site, tmp_path: Path
) -> None:
    # Fri 10 Jul 2026 10:00 BST: the first order picked up yesterday is due since Thursday's
    # closing, 21:00 BST, so the add asks once more; the second waits for tonight.
    (tmp_path / "venue.sample.json").write_text(
        '{"app": "venue", "rows": {"orders": [{"pickup_at": {"@in": "-P1D"}},'
        ' {"pickup_at": {"@in": "PT5H"}}]}}'
    )
    was = screens_site.clock.now
    screens_site.clock.now = at("2026-07-10 09:00")
    screens_site.app.config["SAMPLES_FOLDER"] = str(tmp_path)
    store = screens_site.store()
    try:
        with store.engine.connect() as conn:
            before = len(store.read_rows(conn, "orders"))
        sign_in(page, base, "manager@venue.test", "/connections")
        page.get_by_role("button", name="Add sample data · venue").click()
        result = page.locator("#sample-result")
        expect(result).to_contain_text(
            "Not added yet: 1 sample row of venue would be moved at the next minute"
        )
        expect(result.locator("li")).to_have_count(1)
        expect(result.locator("li")).to_contain_text("Thu 09 Jul 2026 21:00")
        with store.engine.connect() as conn:
            assert len(store.read_rows(conn, "orders")) == before
        page.get_by_role("button", name="Add anyway · venue").click()
        expect(result).to_contain_text("Sample data of venue added: 2 rows.")
        with store.engine.connect() as conn:
            assert len(store.read_rows(conn, "orders")) == before + 2
    finally:
        screens_site.app.config.pop("SAMPLES_FOLDER")
        screens_site.clock.now = was
        remove_sample(store, now=at("2026-07-10 09:00"))
