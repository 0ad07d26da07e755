"""In Chromium: an open board says "Redis does not answer" while its web's Redis is away (a
real redis-server stopped), and when it answers again the words go and the board is drawn
again with the change it missed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from playwright.sync_api import Page, expect

from tests.browser.test_screens import sign_in, wait_live
from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.recovery_fixtures import RedisOnPort, redis_on_port
from tests.integration.screens_fixtures import add_order, installed_screens_site, served

pytestmark = pytest.mark.browser
TOLD_MS = 15_000
"""The deadline for the page to say that Redis went away (the hub hears it at once: its
subscription's socket closes; a loaded machine may hold the hub's thread for seconds)."""
REDRAWN_MS = 30_000
"""The deadline for the page to be drawn again once Redis answers: the hub's next try (up
to 5 s apart after a few), then the ws extension's reconnect, whose wait doubles (up to 1,
2, 4, 8 s, at random) each time it finds the hub not yet subscribed. The waits end when
the page is redrawn."""


@pytest.fixture(scope="module")
def own_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisOnPort]:
    """A redis-server of this module's own, to stop and start."""
    with redis_on_port(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture(scope="module")
def site(server_database_url: str, own_redis: RedisOnPort) -> Iterator[Site]:
    """The venue site on that Redis."""
    with installed_screens_site(server_database_url, own_redis.url) as built:
        yield built


@pytest.fixture(scope="module")
def base(site: Site) -> Iterator[str]:
    with served(site.app) as port:
        yield f"http://127.0.0.1:{port}"


def header_says(page: Page) -> str:
    """What the header's live state shows (its ::before)."""
    return str(
        page.evaluate(
            "getComputedStyle(document.querySelector('header .live-state'), '::before').content"
        )
    )


def test_the_board_says_redis_does_not_answer_and_is_redrawn_when_it_does(
    page: Page,
    base: str,
    site: Site,
    own_redis: RedisOnPort,
    screenshot: Callable[[str], Path],
) -> None:
    key = add_order(site, at("2026-07-10 11:30"))
    sign_in(page, base, "manager@venue.test", "/apps/venue/venue/orders")
    wait_live(page)
    banner = page.locator("#live-banner")
    expect(banner).to_be_hidden()
    assert header_says(page) == '"● live"'

    own_redis.stop()
    told = page.get_by_role("alert").filter(has_text="Redis does not answer")
    expect(told).to_be_visible(timeout=TOLD_MS)
    expect(told).to_contain_text("it is drawn again when Redis answers")
    assert header_says(page) == '"○ not live"'
    expect(page.locator("header .clock-state")).to_have_text(" · clock waiting, Redis unreachable")
    screenshot("board_redis_down")
    # A change no screen hears while Redis is away.
    with site.store().engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE orders SET status = 'confirmed' WHERE id = :key"), {"key": key}
        )

    own_redis.start()
    expect(banner).to_be_hidden(timeout=REDRAWN_MS)
    expect(page.locator(f"#column-orders-confirmed #row-orders-{key}")).to_be_visible(
        timeout=REDRAWN_MS
    )
    wait_live(page)
    assert header_says(page) == '"● live"'
    expect(page.locator("header .clock-state")).to_have_text(" · clock running", timeout=REDRAWN_MS)
    # The header asks for its clock state again whenever the socket opens or the page is
    # back: a state left stale in it (a push that raced Redis coming back) is read anew.
    page.evaluate("document.querySelector('header .clock-state').textContent = ' · stale'")
    with page.expect_response(lambda answer: answer.url.endswith("/connections/venue/clock-state")):
        page.evaluate("htmx.trigger(document.body, 'adminium:back')")
    expect(page.locator("header .clock-state")).to_have_text(" · clock running")
