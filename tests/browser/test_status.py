"""The status page, as a browser shows it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from flask import Flask
from playwright.sync_api import Page, expect

from web import create_app

pytestmark = pytest.mark.browser


def test_status_page_shows_both_servers_answering(
    page: Page, live_server: str, screenshot: Callable[[str], Path]
) -> None:
    page.goto(f"{live_server}/status")

    expect(page).to_have_title("Status · Adminium")
    expect(page.locator("h1")).to_have_text("Adminium is up")
    terms = page.locator("dl.status dt")
    expect(terms).to_have_text(["Database", "Redis"])
    details = page.locator("dl.status dd")
    expect(details.nth(0)).to_contain_text("PostgreSQL 1")
    expect(details.nth(1)).to_contain_text("Redis ")
    expect(page.locator("dl.status")).not_to_contain_text("does not answer")
    assert screenshot("status").stat().st_size > 0


def test_status_page_says_when_redis_does_not_answer(
    page: Page, serve_app: Callable[[Flask], str], database_url: str, tmp_path: Path
) -> None:
    # A socket path nobody listens on.
    silent_redis = f"unix://{tmp_path}/nobody.sock"
    base = serve_app(
        create_app({"TESTING": True, "DATABASE_URL": database_url, "REDIS_URL": silent_redis})
    )

    page.goto(f"{base}/status")

    details = page.locator("dl.status dd")
    expect(details.nth(0)).to_contain_text("PostgreSQL 1")
    expect(details.nth(1)).to_contain_text("does not answer")
