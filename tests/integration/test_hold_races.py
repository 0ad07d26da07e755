"""Holds under other writers' feet, and races: a hold the sweep found given back or
re-dated by a move before its give-back; two sweeps racing over 1,000 due holds; writers
racing on one account (tests/integration/ledger_fixtures.TILL).

Times are UTC. An order for a pickup on Friday 12 June 2026 is held until 21:00 in London
that day: BST (UTC+1), so 20:00 UTC.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from decimal import Decimal

import pytest

from core.basics.errors import AdminiumError, LedgerBusy
from core.ledgers.entries import PostingRecord, due_holds
from core.ledgers.give_back import give_back_hold
from core.store.store import Store, make_engine
from core.sweep.sweep import sweep_connection
from core.writes.pipeline import change_row, create_row
from core.writes.request import WriteRequest
from tests.integration.ledger_fixtures import STAFF, TILL, Till, till_of
from tests.integration.pipeline_fixtures import at
from tests.integration.sweep_fixtures import Shop

SLOT = at("2026-06-12 12:00")
NOON = at("2026-06-12 11:00")
HOLD_ENDS = at("2026-06-12 20:00")  # 21:00 BST


@pytest.fixture
def till(make_shop: Callable[..., Shop]) -> Till:
    built = till_of(make_shop(TILL))
    built.set(slot_capacity=10_000, card_max=1_000_000)
    return built


def found_by_the_sweep(till: Till, now: datetime) -> list[PostingRecord]:
    """The holds the sweep finds due at `now` (its own query), before it gives any back."""
    with till.engine.connect() as conn:
        return due_holds(conn, till.store.app.name, now, 500)


def test_a_hold_a_move_gave_back_after_the_sweep_found_it_is_let_go_of(till: Till) -> None:
    card = till.card("50")
    order = till.place(SLOT, NOON, gift_card_id=card, card_paid=Decimal("20")).key
    [record] = found_by_the_sweep(till, HOLD_ENDS)
    # Between the sweep's search and its give-back, staff cancel the order (givesBack).
    till.move(order, "cancelled", HOLD_ENDS)
    assert till.balance(card) == Decimal("50")
    assert give_back_hold(till.store, record, now=HOLD_ENDS) is None  # let go of
    assert till.balance(card) == Decimal("50")
    assert [e["kind"] for e in till.entries()] == ["take", "give-back"]
    assert till.entries()[-1]["actor"] == STAFF.name
    assert till.posting(order)["status"] == "given-back"  # type: ignore[index]
    assert sweep_connection([till.store], connection="shop", now=HOLD_ENDS).given_back == ()


def test_a_hold_re_dated_by_a_move_after_the_sweep_found_it_keeps_its_new_moment(
    till: Till,
) -> None:
    card = till.card("50")
    order = till.place(SLOT, NOON, gift_card_id=card, card_paid=Decimal("20")).key
    [record] = found_by_the_sweep(till, HOLD_ENDS)
    # Staff move the pickup to Saturday: the hold now ends at 21:00 BST Saturday.
    saturday = WriteRequest(
        "orders", STAFF, HOLD_ENDS, key=order, values={"pickup_at": SLOT + timedelta(days=1)}
    )
    change_row(till.store, saturday)
    assert give_back_hold(till.store, record, now=HOLD_ENDS) is None
    posting = till.posting(order)
    assert posting is not None
    assert (posting["status"], posting["held_until"]) == ("held", HOLD_ENDS + timedelta(days=1))
    assert till.balance(card) == Decimal("30")
    assert found_by_the_sweep(till, HOLD_ENDS + timedelta(hours=23, minutes=59)) == []
    later = sweep_connection([till.store], connection="shop", now=HOLD_ENDS + timedelta(days=1))
    assert [g.record.key for g in later.given_back] == [str(order)]
    assert till.balance(card) == Decimal("50")


def test_two_sweeps_racing_over_1000_due_holds_give_each_back_once(till: Till) -> None:
    card = till.card("1000")
    for number in range(1000):
        # Forty slots of a quarter hour, all on Friday: every hold ends at 20:00 UTC.
        pickup = SLOT + timedelta(minutes=15 * (number % 40))
        till.place(pickup, NOON, gift_card_id=card, card_paid=Decimal("1"))
    assert till.balance(card) == Decimal("0")
    engine = make_engine(till.url, pool_size=4, max_overflow=0)
    other = Store(engine, till.store.app, till.store.zone, connection="shop")

    def sweeps(store: Store) -> list[str]:
        given: list[str] = []
        # Four minutes from 20:00: 500 a minute at most, so two are enough for 1,000.
        for minute in range(4):
            now = HOLD_ENDS + timedelta(minutes=minute)
            report = sweep_connection([store], connection="shop", now=now)
            given.extend(g.record.key for g in report.given_back)
        return given

    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            racing = [pool.submit(sweeps, store) for store in (till.store, other)]
            given = [key for future in racing for key in future.result(timeout=90)]
    finally:
        engine.dispose()
    assert len(given) == 1000 and len(set(given)) == 1000
    entries = till.entries()
    backs = Counter(e["row_key"] for e in entries if e["kind"] == "give-back")
    assert len(backs) == 1000 and set(backs.values()) == {1}
    assert till.balance(card) == Decimal("1000")
    assert entries[-1]["balance"] == Decimal("1000")


def test_give_backs_racing_without_the_fence_give_each_back_once(till: Till) -> None:
    card = till.card("200")
    for _ in range(200):
        till.place(SLOT, NOON, gift_card_id=card, card_paid=Decimal("1"))
    records = found_by_the_sweep(till, HOLD_ENDS)
    assert len(records) == 200

    def give_back(order: list[PostingRecord]) -> tuple[int, int]:
        # What a sweep does per hold, with no fence: the row lock and the status read
        # under it decide; a row held by the other is WRITE_CONFLICT, tried next minute.
        given = conflicts = 0
        for record in order:
            try:
                given += give_back_hold(till.store, record, now=HOLD_ENDS) is not None
            except AdminiumError as error:
                assert error.code in ("WRITE_CONFLICT", "LEDGER_BUSY")
                conflicts += 1
        return given, conflicts

    with ThreadPoolExecutor(max_workers=2) as pool:
        both = list(pool.map(give_back, (records, records[::-1]), timeout=60))
    given = sum(g for g, _ in both)
    backs = Counter(e["row_key"] for e in till.entries() if e["kind"] == "give-back")
    assert len(backs) == given and set(backs.values()) <= {1}
    # What a conflict left held is given back by the next minute's sweep, once.
    sweep_connection([till.store], connection="shop", now=HOLD_ENDS + timedelta(minutes=1))
    backs = Counter(e["row_key"] for e in till.entries() if e["kind"] == "give-back")
    assert len(backs) == 200 and set(backs.values()) == {1}
    assert till.balance(card) == Decimal("200")


def test_writers_racing_on_one_account_never_take_more_than_it_holds(till: Till) -> None:
    card = till.card("10")
    engine = make_engine(till.url, pool_size=20, max_overflow=0, pool_timeout=30)
    store = Store(engine, till.store.app, till.store.zone, connection="shop")
    deadline = time.monotonic() + 30

    def pay(number: int) -> str:
        # Each writer its own slot (no limit queue): they meet on the card alone. A busy
        # card is tried again, as a person would, until taken or refused by the cap.
        values = {
            "pickup_at": SLOT + timedelta(minutes=number),
            "gift_card_id": card,
            "card_paid": Decimal("1"),
        }
        while time.monotonic() < deadline:
            try:
                create_row(store, WriteRequest("orders", STAFF, NOON, values=values))
            except LedgerBusy:
                time.sleep(0.01)
                continue
            except AdminiumError as error:
                return error.code
            return "taken"
        return "timed out"

    try:
        with ThreadPoolExecutor(max_workers=20) as pool:
            outcomes = Counter(pool.map(pay, range(40), timeout=60))
    finally:
        engine.dispose()
    assert outcomes == {"taken": 10, "LEDGER_CAP": 30}
    assert till.balance(card) == Decimal("0")
    entries = till.entries()
    assert len(entries) == 10
    # Each entry's balance is the one before it less 1: no two writers read the same.
    assert sorted(e["balance"] for e in entries) == list(range(10))
