"""Effects and totals in the one pipeline (tests/integration/effect_fixtures: the kitchen).

Every order is due at DUE, an hour before NOW, so the first sweep at NOW cancels it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
import sqlalchemy as sa

from core.basics.actors import Actor
from core.basics.errors import ColumnReadOnly, StateMoveRefused, ValueRefused, WriteConflict
from core.samples.data import remove_sample, sample_actor
from core.writes.pipeline import WriteResult, create_row, make_timed_move
from core.writes.request import WriteRequest
from tests.integration.effect_fixtures import DUE, KITCHEN, NOW, STAFF, Kitchen
from tests.integration.sweep_fixtures import Shop


@pytest.fixture
def kitchen(make_shop: Callable[..., Shop]) -> Kitchen:
    return Kitchen(make_shop(KITCHEN).store)


def cancel_by_clock(kitchen: Kitchen, order: Any) -> WriteResult:
    rule = kitchen.store.spec("orders").states.timed[0]  # type: ignore[union-attr]
    return make_timed_move(kitchen.store, "orders", order, rule, now=NOW)


def test_the_clock_cancels_an_order_and_its_lines_and_desk_follow(kitchen: Kitchen) -> None:
    desk = kitchen.insert("desks", status="taken")
    order = kitchen.order(DUE, desk_id=desk)
    open_line, served, paid = (
        kitchen.line(order, 4),
        kitchen.line(order, 6, "served"),
        kitchen.line(order, 3, "paid"),  # `paid` lists no move to void: left as it is
    )
    moved: list[WriteResult] = []
    report = kitchen.sweep(NOW, on_moved=moved.append)
    assert [d.key for d in report.moved] == [order]
    assert kitchen.statuses("order_lines") == {open_line: "void", served: "void", paid: "paid"}
    assert kitchen.statuses("desks") == {desk: "free"}
    # The total sums open, served and paid lines: the paid one is left; the count is all three.
    assert kitchen.total(order) == (Decimal(3), 3)
    cause = {"table": "orders", "key": order, "from": "placed", "to": "cancelled"}
    linked = [
        (e["table_name"], e["row_key"], e["move_from"], e["move_to"], e["actor"], e["cause"])
        for e in kitchen.audit()
        if e["table_name"] != "orders"
    ]
    assert linked == [
        ("desks", str(desk), "taken", "free", "Timed move", cause),
        ("order_lines", str(open_line), "open", "void", "Timed move", cause),
        ("order_lines", str(served), "served", "void", "Timed move", cause),
    ]
    (own,) = [e for e in kitchen.audit() if e["table_name"] == "orders"]
    assert own["cause"] is None
    # One live event per changed row, the order's first (its total written once, at the end).
    (result,) = moved
    assert [(e.table, e.key, e.state) for e in result.events] == [
        ("orders", order, "cancelled"),
        ("desks", desk, "free"),
        ("order_lines", open_line, "void"),
        ("order_lines", served, "void"),
    ]
    assert (result.row["total"], result.row["lines"]) == (Decimal(3), 3)


def test_a_line_held_elsewhere_is_a_conflict_and_the_next_minute_moves(kitchen: Kitchen) -> None:
    order = kitchen.order(DUE)
    first, held = kitchen.line(order), kitchen.line(order)
    with kitchen.engine.connect() as other, other.begin():
        other.execute(
            sa.text("SELECT 1 FROM kitchen.order_lines WHERE id = :k FOR UPDATE"), {"k": held}
        )
        with pytest.raises(WriteConflict) as refused:
            cancel_by_clock(kitchen, order)
        assert refused.value.details["effect"] == {"table": "order_lines", "key": held}
        report = kitchen.sweep(NOW)
        assert ([d.key for d in report.conflicts], report.set_aside) == ([order], ())
        assert kitchen.records() == []
        assert kitchen.status(order) == "placed"
        assert kitchen.statuses("order_lines") == {first: "open", held: "open"}
    # The other writer is done: the next minute moves the order and both lines.
    report = kitchen.sweep(NOW + timedelta(minutes=1))
    assert [d.key for d in report.moved] == [order]
    assert kitchen.statuses("order_lines") == {first: "void", held: "void"}


CHECK_VOID = (
    "ALTER TABLE kitchen.order_lines ADD CONSTRAINT ck_void_without_note"
    " CHECK (status <> 'void' OR note IS NULL)"
)


@pytest.mark.parametrize(
    "refuse, error, code, table",
    [
        pytest.param(CHECK_VOID, ValueRefused, "VALUE_REFUSED", "order_lines", id="check"),
        pytest.param(
            "UPDATE kitchen.settings SET desks_free = false",
            StateMoveRefused,
            "STATE_MOVE_REFUSED",
            "desks",
            id="setting",
        ),
    ],
)
def test_a_refused_linked_row_rolls_the_whole_write_back_and_sets_the_order_aside(
    kitchen: Kitchen, refuse: str, error: type[Exception], code: str, table: str
) -> None:
    desk = kitchen.insert("desks", status="taken")
    order = kitchen.order(DUE, desk_id=desk)
    line = kitchen.line(order, note="paid at the till")
    kitchen.sql(refuse)
    linked = {"desks": desk, "order_lines": line}[table]
    with pytest.raises(error) as refused:  # type: ignore[call-overload]
        cancel_by_clock(kitchen, order)
    assert refused.value.details["effect"] == {"table": table, "key": linked}
    report = kitchen.sweep(NOW)
    assert [(r.due.key, r.code) for r in report.set_aside] == [(order, code)]
    assert [(r["row_key"], r["code"]) for r in kitchen.records()] == [(str(order), code)]
    # Nothing moved: in the check's case the desk was freed first (desks before order_lines),
    # and that rolled back with the rest.
    assert kitchen.status(order) == "placed"
    assert kitchen.statuses("desks") == {desk: "taken"}
    assert kitchen.statuses("order_lines") == {line: "open"}
    assert kitchen.audit() == []


def test_a_chain_of_two_frees_the_station_of_a_voided_line(kitchen: Kitchen) -> None:
    station = kitchen.insert("stations", status="busy")
    order = kitchen.order(None)
    line = kitchen.line(order, station_id=station)
    result = kitchen.move("orders", order, "cancelled")
    assert kitchen.statuses("stations") == {station: "idle"}
    (entry,) = [e for e in kitchen.audit() if e["table_name"] == "stations"]
    assert (entry["actor"], entry["cause"]) == (
        "staff@example.com",
        {"table": "order_lines", "key": line, "from": "open", "to": "void"},
    )
    assert {(e.table, e.key) for e in result.events} == {
        ("orders", order),
        ("order_lines", line),
        ("stations", station),
    }


def test_an_effect_of_a_sample_order_moves_sample_lines_only(kitchen: Kitchen) -> None:
    sample = sample_actor(kitchen.store.app)
    made = create_row(kitchen.store, WriteRequest("orders", sample, NOW, values={"due_at": DUE}))
    order = made.key
    sample_line = kitchen.add_line(order, 4, actor=sample).key
    real_line = kitchen.add_line(order, 6).key  # a member of staff's line on a sample order
    assert kitchen.total(order) == (Decimal(10), 2)
    kitchen.move("orders", order, "cancelled", actor=sample)
    assert kitchen.statuses("order_lines") == {sample_line: "void", real_line: "open"}
    assert kitchen.total(order) == (Decimal(6), 2)
    # The real line goes first (it is the venue's); removal then takes the sample order and
    # the line its effect voided.
    kitchen.sql("DELETE FROM kitchen.order_lines WHERE id = :k", k=real_line)
    assert remove_sample(kitchen.store, now=NOW).removed == {"order_lines": 1, "orders": 1}
    assert (kitchen.statuses("orders"), kitchen.statuses("order_lines")) == ({}, {})


def test_totals_after_create_edit_move_effect_and_sample_removal(kitchen: Kitchen) -> None:
    made = create_row(kitchen.store, WriteRequest("orders", STAFF, NOW, values={}))
    order = made.key
    assert (made.row["total"], made.row["lines"]) == (0, 0)
    a = kitchen.add_line(order, Decimal("4.50")).key
    b = kitchen.add_line(order, 2).key
    assert kitchen.total(order) == (Decimal("6.50"), 2)
    kitchen.change("order_lines", a, amount=Decimal("1.50"))
    assert kitchen.total(order) == (Decimal("3.50"), 2)
    kitchen.move("order_lines", b, "void")  # void is not summed, still counted
    assert kitchen.total(order) == (Decimal("1.50"), 2)
    other = create_row(kitchen.store, WriteRequest("orders", STAFF, NOW, values={})).key
    kitchen.change("order_lines", a, order_id=other)  # both orders recomputed
    assert (kitchen.total(order), kitchen.total(other)) == ((0, 1), (Decimal("1.50"), 1))
    # A sample line never changes a real order's total, and its removal leaves it so.
    kitchen.add_line(other, 9, actor=sample_actor(kitchen.store.app))
    assert kitchen.total(other) == (Decimal("1.50"), 1)
    assert remove_sample(kitchen.store, now=NOW).removed == {"order_lines": 1}
    assert kitchen.total(other) == (Decimal("1.50"), 1)
    # An effect: the cancel voids the line; the locked, cancelled order still takes its total.
    moved = kitchen.move("orders", other, "cancelled")
    assert kitchen.total(other) == (0, 1)
    assert (moved.row["status"], moved.row["total"]) == ("cancelled", 0)


def test_totals_of_sample_removal_are_recomputed_for_a_real_order(kitchen: Kitchen) -> None:
    # A sample line seeded straight in and counted (as a total written before the rule
    # existed would have it): removal recomputes the order from what is left.
    order = kitchen.order(None)
    kept = kitchen.line(order, 2)
    gone = kitchen.line(order, 7)
    kitchen.sql(
        "INSERT INTO adminium.sample_rows VALUES ('kitchen', 'order_lines', :k, now())", k=str(gone)
    )
    kitchen.sql("UPDATE kitchen.orders SET total = 9, lines = 2 WHERE id = :k", k=order)
    assert remove_sample(kitchen.store, now=NOW).removed == {"order_lines": 1}
    assert kitchen.statuses("order_lines") == {kept: "open"}
    assert kitchen.total(order) == (Decimal(2), 1)


@pytest.mark.parametrize("actor", [STAFF, Actor.importer()], ids=["person", "import"])
def test_a_writers_value_for_a_total_is_refused(kitchen: Kitchen, actor: Actor) -> None:
    with pytest.raises(ColumnReadOnly) as refused:
        create_row(kitchen.store, WriteRequest("orders", actor, NOW, values={"total": 5}))
    assert refused.value.details == {"column": "total", "reason": "total"}


def test_two_writers_changing_lines_of_one_order_end_with_the_right_total(
    kitchen: Kitchen,
) -> None:
    order = create_row(kitchen.store, WriteRequest("orders", STAFF, NOW, values={})).key
    lines = [kitchen.add_line(order, 0).key for _ in range(2)]
    conflicts = [0, 0]
    deadline = time.monotonic() + 20

    def write(n: int) -> None:
        for amount in range(1, 31):
            while time.monotonic() < deadline:
                try:
                    kitchen.change("order_lines", lines[n], amount=amount + 100 * n)
                    break
                except WriteConflict:
                    conflicts[n] += 1

    threads = [threading.Thread(target=write, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=25)
    assert time.monotonic() < deadline, f"the writers did not finish ({conflicts} conflicts)"
    # The last amounts are 30 and 130: whichever writer committed last recomputed both.
    assert kitchen.total(order) == (Decimal(160), 2)
