"""Browser rig: Debian's Chromium driven by Playwright, and the web served for real.

Set ADMINIUM_SCREENSHOTS to a folder (`make screenshots` uses docs/screenshots) to keep
the screenshot each test takes of its screen.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from flask import Flask
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.integration.api_fixtures import Site
from tests.integration.screens_fixtures import installed_screens_site, served
from web import create_app
from web.live import stop_hub

CHROMIUM = Path("/usr/bin/chromium")
# Headless, and nothing that reaches out to the network on its own.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PAGE_TIMEOUT_MS = 20_000
"""The deadline of every wait on what a test means to see (a page loaded, an htmx answer
swapped in, a pushed change drawn): Playwright's actions and its `expect` (whose own default
is 5 s) wait on the event and end when it happens, so a generous deadline costs a passing
test nothing, while the machine may be loaded far past its two cores. How fast a screen
answers is the benches' to say (bench/screens.py, bench/live.py), not a test's bound."""

expect.set_options(timeout=PAGE_TIMEOUT_MS)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Debian's Chromium, headless, for the whole session."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `make chromium` installs it (as root)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh page in a context of its own (no cookies shared between tests)."""
    context = browser.new_context()
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    context.set_default_navigation_timeout(PAGE_TIMEOUT_MS)
    yield context.new_page()
    context.close()


@pytest.fixture
def serve_app() -> Iterator[Callable[[Flask], str]]:
    """Factory: serve a Flask app with a real threaded HTTP server; its base URL."""
    apps = []
    with ExitStack() as servers:

        def serve(app: Flask) -> str:
            port = servers.enter_context(served(app))
            apps.append(app)
            return f"http://127.0.0.1:{port}"

        yield serve
    for app in apps:
        stop_hub(app)


@pytest.fixture(scope="module")
def screens_site(server_database_url: str, redis_url: str) -> Iterator[Site]:
    """The venue site for a module's tests, its users able to sign in (as the screens' tests)."""
    with installed_screens_site(server_database_url, redis_url) as built:
        yield built


@pytest.fixture
def live_server(serve_app: Callable[[Flask], str], database_url: str, redis_url: str) -> str:
    """The web on the test PostgreSQL (a fresh database) and Redis; its base URL."""
    app = create_app({"TESTING": True, "DATABASE_URL": database_url, "REDIS_URL": redis_url})
    return serve_app(app)


@pytest.fixture
def screenshot(page: Page, tmp_path: Path) -> Callable[[str], Path]:
    """Save the page as `<name>.png`: in ADMINIUM_SCREENSHOTS when set, else a temp folder."""
    folder = Path(os.environ.get("ADMINIUM_SCREENSHOTS") or tmp_path)

    def shoot(name: str) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return shoot
