"""A posting's standing changes only from the standing its writer read: a writer holding a
stale read (the record settled by another writer since) is WRITE_CONFLICT and changes
nothing, the account's balance and entries included; and the give-back's first statement
locks the posting record with the row, so another writer cannot settle it meanwhile.

The till (tests/integration/ledger_fixtures.TILL): an order paid 20 by a gift card of 50
is held until 21:00 in London on its pickup day (Friday 12 June 2026, BST: 20:00 UTC).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal

import pytest
import sqlalchemy as sa

from core.basics.errors import WriteConflict
from core.ledgers.entries import (
    Bounds,
    PostingStatus,
    change_balance,
    read_held,
    read_postings,
    write_posting,
)
from tests.integration.ledger_fixtures import TILL, Till, till_of
from tests.integration.pipeline_fixtures import at
from tests.integration.sweep_fixtures import Shop

SLOT = at("2026-06-12 12:00")
NOON = at("2026-06-12 11:00")
HOLD_ENDS = at("2026-06-12 20:00")


@pytest.fixture
def till(make_shop: Callable[..., Shop]) -> Till:
    return till_of(make_shop(TILL))


def test_a_stale_read_of_a_posting_settles_nothing(till: Till) -> None:
    card = till.card("50")
    order = till.place(SLOT, NOON, gift_card_id=card, card_paid=Decimal("20")).key
    with till.engine.connect() as conn:
        [stale] = read_postings(conn, "till", "orders", str(order)).values()
    assert stale.status is PostingStatus.held
    till.move(order, "cancelled", HOLD_ENDS)  # staff give it back meanwhile
    assert till.balance(card) == Decimal("50")
    given_back = replace(stale, status=PostingStatus.given_back, held_until=None)
    entry = {
        "app": "till",
        "ledger": "gift_cards",
        "account": str(card),
        "amount": Decimal("20"),
        "table_name": "orders",
        "row_key": str(order),
        "posting": 1,
        "kind": "give-back",
        "actor": "Timed move",
        "at": HOLD_ENDS,
    }
    cards = till.store.table("gift_cards")
    with pytest.raises(WriteConflict), till.engine.begin() as conn:
        # The give-back's balance statement on the stale read: the record is no longer held.
        bounds = Bounds(Decimal(0), Decimal(100))
        change_balance(conn, cards, "id", "balance", card, bounds, entry, given_back)
    with pytest.raises(WriteConflict), till.engine.begin() as conn:
        write_posting(conn, "till", given_back, HOLD_ENDS, was=PostingStatus.held)
    assert till.balance(card) == Decimal("50")
    assert [e["kind"] for e in till.entries()] == ["take", "give-back"]
    assert till.posting(order)["status"] == "given-back"  # type: ignore[index]


def test_the_give_backs_first_statement_locks_the_posting_record_too(till: Till) -> None:
    card = till.card("50")
    order = till.place(SLOT, NOON, gift_card_id=card, card_paid=Decimal("20")).key
    orders = till.store.table("orders")
    with till.engine.begin() as sweep:
        found = read_held(sweep, orders, "id", order, "till", 1)
        assert found is not None and found[1].status is PostingStatus.held
        with till.engine.connect() as other:
            other.exec_driver_sql("SET lock_timeout = '100ms'")
            with pytest.raises(sa.exc.OperationalError, match="lock"):
                other.exec_driver_sql(
                    "UPDATE adminium.postings SET status = 'taken' WHERE row_key = %s",
                    (str(order),),
                )


def test_a_ledger_with_no_max_takes_and_gives_back(make_shop: Callable[..., Shop]) -> None:
    # An unset bound reaches the balance statement as NULL: it must still have a type.
    manifest = copy.deepcopy(TILL)
    del manifest["ledgers"][0]["max"]
    till = till_of(make_shop(manifest))
    card = till.card("50")
    order = till.place(SLOT, NOON, gift_card_id=card, card_paid=Decimal("20")).key
    assert till.balance(card) == Decimal("30")
    assert [g.record.key for g in till.sweep(HOLD_ENDS).given_back] == [str(order)]
    assert till.balance(card) == Decimal("50")
