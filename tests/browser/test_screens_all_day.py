"""In Chromium: the wall's all-day strip says what the open tickets add up to, and changes
when a ticket leaves the open states (its socket's push, then the strip fetched again)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.test_screens import LIVE_MS, sign_in, wait_live
from tests.browser.test_screens_tour import write
from tests.integration.all_day_fixtures import add_lines, line
from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import add_order, served

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def base(screens_site: Site) -> Iterator[str]:
    """The venue site with order lines, served by a real threaded server."""
    add_lines(screens_site)
    with served(screens_site.app) as port:
        yield f"http://127.0.0.1:{port}"


def test_the_wall_s_all_day_strip_adds_up_open_tickets_and_follows_a_move(
    page: Page, base: str, screens_site: Site, redis_url: str, screenshot: Callable[[str], Path]
) -> None:
    first = add_order(screens_site, at("2026-07-10 12:00"))
    second = add_order(screens_site, at("2026-07-10 12:15"), status="confirmed")
    line(screens_site, first, "ramen", qty=2)
    line(screens_site, first, "pad thai")
    line(screens_site, second, "ramen", qty=10)
    line(screens_site, second, "pad thai", qty=6)
    line(screens_site, second, "gyoza", qty=5, voided=True)
    page.set_viewport_size({"width": 1920, "height": 1080})
    sign_in(page, base, "staff@venue.test", "/apps/venue/venue/orders/wall")
    wait_live(page)
    strip = page.locator("#all-day-orders")
    # ramen 2 + 10, pad thai 1 + 6; the voided gyoza left out.
    expect(strip).to_have_text("All day: 12 × ramen, 7 × pad thai")
    screenshot("wall_all_day")

    write(screens_site, redis_url, "orders", second, move_to="cancelled")

    expect(strip).to_have_text("All day: 2 × ramen, 1 × pad thai", timeout=LIVE_MS + 2_000)
