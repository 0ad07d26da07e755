"""Due holds are found on the row's own columns, as due timed moves are: a hold whose row is
re-dated earlier by plain SQL (the venue's own software) is given back at the row's moment,
not at the stale heldUntil kept in adminium.postings; a row deleted by SQL gives its hold
back at the kept moment; holds long given back are never read again (their row is no
longer paid: the partial index the search reads leaves them out).

The till (tests/integration/ledger_fixtures.TILL): an order is held until 21:00 in London
on its pickup day. Friday 12 June 2026 is BST (UTC+1): held until 20:00 UTC; re-dated to
Thursday 11 June, it is held until 20:00 UTC on the 11th.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal

import pytest
import sqlalchemy as sa

from core.store.install import hold_indexes
from core.sweep.due_holds import find_due_holds
from tests.integration.ledger_fixtures import TILL, Till, till_of
from tests.integration.pipeline_fixtures import at
from tests.integration.sweep_fixtures import Shop

SLOT = at("2026-06-12 12:00")
NOON = at("2026-06-11 09:00")
THURSDAY_ENDS = at("2026-06-11 20:00")  # 21:00 BST on Thursday
FRIDAY_ENDS = at("2026-06-12 20:00")


@pytest.fixture
def till(make_shop: Callable[..., Shop]) -> Till:
    return till_of(make_shop(TILL))


def test_a_hold_re_dated_earlier_by_plain_sql_is_given_back_at_the_rows_own_moment(
    till: Till,
) -> None:
    card = till.card("50")
    order = till.place(SLOT, NOON, gift_card_id=card, card_paid=Decimal("20")).key
    assert till.posting(order)["held_until"] == FRIDAY_ENDS  # type: ignore[index]
    # The venue's own software moves the pickup to Thursday, past Adminium.
    thursday = SLOT - timedelta(days=1)
    till.sql("UPDATE orders SET pickup_at = :p WHERE id = :k", p=thursday, k=order)
    assert till.sweep(THURSDAY_ENDS - timedelta(seconds=1)).given_back == ()
    assert till.balance(card) == Decimal("30")
    swept = till.sweep(THURSDAY_ENDS)
    assert [given.record.key for given in swept.given_back] == [str(order)]
    assert till.balance(card) == Decimal("50")
    assert till.posting(order)["status"] == "given-back"  # type: ignore[index]
    assert till.sweep(FRIDAY_ENDS).given_back == ()  # once


def test_a_hold_whose_row_was_deleted_is_given_back_at_its_kept_moment(till: Till) -> None:
    card = till.card("50")
    order = till.place(SLOT, NOON, gift_card_id=card, card_paid=Decimal("20")).key
    till.sql("DELETE FROM orders WHERE id = :k", k=order)
    assert till.sweep(FRIDAY_ENDS - timedelta(seconds=1)).given_back == ()
    assert [g.record.key for g in till.sweep(FRIDAY_ENDS).given_back] == [str(order)]
    assert till.balance(card) == Decimal("50")


def test_the_search_reads_the_rows_still_paid_through_the_holds_partial_index(
    till: Till,
) -> None:
    till.set(slot_capacity=10)
    card = till.card("90")
    for _ in range(3):
        till.place(SLOT, NOON, gift_card_id=card, card_paid=Decimal("1"))
    [index] = hold_indexes(till.store.app)
    paid = '("card_paid" > 0 AND "gift_card_id" IS NOT NULL)'
    assert index.endswith(f'("status", "pickup_at") WHERE ({paid})')
    assert len(till.sweep(FRIDAY_ENDS).given_back) == 3
    # Given back, their rows stay `placed` with a past pickup, but are no longer paid: no
    # candidate left, so the next minute's search finds nothing (and reads nothing).
    with till.engine.connect() as conn:
        found = find_due_holds(conn, [till.store], now=FRIDAY_ENDS, limit=500)
        assert found.due == () and found.redated == ()
        conn.exec_driver_sql("SET enable_seqscan = off")
        plan = conn.execute(
            sa.text(
                "EXPLAIN SELECT id FROM orders WHERE status = 'placed'"
                " AND pickup_at < :b AND (card_paid > 0 AND gift_card_id IS NOT NULL)"
                " ORDER BY pickup_at, id"
            ),
            {"b": FRIDAY_ENDS + timedelta(days=1)},
        ).scalars()
        assert "ix_orders_status_pickup_at_held" in "\n".join(plan)
