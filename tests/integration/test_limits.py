"""Limits: a pickup slot takes at most `slot_capacity` counting orders (the till's limit).

Times are UTC; the till's hold ends at 21:00 on London's clock on the pickup day, which in
June (BST, UTC+1) is 20:00 UTC.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from core.basics.actors import Actor
from core.basics.errors import AdminiumError, LimitBusy, LimitReached
from core.setoff.limits import queue_for_group
from core.store.store import Store, make_engine
from core.sweep.sweep import sweep_connection
from core.writes.pipeline import change_row, create_row
from core.writes.request import WriteRequest
from tests.integration.launching import wait_for
from tests.integration.ledger_fixtures import STAFF, TILL, Till, till_of
from tests.integration.pipeline_fixtures import at
from tests.integration.sweep_fixtures import Shop
from web.errors import public_body

SLOT = at("2026-06-12 12:00")  # 13:00 in London
NOON = at("2026-06-12 11:00")
HOLD_ENDS = at("2026-06-12 20:00")  # 21:00 BST on the pickup day


@pytest.fixture
def till(make_shop: Callable[..., Shop]) -> Till:
    return till_of(make_shop(TILL))


def test_the_write_past_max_is_refused_with_limit_max_and_count(till: Till) -> None:
    till.place(SLOT, NOON)
    till.place(SLOT, NOON)
    with pytest.raises(LimitReached) as refused:
        till.place(SLOT, NOON)
    assert refused.value.details == {"limit": "per_slot", "max": 2, "count": 3}
    assert refused.value.status == 409
    till.place(at("2026-06-12 12:15"), NOON)  # another slot is another group


def test_a_setting_with_no_value_leaves_no_room(till: Till) -> None:
    till.set(slot_capacity=None)
    with pytest.raises(LimitReached) as refused:
        till.place(SLOT, NOON)
    assert refused.value.details == {"limit": "per_slot", "max": None, "count": 1}


def test_moving_into_another_group_is_judged_and_leaving_a_count_frees_a_place(
    till: Till,
) -> None:
    first = till.place(SLOT, NOON).key
    till.place(SLOT, NOON)
    other = till.place(at("2026-06-12 12:30"), NOON).key
    change = WriteRequest("orders", STAFF, NOON, key=other, values={"pickup_at": SLOT})
    with pytest.raises(LimitReached):
        change_row(till.store, change)
    till.move(first, "cancelled", NOON)  # cancelled counts nowhere
    assert change_row(till.store, change).row["pickup_at"] == SLOT


def test_a_held_order_stops_counting_at_its_moment_though_not_moved(till: Till) -> None:
    till.set(slot_capacity=1)
    held = till.place(SLOT, NOON).key
    with pytest.raises(LimitReached):
        till.place(SLOT, at("2026-06-12 19:59"))
    # 20:00 UTC is 21:00 in London: the placed order's hold is over by the clock; no sweep ran.
    till.place(SLOT, HOLD_ENDS)
    assert till.status(held) == "placed"


def test_sample_rows_never_count_and_are_never_refused(till: Till) -> None:
    till.set(slot_capacity=1)
    sample = WriteRequest("orders", Actor.sample(), NOON, values={"pickup_at": SLOT})
    create_row(till.store, sample)
    create_row(till.store, sample)  # past max, and not refused
    till.place(SLOT, NOON)  # the sample rows take no place
    with pytest.raises(LimitReached) as refused:
        till.place(SLOT, NOON)
    assert refused.value.details["count"] == 2


def waiting_on_an_advisory_lock(till: Till) -> bool:
    """Whether a backend of the till's database waits on an advisory lock right now."""
    with till.engine.connect() as conn:
        return bool(
            conn.exec_driver_sql(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND wait_event_type = 'Lock' AND wait_event = 'advisory'"
            ).scalar_one()
        )


def test_a_writer_queues_for_its_group_then_gives_up_busy(till: Till) -> None:
    limits = till.store.spec("orders").limits or []
    limit = limits[0]
    with till.engine.begin() as other, ThreadPoolExecutor(1) as pool:
        queue_for_group(other, till.store, "orders", limit, {"pickup_at": SLOT})
        writer = pool.submit(till.place, SLOT, NOON)
        # PostgreSQL shows it queued on the group's lock (not refused at once) ...
        wait_for("the writer to wait on the group", lambda: waiting_on_an_advisory_lock(till), 10)
        # ... until its lock_timeout (BUSY_WAIT) gives up by itself, with the other still open.
        with pytest.raises(LimitBusy) as busy:
            writer.result(timeout=30)
    assert busy.value.details == {"limit": "per_slot"}
    till.place(SLOT, NOON)  # the lock went with the other transaction


def test_two_hundred_writers_racing_for_the_last_ten_places_take_exactly_ten(
    till: Till,
) -> None:
    till.set(slot_capacity=30)
    for _ in range(20):
        till.insert("orders", status="confirmed", pickup_at=SLOT)
    # At most 40 connections at once: the test server allows 100 for everyone's tests.
    engine = make_engine(till.url, pool_size=40, max_overflow=0, pool_timeout=30)
    store = Store(engine, till.store.app, till.store.zone, connection="shop")

    def write(_: int) -> str:
        request = WriteRequest("orders", STAFF, NOON, values={"pickup_at": SLOT})
        try:
            create_row(store, request)
        except AdminiumError as error:
            return error.code
        return "taken"

    try:
        with ThreadPoolExecutor(max_workers=40) as pool:
            outcomes = list(pool.map(write, range(200), timeout=60))
    finally:
        engine.dispose()
    assert outcomes.count("taken") == 10
    assert set(outcomes) <= {"taken", "LIMIT_REACHED", "LIMIT_BUSY"}
    with till.engine.connect() as conn:
        counted = conn.exec_driver_sql("SELECT count(*) FROM orders").scalar_one()
    assert counted == 30


def test_a_timed_move_into_a_counted_state_past_max_is_set_aside(
    make_shop: Callable[..., Shop],
) -> None:
    manifest = copy.deepcopy(TILL)
    orders = manifest["tables"]["orders"]
    orders["columns"][1]["values"].append("waiting")
    orders["states"]["moves"]["waiting"] = ["placed"]
    # A waiting order is placed by the clock an hour before its pickup.
    at_ = {"column": "pickup_at", "minus": {"hours": 1}}
    orders["states"]["timed"] = [{"from": "waiting", "to": "placed", "at": at_}]
    till = till_of(make_shop(manifest))
    till.set(slot_capacity=1)
    till.place(SLOT, NOON)
    waiting = till.insert("orders", status="waiting", pickup_at=SLOT)
    report = sweep_connection([till.store], connection="shop", now=NOON)
    assert [(r.due.key, r.code) for r in report.set_aside] == [(waiting, "LIMIT_REACHED")]
    assert till.status(waiting) == "waiting"


def test_a_guest_is_told_the_code_with_empty_params() -> None:
    refusal = LimitReached("the limit per_slot is reached", {"limit": "per_slot", "max": 2})
    assert public_body(refusal) == {
        "error": {"code": "LIMIT_REACHED", "message": "This is full.", "params": {}}
    }
