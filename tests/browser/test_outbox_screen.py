"""The Outbox screen in Chromium: an email a cancelled order queued is listed as queued, and
turns to sent without a reload when a drain delivers it to a real SMTP server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from playwright.sync_api import Page, expect

from core.basics.actors import Actor
from core.writes.pipeline import change_row
from core.writes.request import WriteRequest
from services.events import Publisher
from services.models import App, db
from services.outbox import drain_connection, tell_outbox
from services.smtp import SmtpConfig
from tests.browser.test_screens import LIVE_MS
from tests.integration.api_fixtures import Site
from tests.integration.outbox_fixtures import outbox_rows, smtp_server
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import PASSWORD, add_order, served

pytestmark = pytest.mark.browser
CANCELLED = {
    "kind": "message",
    "table": "orders",
    "on": {"column": "status", "values": ["cancelled"]},
    "to": "note",
    "subject": "Order {{ row.id }} cancelled",
    "body": "Your order {{ row.id }} was cancelled.",
}
QUEUED = at("2026-07-10 09:00")


@pytest.fixture(scope="module")
def base(screens_site: Site) -> Iterator[str]:
    """The venue site, its orders emailing the address in `note` when cancelled, served by
    a real threaded server."""
    with screens_site.app.app_context():
        app = db.session.execute(db.select(App).filter_by(name="venue")).scalar_one()
        app.manifest = {
            **app.manifest,
            "outbox": {"settings": {"table": "settings"}, "producers": [CANCELLED]},
        }
        db.session.commit()
    with served(screens_site.app) as port:
        yield f"http://127.0.0.1:{port}"


def test_an_email_shows_queued_then_sent_as_the_drain_delivers_it(
    page: Page,
    base: str,
    screens_site: Site,
    redis_url: str,
    screenshot: Callable[[str], Path],
) -> None:
    page.goto(f"{base}/connections/venue/apps/venue/outbox")
    page.get_by_label("Email").fill("manager@venue.test")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("h1")).to_have_text("Outbox · Venue")
    expect(page.locator("body[data-live=open]")).to_have_count(1)

    key = add_order(screens_site, at("2026-07-10 11:30"), note="ann@example.com")
    store = screens_site.store()
    change_row(
        store,
        WriteRequest("orders", Actor.person("m@venue.test"), QUEUED, key=key, move_to="cancelled"),
    )
    mail = int(outbox_rows(store.engine)[-1]["id"])
    client = redis.Redis.from_url(redis_url)
    try:
        # What a write's operation does after its commit (without enqueueing a drain job
        # nobody here runs): tell the app's Outbox screens.
        tell_outbox(Publisher(client), "venue", "venue", drain=False)
        row = page.locator(f"#email-{mail}")
        expect(row).to_contain_text("ann@example.com", timeout=LIVE_MS)
        expect(row).to_contain_text(f"Order {key} cancelled")
        expect(row.locator(".badge")).to_have_text("queued")
        # Plain words, the manifest's titles: the row, and which producer queued it.
        expect(row.locator("td").first).to_have_text(f"Orders #{key}")
        expect(row.locator("td").nth(1)).to_have_text("When Status becomes Cancelled")

        with smtp_server() as (url, inbox), screens_site.app.app_context():
            done = drain_connection(
                db.session,
                "venue",
                SmtpConfig(url, "orders@venue.test"),
                clock=lambda: QUEUED + timedelta(seconds=5),
                publisher=Publisher(client),
            )
        assert done.sent == [mail] and len(inbox.received) == 1
        expect(row.locator(".badge")).to_have_text("sent", timeout=LIVE_MS)
        expect(row).to_have_class("email sent")
        # Sent reads as done (green), not as a grey nothing-happened.
        # (read again until it holds: a later push may draw the row again)
        expect(row.locator(".badge.sent")).to_have_css("background-color", "rgb(221, 243, 227)")
        screenshot("outbox")
        row.get_by_role("link", name=f"Order {key} cancelled").click()
        expect(page.locator(".crumbs")).to_have_text("Venue · Outbox")
        expect(page.locator(".email-read dd a")).to_have_text(f"Orders #{key}")
    finally:
        client.close()
