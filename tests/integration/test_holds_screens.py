"""Holds on the screens: the row page's postings (held until when on the venue's clock,
taken, given back), the pending screen's holds to give back, and a give-back the cap
refused on the set-aside screen with its fixes.

The till (tests/integration/ledger_fixtures.TILL) joins the screens' venue connection as
app `till` in its own schema. An order for a pickup on Friday 12 June 2026 is held until
21:00 in London that day: BST, so 20:00 UTC; the screens print `Fri 12 Jun 2026 21:00`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
import sqlalchemy as sa
from flask.testing import FlaskClient

from core.store.store import Store
from core.sweep.sweep import sweep_connection
from core.writes.pipeline import change_row, create_row
from core.writes.request import WriteRequest
from services.apps import add_app, app_store
from services.models import db
from tests.integration.api_fixtures import Site
from tests.integration.ledger_fixtures import STAFF, TILL
from tests.integration.pipeline_fixtures import at

SLOT = at("2026-06-12 12:00")
NOON = at("2026-06-12 11:00")
HOLD_ENDS = at("2026-06-12 20:00")
HELD_UNTIL_WORDS = "Fri 12 Jun 2026 21:00"


@pytest.fixture(scope="module")
def till(screens_site: Site) -> Store:
    """The till app on the venue connection, its settings row in place (card_max 100)."""
    manifest: dict[str, Any] = {**copy.deepcopy(TILL), "schema": "till"}
    with screens_site.app.app_context():
        app = add_app(db.session, "venue", manifest, create_tables=True)
        store = app_store(app)
    with store.engine.begin() as conn:
        conn.execute(sa.insert(store.table("settings")).values(slot_capacity=50))
    return store


def card(store: Store, balance: str) -> int:
    with store.engine.begin() as conn:
        return int(
            conn.execute(
                sa.insert(store.table("gift_cards")).values(balance=Decimal(balance))
            ).inserted_primary_key[0]
        )


def order(store: Store, card_key: int, paid: str) -> Any:
    values = {"pickup_at": SLOT, "gift_card_id": card_key, "card_paid": Decimal(paid)}
    return create_row(store, WriteRequest("orders", STAFF, NOON, values=values)).key


def page(client: FlaskClient, url: str) -> str:
    answer = client.get(url)
    assert answer.status_code == 200, answer.text
    return answer.text


def row_url(key: Any) -> str:
    return f"/apps/venue/till/orders/{key}"


def test_the_row_page_shows_a_hold_then_the_clock_giving_it_back(
    screens_site: Site, till: Store, signed_in: Callable[[str], FlaskClient]
) -> None:
    client = signed_in("admin")
    card_key = card(till, "50")
    key = order(till, card_key, "20")
    screens_site.clock.now = at("2026-06-12 19:00")
    held = page(client, row_url(key))
    assert "Postings and holds" in held
    assert f"20 from gift_cards account {card_key}:" in held
    assert (
        f'held until <time datetime="2026-06-12T20:00:00+00:00">{HELD_UNTIL_WORDS}</time> (in 1 h)'
        in held
    )
    assert "took 20" in held and STAFF.name in held
    pending = page(client, "/connections/venue/pending")
    assert f'id="hold-orders-{key}-1"' in pending
    assert f"gives 20 back to gift_cards account {card_key}" in pending
    sweep_connection([till], connection="venue", now=HOLD_ENDS)
    screens_site.clock.now = HOLD_ENDS
    given = page(client, row_url(key))
    assert "given back." in given and "gave back 20" in given and "Timed move" in given
    assert f'id="hold-orders-{key}-1"' not in page(client, "/connections/venue/pending")


def test_a_hold_taken_for_good_says_so(
    screens_site: Site, till: Store, signed_in: Callable[[str], FlaskClient]
) -> None:
    key = order(till, card(till, "50"), "5")
    change_row(till, WriteRequest("orders", STAFF, NOON, key=key, move_to="confirmed"))
    screens_site.clock.now = NOON
    assert "taken for good." in page(signed_in("admin"), row_url(key))


def test_a_give_back_the_cap_refused_is_set_aside_with_its_fixes(
    screens_site: Site, till: Store, signed_in: Callable[[str], FlaskClient]
) -> None:
    card_key = card(till, "50")
    key = order(till, card_key, "20")
    with till.engine.begin() as conn:  # topped up meanwhile, to 90 of its max 100
        conn.execute(
            sa.update(till.table("gift_cards"))
            .values(balance=90)
            .where(till.table("gift_cards").c.id == card_key)
        )
    report = sweep_connection([till], connection="venue", now=HOLD_ENDS)
    assert [(r.key, code) for r, code in report.holds_refused] == [(str(key), "LEDGER_CAP")]
    screens_site.clock.now = HOLD_ENDS
    client = signed_in("admin")
    listed = page(client, "/connections/venue/set-aside")
    item = f'id="aside-orders-{key}-give-back-1"'
    assert item in listed
    assert "Refused:" in listed and "<code>LEDGER_CAP</code>" in listed
    # 90 + 20 would pass the max of 100: the card must hold 80 or less first.
    assert f"gift_cards #{card_key} holds 90; 20 fits back once it holds 80 or less." in listed
    assert f'href="/apps/venue/till/gift_cards/{card_key}"' in listed
    assert 'tried again at <time datetime="2026-06-12T21:00:00+00:00">22:00</time>' in listed
    row = page(client, row_url(key))
    assert "set aside:" in row and "LEDGER_CAP" in row
    # Moving the row out of the held states takes the payment for good: nothing set aside.
    change_row(till, WriteRequest("orders", STAFF, HOLD_ENDS, key=key, move_to="confirmed"))
    assert item not in page(client, "/connections/venue/set-aside")


def test_a_hold_re_dated_by_plain_sql_shows_its_rows_own_moment(
    screens_site: Site, till: Store, signed_in: Callable[[str], FlaskClient]
) -> None:
    client = signed_in("admin")
    key = order(till, card(till, "50"), "20")
    # The venue's own software moves the pickup to Thursday: held until 21:00 BST then.
    with till.engine.begin() as conn:
        conn.execute(
            sa.update(till.table("orders"))
            .where(till.table("orders").c.id == key)
            .values(pickup_at=at("2026-06-11 12:00"))
        )
    screens_site.clock.now = at("2026-06-11 19:00")
    thursday = '<time datetime="2026-06-11T20:00:00+00:00">Thu 11 Jun 2026 21:00</time>'
    assert f"held until {thursday} (in 1 h)" in page(client, row_url(key))
    pending = page(client, "/connections/venue/pending")
    item = pending[pending.index(f'id="hold-orders-{key}-1"') :]
    assert item[: item.index("</li>")].count("2026-06-11T20:00:00+00:00") == 1, item[:600]
