"""A give-back the ledger's cap refused on the screens: pushed to an open set-aside list as
the sweep sets it aside, gone from it once a move takes the payment, and counted by the
header's badge on a connection's pages and (summed) on the connections screen.

The till (tests/integration/ledger_fixtures.TILL) joins the screens' venue connection as
app `till` in its own schema; a card holds at most settings.card_max, 100. An order for a
pickup on Friday 12 June 2026 is held until 21:00 in London that day: BST, so 20:00 UTC.
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from typing import Any

import pytest
import redis
import sqlalchemy as sa
from flask.testing import FlaskClient
from simple_websocket import Client

from core.store.store import Store
from core.writes.pipeline import create_row
from core.writes.request import WriteRequest
from services.apps import add_app, app_store
from services.events import Publisher
from services.models import db
from services.sweeps import sweep
from services.writes import write_by_person
from tests.integration.api_fixtures import Site
from tests.integration.ledger_fixtures import STAFF, TILL
from tests.integration.pipeline_fixtures import at
from tests.integration.test_screens_live import receive_until

pytestmark = pytest.mark.integration
ASIDE_SOCKET = "/live?screen=set_aside&connection=venue"
SLOT = at("2026-06-12 12:00")
NOON = at("2026-06-12 11:00")
HOLD_ENDS = at("2026-06-12 20:00")


@pytest.fixture(scope="module")
def till(screens_site: Site) -> Store:
    """The till app on the venue connection, its settings row in place (card_max 100)."""
    manifest: dict[str, Any] = {**copy.deepcopy(TILL), "schema": "till"}
    with screens_site.app.app_context():
        store = app_store(add_app(db.session, "venue", manifest, create_tables=True))
    with store.engine.begin() as conn:
        conn.execute(sa.insert(store.table("settings")).values(slot_capacity=50))
    return store


def capped_order(store: Store, pickup: datetime = SLOT) -> tuple[int, Any]:
    """A card of 50 pays 20 of an order; then it is topped up to 90 of its max 100, so the
    20 no longer fits back: (card, order)."""
    cards = store.table("gift_cards")
    with store.engine.begin() as conn:
        card = int(conn.execute(sa.insert(cards).values(balance=50)).inserted_primary_key[0])
    values = {"pickup_at": pickup, "gift_card_id": card, "card_paid": Decimal("20")}
    key = create_row(store, WriteRequest("orders", STAFF, NOON, values=values)).key
    with store.engine.begin() as conn:
        conn.execute(sa.update(cards).values(balance=90).where(cards.c.id == card))
    return card, key


def badge_count(html: str, badge_id: str) -> int:
    found = re.search(
        rf'id="{badge_id}"[^>]*>\s*Set aside <span class="badge count-aside">(\d+)<', html
    )
    assert found, html
    return int(found.group(1))


def test_a_refused_give_back_joins_the_open_list_and_leaves_once_taken(
    screens_site: Site,
    till: Store,
    signed_in: Callable[[str], FlaskClient],
    base_url: str,
    redis_url: str,
) -> None:
    card, key = capped_order(till)
    client = signed_in("admin")
    cookie = client.get_cookie("session")
    assert cookie is not None
    aside = Client.connect(
        f"ws://{base_url}{ASIDE_SOCKET}", headers={"Cookie": f"session={cookie.value}"}
    )
    client_of_redis = redis.Redis.from_url(redis_url)
    publisher = Publisher(client_of_redis)
    item = f"aside-orders-{key}-give-back-1"
    try:
        started = time.monotonic()
        with screens_site.app.app_context():
            report = sweep(db.session, "venue", now=HOLD_ENDS, publisher=publisher)
        assert [(r.key, code) for r, code in report.holds_refused] == [(str(key), "LEDGER_CAP")]
        # 10 s is a deadline for the push to come at all; bench/live.py measures its speed.
        added = receive_until(aside, f'class="aside give-back" id="{item}"', started, 10.0)
        screens_site.clock.now = HOLD_ENDS
        started = time.monotonic()
        with screens_site.app.app_context():
            write_by_person(
                till,
                "orders",
                key,
                actor=STAFF,
                clock=lambda: HOLD_ENDS,
                publisher=publisher,
                move_to="confirmed",
            )
        gone = receive_until(aside, f"till/orders/{key}", started, 10.0)
    finally:
        aside.close()
        client_of_redis.close()
    # An earlier item of the give-back goes; the new one joins the end of the list, drawn
    # as the page draws it: the refusal and the fix that lets the amount back.
    assert f'<li id="{item}" hx-swap-oob="delete"></li>' in added
    assert '<ul hx-swap-oob="beforeend:#set-aside-list">' in added
    assert "<code>LEDGER_CAP</code>" in added
    assert f"gift_cards #{card} holds 90; 20 fits back once it holds 80 or less." in added
    assert 'class="pick"' not in added  # nothing to select for the bulk fixes
    # Moved out of the held states, the payment is taken for good: the item is deleted
    # (every give-back item of the row but those still set aside: none).
    assert (
        'hx-swap-oob="delete:#set-aside-list &gt; li.give-back'
        f'[data-row=&#34;till/orders/{key}&#34;]"' in gone
    )
    assert f'id="{item}"' not in gone


def test_the_badge_counts_refused_give_backs_here_and_on_the_connections_screen(
    screens_site: Site, till: Store, signed_in: Callable[[str], FlaskClient]
) -> None:
    client = signed_in("admin")
    screens_site.clock.now = NOON
    before = badge_count(client.get("/connections/venue/set-aside").text, "aside-count-venue")
    total_before = badge_count(client.get("/connections").text, "aside-count")
    # Pickup a day later: held until Sat 13 June 21:00 BST, 20:00 UTC.
    capped_order(till, at("2026-06-13 12:00"))
    with screens_site.app.app_context():
        sweep(db.session, "venue", now=at("2026-06-13 20:00"), publisher=Publisher(None))
    page = client.get("/connections/venue/set-aside").text
    assert badge_count(page, "aside-count-venue") == before + 1
    alone = client.get("/connections/venue/set-aside/count").text
    assert badge_count(alone, "aside-count-venue") == before + 1
    listing = client.get("/connections").text
    # The venue is the only connection: the sum is its count, and the badge leads to its list.
    assert badge_count(listing, "aside-count") == total_before + 1 == before + 1
    assert 'id="aside-count" href="/connections/venue/set-aside"' in listing
    assert f'<dd class="aside-count">{before + 1}</dd>' in listing
    assert badge_count(client.get("/set-aside/count").text, "aside-count") == before + 1
