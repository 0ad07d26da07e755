"""The status page, as a browser shows it: "up" to everyone, the servers once signed in."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from flask import Flask
from playwright.sync_api import Page, expect

from services.models import db
from tests.integration.api_fixtures import Site
from tests.integration.screens_fixtures import PASSWORD, served
from web import create_app

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def base(screens_site: Site) -> Iterator[str]:
    """The venue site served by a real threaded server."""
    with served(screens_site.app) as port:
        yield f"http://127.0.0.1:{port}"


def sign_in_to_status(page: Page, base: str) -> None:
    """Sign in as staff from the status page's own link, landing back on it."""
    page.goto(f"{base}/status")
    page.get_by_role("link", name="Sign in").click()
    page.get_by_label("Email").fill("staff@venue.test")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(f"{base}/status")


def test_signed_out_status_says_up_and_nothing_more(page: Page, base: str) -> None:
    page.goto(f"{base}/status")

    expect(page).to_have_title("Status · Adminium")
    expect(page.locator("h1")).to_have_text("Adminium is up")
    expect(page.locator("dl.status")).to_have_count(0)


def test_status_page_shows_both_servers_answering(
    page: Page, base: str, screenshot: Callable[[str], Path]
) -> None:
    sign_in_to_status(page, base)

    terms = page.locator("dl.status dt")
    expect(terms).to_have_text(["Database", "Redis", "Tables"])
    details = page.locator("dl.status dd")
    expect(details.nth(0)).to_contain_text("PostgreSQL 1")
    expect(details.nth(1)).to_contain_text("Redis ")
    expect(details.nth(2)).to_have_text(
        "every app's tables agree with its manifest, as last compared"
    )
    expect(page.locator("dl.status")).not_to_contain_text("does not answer")
    assert screenshot("status").stat().st_size > 0


def test_status_page_says_when_redis_does_not_answer(
    page: Page, serve_app: Callable[[Flask], str], screens_site: Site, tmp_path: Path
) -> None:
    # The same control plane (so the same users), with a socket path nobody listens on.
    silent_redis = f"unix://{tmp_path}/nobody.sock"
    control_url = screens_site.app.config["DATABASE_URL"]
    app = create_app({"TESTING": True, "DATABASE_URL": control_url, "REDIS_URL": silent_redis})
    base = serve_app(app)
    try:
        sign_in_to_status(page, base)

        details = page.locator("dl.status dd")
        expect(details.nth(0)).to_contain_text("PostgreSQL 1")
        expect(details.nth(1)).to_contain_text("does not answer")
    finally:
        with app.app_context():
            db.engine.dispose()
