"""In Chromium: a give-back the ledger's cap refused joins the open set-aside list as the
sweep sets it aside, counted by the header's badge, with nothing to pick: while only
give-backs are listed the bulk controls are not shown.

The till (tests/integration/ledger_fixtures.TILL) joins the venue as app `till`; a card
holds at most 100. Orders for a pickup on Friday 12 June 2026 are held until 21:00 BST,
20:00 UTC: the sweep at 20:00 UTC tries to give their 20 back to cards topped up to 90.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from playwright.sync_api import Page, expect

from core.store.store import Store
from core.writes.pipeline import create_row
from core.writes.request import WriteRequest
from services.apps import add_app, app_store
from services.models import db
from tests.browser.test_screens import LIVE_MS, sign_in, sweep, wait_live
from tests.integration.api_fixtures import Site
from tests.integration.ledger_fixtures import STAFF, TILL
from tests.integration.pipeline_fixtures import at

pytestmark = pytest.mark.browser


def capped_order(store: Store) -> Any:
    """A card of 50 pays 20 of an order for 12:00; then it is topped up to 90 of its 100."""
    cards = store.table("gift_cards")
    with store.engine.begin() as conn:
        card = int(conn.execute(sa.insert(cards).values(balance=50)).inserted_primary_key[0])
    values = {"pickup_at": at("2026-06-12 12:00"), "gift_card_id": card}
    values["card_paid"] = Decimal("20")
    request = WriteRequest("orders", STAFF, at("2026-06-12 11:00"), values=values)
    key = create_row(store, request).key
    with store.engine.begin() as conn:
        conn.execute(sa.update(cards).values(balance=90).where(cards.c.id == card))
    return key


def test_a_refused_give_back_joins_the_open_list_without_bulk_controls(
    page: Page, screens_site: Site, redis_url: str, serve_app: Callable[[Flask], str]
) -> None:
    manifest: dict[str, Any] = {**copy.deepcopy(TILL), "schema": "till"}
    with screens_site.app.app_context():
        till = app_store(add_app(db.session, "venue", manifest, create_tables=True))
    with till.engine.begin() as conn:
        conn.execute(sa.insert(till.table("settings")).values(slot_capacity=50))
    key = capped_order(till)
    screens_site.clock.now = at("2026-06-12 20:00")
    base = serve_app(screens_site.app)
    sign_in(page, base, "admin@venue.test", "/connections/venue/set-aside")
    wait_live(page)
    expect(page.locator("#set-aside-empty")).to_be_visible()
    sweep(screens_site, redis_url, "2026-06-12 20:00")
    item = page.locator(f"#aside-orders-{key}-give-back-1")
    expect(item).to_contain_text("LEDGER_CAP", timeout=LIVE_MS)
    expect(page.locator("#aside-count-venue .badge")).to_have_text("1", timeout=LIVE_MS)
    expect(page.locator("#set-aside-empty")).to_be_hidden()
    expect(item.locator("input")).to_have_count(0)
    expect(page.locator("#set-aside-bulk")).to_be_hidden()
