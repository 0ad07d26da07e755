"""Postings, holds and give-backs: the till's gift cards (tests/integration/ledger_fixtures).

Times are UTC. An order placed for a pickup on Friday 12 June 2026 is held until 21:00 on
London's clock that day: BST (UTC+1), so 20:00 UTC. The card ledger keeps 0..card_max.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal

import pytest
import sqlalchemy as sa

from core.basics.actors import Actor
from core.basics.errors import LedgerBusy, LedgerCap
from core.sweep.report import SweepReport
from core.sweep.sweep import sweep_connection
from core.writes.pipeline import change_row, create_row
from core.writes.request import WriteRequest
from services.models import App
from tests.integration.ledger_fixtures import STAFF, TILL, Till, till_of
from tests.integration.pipeline_fixtures import at
from tests.integration.sweep_fixtures import Shop

SLOT = at("2026-06-12 12:00")
NOON = at("2026-06-12 11:00")
HOLD_ENDS = at("2026-06-12 20:00")  # 21:00 BST


@pytest.fixture
def till(make_shop: Callable[..., Shop]) -> Till:
    return till_of(make_shop(TILL))


def sweep(till: Till, now: object) -> SweepReport:
    return sweep_connection([till.store], connection="shop", now=now)  # type: ignore[arg-type]


def test_an_order_paid_by_card_takes_the_amount_as_a_hold(till: Till) -> None:
    card = till.card("50")
    order = till.place(SLOT, NOON, gift_card_id=card, card_paid=Decimal("20")).key
    assert till.balance(card) == Decimal("30")
    posting = till.posting(order)
    assert posting is not None
    assert (posting["status"], posting["held_until"]) == ("held", HOLD_ENDS)
    [entry] = till.entries()
    assert (entry["kind"], entry["amount"], entry["balance"]) == ("take", -20, 30)
    assert (entry["account"], entry["row_key"], entry["posting"]) == (str(card), str(order), 1)
    assert (entry["actor"], entry["ledger"]) == (STAFF.name, "gift_cards")


def test_a_take_below_the_ledgers_min_is_refused_whole(till: Till) -> None:
    card = till.card("10")
    with pytest.raises(LedgerCap) as refused:
        till.place(SLOT, NOON, gift_card_id=card, card_paid=Decimal("25"))
    assert refused.value.details == {
        "ledger": "gift_cards",
        "key": card,
        "balance": "10",
        "amount": "25",
    }
    assert till.balance(card) == Decimal("10")
    assert till.entries() == []
    with till.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM orders").scalar_one() == 0


def test_an_account_another_transaction_holds_is_ledger_busy(till: Till) -> None:
    card = till.card("50")
    with till.engine.begin() as other:
        # What another posting's writer holds on the account.
        other.execute(
            sa.text("SELECT * FROM gift_cards WHERE id = :k FOR NO KEY UPDATE"), {"k": card}
        )
        with pytest.raises(LedgerBusy) as busy:
            till.place(SLOT, NOON, gift_card_id=card, card_paid=Decimal("5"))
    assert busy.value.details == {"ledger": "gift_cards", "key": card}
    assert till.balance(card) == Decimal("50")


def test_a_move_into_gives_back_returns_it_at_once_and_the_sweep_lets_it_go(till: Till) -> None:
    card = till.card("50")
    order = till.place(SLOT, NOON, gift_card_id=card, card_paid=Decimal("20")).key
    moved = till.move(order, "cancelled", at("2026-06-12 11:30"))
    assert moved.row["card_paid"] == 0
    assert till.balance(card) == Decimal("50")
    assert [e["kind"] for e in till.entries()] == ["take", "give-back"]
    report = sweep(till, HOLD_ENDS)
    assert report.given_back == ()
    assert len(till.entries()) == 2
    assert till.balance(card) == Decimal("50")


def test_a_move_out_of_the_held_states_takes_it_for_good(till: Till) -> None:
    card = till.card("50")
    order = till.place(SLOT, NOON, gift_card_id=card, card_paid=Decimal("20")).key
    till.move(order, "confirmed", at("2026-06-12 11:30"))
    assert till.posting(order)["status"] == "taken"  # type: ignore[index]
    report = sweep(till, HOLD_ENDS + timedelta(days=1))
    assert report.given_back == ()
    till.move(order, "cancelled", at("2026-06-13 11:30"))  # no longer a hold: it stands
    assert till.balance(card) == Decimal("30")
    assert [e["kind"] for e in till.entries()] == ["take"]


def test_the_sweep_gives_back_a_hold_nobody_finished_at_its_moment(till: Till) -> None:
    card = till.card("50")
    order = till.place(SLOT, NOON, gift_card_id=card, card_paid=Decimal("20")).key
    published: list[object] = []
    early = sweep_connection(
        [till.store], connection="shop", now=at("2026-06-12 19:59"), on_moved=published.append
    )
    assert early.given_back == () and published == []
    report = sweep_connection(
        [till.store], connection="shop", now=HOLD_ENDS, on_moved=published.append
    )
    assert [g.record.key for g in report.given_back] == [str(order)]
    assert till.balance(card) == Decimal("50")
    row = till.row("orders", order)
    assert (row["status"], row["card_paid"]) == ("placed", 0)  # no move of the row
    last = till.audit()[-1]
    assert (last["actor"], last["move_to"], last["row_key"]) == ("Timed move", None, str(order))
    assert [e["kind"] for e in till.entries()] == ["take", "give-back"]
    assert till.entries()[-1]["actor"] == "Timed move"
    assert len(published) == 1
    assert sweep(till, HOLD_ENDS + timedelta(minutes=1)).given_back == ()  # given back once


def test_a_hold_re_dated_under_the_sweeps_feet_is_read_again_on_the_row(till: Till) -> None:
    card = till.card("50")
    order = till.place(SLOT, NOON, gift_card_id=card, card_paid=Decimal("20")).key
    # The pickup moves to Saturday behind the pipeline's back: the stored heldUntil is stale.
    till.sql("UPDATE orders SET pickup_at = :p WHERE id = :k", p=SLOT + timedelta(days=1), k=order)
    assert sweep(till, HOLD_ENDS).given_back == ()
    assert till.posting(order)["held_until"] == HOLD_ENDS + timedelta(days=1)  # type: ignore[index]
    assert till.balance(card) == Decimal("30")
    assert len(sweep(till, HOLD_ENDS + timedelta(days=1)).given_back) == 1
    assert till.balance(card) == Decimal("50")


def test_a_give_back_the_cap_refuses_is_left_alone_an_hour_then_tried_again(
    till: Till, caplog: pytest.LogCaptureFixture
) -> None:
    card = till.card("50")
    order = till.place(SLOT, NOON, gift_card_id=card, card_paid=Decimal("20")).key
    till.sql("UPDATE gift_cards SET balance = 90 WHERE id = :k", k=card)  # topped up meanwhile
    with caplog.at_level(logging.WARNING, logger="core.store.set_aside"):
        refused = sweep(till, HOLD_ENDS)
    assert [(r.key, code) for r, code in refused.holds_refused] == [(str(order), "LEDGER_CAP")]
    [record] = till.records()
    assert (record["code"], record["rule"], record["until"]) == (
        "LEDGER_CAP",
        -1,
        HOLD_ENDS + timedelta(hours=1),
    )
    assert "timed move refused; left alone for an hour" in caplog.text
    assert f"key={order} rule=-1 code=LEDGER_CAP" in caplog.text
    till.sql("UPDATE gift_cards SET balance = 70 WHERE id = :k", k=card)  # spent some
    assert sweep(till, HOLD_ENDS + timedelta(minutes=59)).given_back == ()  # its hour runs
    assert till.balance(card) == Decimal("70")
    assert len(sweep(till, HOLD_ENDS + timedelta(hours=1)).given_back) == 1
    assert till.balance(card) == Decimal("90")
    assert till.records() == []


def test_a_give_back_whose_account_is_held_elsewhere_waits_a_minute(till: Till) -> None:
    card = till.card("50")
    till.place(SLOT, NOON, gift_card_id=card, card_paid=Decimal("20"))
    with till.engine.begin() as other:
        # What another posting's writer holds on the account.
        other.execute(
            sa.text("SELECT * FROM gift_cards WHERE id = :k FOR NO KEY UPDATE"), {"k": card}
        )
        busy = sweep(till, HOLD_ENDS)
    assert len(busy.holds_busy) == 1 and till.records() == []
    assert len(sweep(till, HOLD_ENDS + timedelta(minutes=1)).given_back) == 1


def test_sample_rows_never_post(till: Till) -> None:
    card = till.card("50")
    values = {"pickup_at": SLOT, "gift_card_id": card, "card_paid": Decimal("20")}
    sample = create_row(till.store, WriteRequest("orders", Actor.sample(), NOON, values=values))
    change_row(till.store, WriteRequest("orders", STAFF, NOON, key=sample.key, move_to="cancelled"))
    assert till.balance(card) == Decimal("50")
    assert till.entries() == [] and till.posting(sample.key) is None
    assert sweep(till, HOLD_ENDS).given_back == ()


def test_an_app_whose_only_clock_work_is_its_holds_is_swept() -> None:
    # The till lists no timed move: its holds alone bring it to the minute sweep.
    assert App(name="till", manifest=TILL).has_minute_work
