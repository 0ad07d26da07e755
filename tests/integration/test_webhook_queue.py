"""Deliveries queued in the write's own transaction: by a person, by the clock, by sample
data (only where an automation asks for samples), never by a refused write.

Times are UTC; the shop's clock is London.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from core.basics.actors import Actor
from core.basics.errors import AdminiumError
from core.writes.pipeline import change_row, create_row
from core.writes.request import WriteRequest
from tests.integration.pipeline_fixtures import at
from tests.integration.sweep_fixtures import Shop
from tests.integration.webhook_fixtures import delivery_rows, hook_shop_manifest

NOW = at("2026-06-12 10:00")
STAFF = Actor.person("staff@example.com")


@pytest.fixture
def hook_shop(make_shop: Callable[..., Shop]) -> Shop:
    return make_shop(hook_shop_manifest())


def cancel(shop: Shop, key: Any, actor: Actor = STAFF) -> None:
    change_row(shop.store, WriteRequest("orders", actor, NOW, key=key, move_to="cancelled"))


def test_a_cancel_queues_the_event_for_each_automation_that_hears_it(hook_shop: Shop) -> None:
    key = hook_shop.order(None, note="no onions")
    cancel(hook_shop, key)
    rows = delivery_rows(hook_shop.engine)
    assert [(r["automation"], r["webhook"], r["status"]) for r in rows] == [
        ("kitchen_screen", "kitchen", "queued"),
        ("every_change", "ledger", "queued"),
    ]
    event = rows[0]["event"]
    assert event == {
        "automation": "kitchen_screen",
        "app": "hookshop",
        "table": "orders",
        "key": key,
        "before": {**event["before"], "status": "placed"},
        "after": {**event["before"], "status": "cancelled"},
        "actor": "staff@example.com",
        "time": "2026-06-12T10:00:00+00:00",
        "sample": False,
    }
    assert event["after"]["note"] == "no onions"
    assert (rows[0]["queued_at"], rows[0]["send_at"], rows[0]["sample"]) == (NOW, NOW, False)


def test_a_change_the_automation_does_not_watch_queues_only_for_every_change(
    hook_shop: Shop,
) -> None:
    key = hook_shop.order(None)
    change_row(hook_shop.store, WriteRequest("orders", STAFF, NOW, key=key, values={"note": "x"}))
    change_row(hook_shop.store, WriteRequest("orders", STAFF, NOW, key=key, move_to="done"))
    assert [r["automation"] for r in delivery_rows(hook_shop.engine)] == [
        "every_change",
        "every_change",
    ]


def test_a_new_row_is_heard_with_no_before(hook_shop: Shop) -> None:
    result = create_row(hook_shop.store, WriteRequest("orders", STAFF, NOW, values={"note": "n"}))
    [row] = delivery_rows(hook_shop.engine)
    assert (row["automation"], row["row_key"]) == ("every_change", str(result.key))
    assert row["event"]["before"] is None
    assert row["event"]["after"]["status"] == "placed"
    assert result.deliveries == 1


def test_the_clock_s_move_queues_as_any_move_does(hook_shop: Shop) -> None:
    key = hook_shop.order(NOW - timedelta(minutes=1))
    report = hook_shop.sweep(NOW)
    assert len(report.moved) == 1
    rows = delivery_rows(hook_shop.engine)
    assert [r["automation"] for r in rows] == ["kitchen_screen", "every_change"]
    assert rows[0]["event"]["actor"] == "Timed move"
    assert rows[0]["event"]["after"]["cancel_code"] == "late"
    assert rows[0]["row_key"] == str(key)


def test_a_refused_write_queues_nothing(hook_shop: Shop) -> None:
    key = hook_shop.order(None)
    hook_shop.sql("UPDATE settings SET sweep_on = false")
    with pytest.raises(AdminiumError) as refused:
        cancel(hook_shop, key)
    assert refused.value.code == "STATE_MOVE_REFUSED"
    assert delivery_rows(hook_shop.engine) == []
    assert hook_shop.status(key) == "placed"


def test_a_write_refused_at_its_commit_takes_its_deliveries_with_it(hook_shop: Shop) -> None:
    # A deferred constraint trigger refuses at COMMIT, after step 7 has queued the event.
    hook_shop.sql(
        """
        CREATE FUNCTION refuse_note() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.note = 'refuse' THEN
            RAISE EXCEPTION 'no such note' USING ERRCODE = 'check_violation';
          END IF;
          RETURN NULL;
        END $$;
        CREATE CONSTRAINT TRIGGER refuse_note AFTER UPDATE ON orders
          DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_note();
        """
    )
    key = hook_shop.order(None)
    request = WriteRequest("orders", STAFF, NOW, key=key, values={"note": "refuse"})
    with pytest.raises(AdminiumError) as refused:
        change_row(hook_shop.store, request)
    assert refused.value.code == "VALUE_REFUSED"
    assert delivery_rows(hook_shop.engine) == []


def test_sample_rows_reach_only_an_automation_that_asks_for_samples(hook_shop: Shop) -> None:
    made = create_row(
        hook_shop.store, WriteRequest("orders", Actor.sample(), NOW, values={"note": "s"})
    )
    # Moved later by a person, the row is still a sample row: its mark stays.
    cancel(hook_shop, made.key)
    rows = delivery_rows(hook_shop.engine)
    assert [(r["automation"], r["sample"], r["event"]["sample"]) for r in rows] == [
        ("every_change", True, True),
        ("every_change", True, True),
    ]
