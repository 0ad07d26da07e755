"""The screens under their Content-Security-Policy: nothing refused, live and filters work."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import ConsoleMessage, Page, expect

from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import PASSWORD, add_order, served

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def base(screens_site: Site) -> Iterator[str]:
    """The venue site served by a real threaded server."""
    with served(screens_site.app) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def refused(page: Page) -> list[str]:
    """What the browser refused or failed on: console errors and uncaught page errors."""
    found: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        # The browser's own ask for /favicon.ico (there is none) is no screen's fault.
        if message.type == "error" and not message.location["url"].endswith("/favicon.ico"):
            found.append(f"{message.text} ({message.location['url']})")

    page.on("console", on_console)
    page.on("pageerror", lambda error: found.append(str(error)))
    return found


@pytest.mark.parametrize(
    "path",
    [
        "/connections",
        "/apps/venue/venue/orders",
        "/connections/venue/pending",
        "/connections/venue/set-aside",
    ],
)
def test_a_live_screen_breaks_no_rule_of_its_policy(
    page: Page, base: str, screens_site: Site, refused: list[str], path: str
) -> None:
    page.goto(f"{base}{path}")
    page.get_by_label("Email").fill("staff@venue.test")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()

    # The socket opened (connect-src) and its refetch ran (script from static/).
    expect(page.locator("body[data-live=open]")).to_have_count(1)
    assert refused == []


def test_enter_in_a_board_search_filters_without_reloading(
    page: Page, base: str, screens_site: Site, refused: list[str]
) -> None:
    soup = add_order(screens_site, at("2026-07-10 11:30"), note="1 x lentil soup")
    wrap = add_order(screens_site, at("2026-07-10 11:30"), note="2 x falafel wrap")
    page.goto(f"{base}/apps/venue/venue/orders")
    page.get_by_label("Email").fill("staff@venue.test")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("body[data-live=open]")).to_have_count(1)

    search = page.get_by_label("Search rows")
    search.fill("lentil")
    search.press("Enter")

    expect(page.locator(f"#row-orders-{wrap}")).to_have_count(0)
    expect(page.locator(f"#row-orders-{soup}")).to_have_count(1)
    assert page.url == f"{base}/apps/venue/venue/orders"
    assert refused == []
