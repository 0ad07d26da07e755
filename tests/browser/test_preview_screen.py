"""The row page's preview before Save in Chromium: an hours row's closing moved
earlier previews the orders due at once, Save asks once more, Save anyway saves. The
screenshots docs/screens.md shows (row_preview, row_preview_confirm)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from flask import Flask
from playwright.sync_api import Page, expect

from services.models import db
from services.users import add_user
from tests.browser.test_screens import sign_in, wait_live
from tests.integration.preview_fixtures import Diner, build_diner
from tests.integration.screens_fixtures import PASSWORD
from web import create_app

NOW = datetime(2026, 10, 23, 20, 30, tzinfo=UTC)  # Friday 23 Oct, 21:30 BST


@pytest.fixture
def diner_site(make_database: Callable[[], str], redis_url: str) -> Iterator[tuple[Diner, Flask]]:
    diner = build_diner(make_database(), make_database())
    app = create_app(
        {
            "DATABASE_URL": diner.control_url,
            "REDIS_URL": redis_url,
            "TESTING": True,
            "CLOCK": lambda: NOW,
        }
    )
    with app.app_context():
        add_user(db.session, "manager@diner.test", "staff", "diner/diner", password=PASSWORD)
    yield diner, app
    with app.app_context():
        db.engine.dispose()
    diner.dispose()


def test_preview_before_save_then_save_anyway(
    page: Page,
    diner_site: tuple[Diner, Flask],
    serve_app: Callable[[Flask], str],
    screenshot: Callable[[str], Path],
) -> None:
    diner, app = diner_site
    # 23 Oct (BST): closing 23:00 -> 21:00 is 22:00Z -> 20:00Z, past 20:30Z: due at once.
    for hour in (11, 13, 17):
        diner.insert("orders", pickup_at=datetime(2026, 10, 23, hour, tzinfo=UTC), status="placed")
    # 30 Oct (GMT): 23:00Z -> 21:00Z, earlier.
    diner.insert("orders", pickup_at=datetime(2026, 10, 30, 12, tzinfo=UTC), status="placed")
    fri = diner.rows("SELECT id FROM diner.opening_hours WHERE weekday = 'fri'")[0][0]
    base = serve_app(app)
    sign_in(page, base, "manager@diner.test", f"/apps/diner/diner/opening_hours/{fri}")
    wait_live(page)  # its refetch of the row would redraw the form under the typing
    page.wait_for_load_state("networkidle")
    form = page.locator("form.edit")
    form.locator("select[name=column]").select_option("closes")
    form.locator("input[name=value]").fill("21:00")
    form.get_by_role("button", name="Preview").click()
    words = page.locator(".preview-words")
    expect(words).to_have_text(
        "Saving makes 3 Orders moved to Cancelled at the next minute; 1 moment earlier."
    )
    expect(page.locator(".preview-rows li")).to_have_count(4)
    # 192 hours past Fri 23 Oct 20:30Z, over the clocks going back: Sat 31 Oct 20:30 GMT.
    expect(page.locator(".preview-horizon")).to_have_text(
        "Read to Sat 31 Oct 20:30, 8 days ahead: a moment moved further on is not counted."
    )
    screenshot("row_preview")
    form.get_by_role("button", name="Save").click()
    expect(page.locator(".said")).to_contain_text("Not saved yet: Saving makes 3 Orders")
    expect(page.get_by_role("button", name="Save anyway")).to_be_visible()
    assert diner.rows(f"SELECT closes FROM diner.opening_hours WHERE id = {fri}") == [("23:00",)]
    screenshot("row_preview_confirm")
    page.get_by_role("button", name="Save anyway").click()
    expect(page.locator(".said")).to_contain_text("Saved:")
    assert diner.rows(f"SELECT closes FROM diner.opening_hours WHERE id = {fri}") == [("21:00",)]
