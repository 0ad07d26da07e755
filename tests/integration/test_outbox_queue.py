"""Emails queued in the write's own transaction, and reminders queued by the minute job.

Times are UTC; the shop's clock is London (BST, UTC+1, in June 2026).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from core.basics.actors import Actor
from core.basics.errors import AdminiumError
from core.outbox.reminders import candidates_query, queue_reminders
from core.store.install import timed_indexes
from core.store.schema import sample_marks
from core.writes.pipeline import change_row, create_row
from core.writes.request import WriteRequest
from tests.integration.outbox_fixtures import mail_shop_manifest, outbox_rows
from tests.integration.pipeline_fixtures import at
from tests.integration.sweep_fixtures import Shop

NOW = at("2026-06-12 10:00")
STAFF = Actor.person("staff@example.com")


@pytest.fixture
def mail_shop(make_shop: Callable[..., Shop]) -> Shop:
    return make_shop(mail_shop_manifest())


def cancel(shop: Shop, key: Any, actor: Actor = STAFF) -> None:
    change_row(shop.store, WriteRequest("orders", actor, NOW, key=key, move_to="cancelled"))


def test_a_timed_move_queues_its_message_rendered_from_the_row(mail_shop: Shop) -> None:
    key = mail_shop.order(NOW - timedelta(minutes=1), email="ann@example.com")
    report = mail_shop.sweep(NOW)
    assert [d.key for d in report.moved] == [key]
    [mail] = outbox_rows(mail_shop.engine)
    assert (mail["kind"], mail["producer"], mail["row_key"]) == ("message", 1, str(key))
    assert mail["address"] == "ann@example.com"
    assert mail["subject"] == f"Your order {key} was cancelled"
    # The timed move's `set` is written in the same write, so the email can say why.
    assert mail["body"] == "Cancelled because: late."
    assert (mail["status"], mail["queued_at"], mail["send_at"]) == ("queued", NOW, NOW)


def test_a_person_move_queues_and_the_write_result_says_so(mail_shop: Shop) -> None:
    key = mail_shop.order(None, email="bob@example.com")
    result = change_row(
        mail_shop.store, WriteRequest("orders", STAFF, NOW, key=key, move_to="cancelled")
    )
    assert result.queued == 1
    assert [m["address"] for m in outbox_rows(mail_shop.engine)] == ["bob@example.com"]


def test_a_change_that_keeps_the_watched_value_queues_nothing_more(mail_shop: Shop) -> None:
    key = mail_shop.order(None, email="bob@example.com")
    cancel(mail_shop, key)
    change_row(mail_shop.store, WriteRequest("orders", STAFF, NOW, key=key, values={"note": "x"}))
    assert len(outbox_rows(mail_shop.engine)) == 1


@pytest.mark.parametrize("address", ["", "   ", None], ids=["empty", "blank", "null"])
def test_an_empty_address_queues_nothing(mail_shop: Shop, address: str | None) -> None:
    key = mail_shop.order(None, email=address)
    cancel(mail_shop, key)
    assert mail_shop.status(key) == "cancelled"
    assert outbox_rows(mail_shop.engine) == []


def test_a_refused_write_queues_nothing(mail_shop: Shop) -> None:
    key = mail_shop.order(None, email="ann@example.com")
    mail_shop.sql("UPDATE settings SET sweep_on = false")
    with pytest.raises(AdminiumError):
        cancel(mail_shop, key)
    assert outbox_rows(mail_shop.engine) == []


def test_a_write_the_database_refuses_after_queueing_rolls_back_its_email(
    mail_shop: Shop,
) -> None:
    # The email is queued before the transaction ends; a refusal at commit (a deferred
    # constraint here) takes it back with the row.
    key = mail_shop.order(None, email="ann@example.com")
    mail_shop.sql(
        "ALTER TABLE orders ADD CONSTRAINT no_cancel CHECK (status <> 'cancelled') NOT VALID"
    )
    with pytest.raises(AdminiumError):
        cancel(mail_shop, key)
    assert mail_shop.status(key) == "placed"
    assert outbox_rows(mail_shop.engine) == []


def test_sample_rows_queue_nothing_by_any_writer(mail_shop: Shop) -> None:
    made = create_row(
        mail_shop.store,
        WriteRequest("orders", Actor.sample(), NOW, values={"email": "s@example.com"}),
    )
    assert made.queued == 0
    # A person cancels one sample row; the clock cancels another (marked as sample data).
    cancel(mail_shop, made.key)
    swept = mail_shop.order(NOW - timedelta(minutes=1), email="t@example.com")
    with mail_shop.engine.begin() as conn:
        mark = {"app": "mailshop", "table_name": "orders", "added_at": NOW}
        conn.execute(sa.insert(sample_marks).values(row_key=str(swept), **mark))
    assert [d.key for d in mail_shop.sweep(NOW).moved] == [swept]
    assert outbox_rows(mail_shop.engine) == []


# --- reminders ------------------------------------------------------------------


def reminders(shop: Shop) -> list[tuple[str, Any, Any]]:
    return [
        (m["row_key"], m["moment"], m["send_at"])
        for m in outbox_rows(shop.engine)
        if m["kind"] == "reminder"
    ]


def test_the_sweep_queues_a_reminder_once_when_its_send_time_comes(mail_shop: Shop) -> None:
    # The settings' lead is 24 h: an order due Saturday 13 June 11:00 UTC is reminded from
    # Friday 11:00 UTC. At 10:00 nothing; at 11:00 one; a minute later still one.
    due = at("2026-06-13 11:00")
    key = mail_shop.order(due, email="ann@example.com")
    mail_shop.sweep(at("2026-06-12 10:59"))
    assert reminders(mail_shop) == []
    mail_shop.sweep(at("2026-06-12 11:00"))
    mail_shop.sweep(at("2026-06-12 11:01"))
    assert reminders(mail_shop) == [(str(key), due, at("2026-06-12 11:00"))]
    [mail] = outbox_rows(mail_shop.engine)
    assert mail["subject"] == f"Order {key} is due"


def test_the_linked_row_gives_the_lead_and_max_caps_it(mail_shop: Shop) -> None:
    # Customer leads: 2 h, and 100 h capped at 48 h. Due Saturday 13 June 11:00 UTC.
    soon = mail_shop.insert("customers", reminder_hours=2)
    long = mail_shop.insert("customers", reminder_hours=100)
    due = at("2026-06-13 11:00")
    short_key = mail_shop.order(due, email="a@example.com", customer_id=soon)
    long_key = mail_shop.order(due, email="b@example.com", customer_id=long)
    mail_shop.sweep(at("2026-06-11 11:00"))  # 48 h before: the capped one only
    assert [r[0] for r in reminders(mail_shop)] == [str(long_key)]
    mail_shop.sweep(at("2026-06-13 09:00"))  # 2 h before: the short one too
    assert sorted(r[0] for r in reminders(mail_shop)) == sorted([str(long_key), str(short_key)])


def test_no_lead_no_reminder_and_a_passed_moment_none(mail_shop: Shop) -> None:
    mail_shop.sql("UPDATE settings SET reminder_hours = NULL")
    mail_shop.order(at("2026-06-13 11:00"), email="a@example.com")
    mail_shop.sweep(at("2026-06-13 10:00"))
    assert reminders(mail_shop) == []
    mail_shop.sql("UPDATE settings SET reminder_hours = 24")
    mail_shop.sweep(at("2026-06-13 11:00"))  # the moment itself: no longer ahead
    assert reminders(mail_shop) == []


def test_a_re_dated_row_gets_a_new_reminder(mail_shop: Shop) -> None:
    first = at("2026-06-13 11:00")
    key = mail_shop.order(first, email="a@example.com")
    mail_shop.sweep(at("2026-06-12 11:00"))
    later = at("2026-06-14 11:00")
    mail_shop.sql("UPDATE orders SET due_at = :due WHERE id = :key", due=later, key=key)
    mail_shop.sweep(at("2026-06-12 11:05"))  # the new moment's send time has not come
    mail_shop.sweep(at("2026-06-13 11:00"))
    assert reminders(mail_shop) == [
        (str(key), first, at("2026-06-12 11:00")),
        (str(key), later, at("2026-06-13 11:00")),
    ]


def test_a_sample_row_gets_no_reminder(mail_shop: Shop) -> None:
    made = create_row(
        mail_shop.store,
        WriteRequest(
            "orders",
            Actor.sample(),
            NOW,
            values={"email": "s@example.com", "due_at": at("2026-06-13 09:00")},
        ),
    )
    mail_shop.sweep(at("2026-06-12 10:00"))
    assert made.key and reminders(mail_shop) == []


def test_two_racing_sweeps_queue_each_reminder_once(mail_shop: Shop) -> None:
    keys = [mail_shop.order(at("2026-06-13 11:00"), email=f"{n}@example.com") for n in range(20)]
    barrier = threading.Barrier(2, timeout=10)
    counts: list[int] = []

    def race() -> None:
        with mail_shop.engine.connect() as conn:
            barrier.wait()
            counts.append(queue_reminders(conn, [mail_shop.store], at("2026-06-12 11:00")))

    threads = [threading.Thread(target=race) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    assert sum(counts) == len(keys)
    assert sorted(r[0] for r in reminders(mail_shop)) == sorted(str(k) for k in keys)


def test_adminium_indexes_names_the_reminder_index_and_the_query_uses_it(mail_shop: Shop) -> None:
    assert (
        'CREATE INDEX IF NOT EXISTS "ix_orders_due_at" ON "public"."orders" ("due_at")'
        in timed_indexes(mail_shop.store.app)
    )
    with mail_shop.engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO orders (status, due_at, email)"
                " SELECT 'done', timestamptz '2026-01-01' + g * interval '1 minute', 'x@y'"
                " FROM generate_series(1, 50000) g"
            )
        )
        conn.execute(sa.text("ANALYZE orders"))
    query = candidates_query(
        mail_shop.store,
        2,
        mail_shop.store.app.outbox.producers[1],  # type: ignore[union-attr,arg-type]
        at("2026-06-12 11:00"),
        48,
        None,
    )
    with mail_shop.engine.connect() as conn:
        compiled = query.compile(conn, compile_kwargs={"literal_binds": True})
        plan = "\n".join(r[0] for r in conn.execute(sa.text(f"EXPLAIN {compiled}")))
    # The live states bound it too (no reminder for a row in a final state), so the timed
    # move's (status, due_at) index serves it as well as the reminder's own; either way the
    # moment is read through an index, never a scan of the table.
    assert re.search(r"Index Scan using ix_orders_(status_)?due_at on orders", plan), plan
    assert "Seq Scan on orders" not in plan


def test_a_template_reads_a_column_named_like_a_dict_method(make_shop: Callable[..., Shop]) -> None:
    manifest = mail_shop_manifest()
    manifest["tables"]["orders"]["columns"].append(
        {"ref": "items", "type": "text", "nullable": True}
    )
    manifest["outbox"]["producers"][0]["body"] = (
        "Items: {{ row.items }}; code {{ row['cancel_code'] }}"
    )
    shop = make_shop(manifest)
    key = shop.order(None, email="ann@example.com", items="2 pizzas")
    cancel(shop, key)
    assert outbox_rows(shop.engine)[0]["body"] == "Items: 2 pizzas; code None"
