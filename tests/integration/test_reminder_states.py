"""Reminders only for rows still live, sent to a real aiosmtpd server.

The outbox tests' shop reminds an order 24 h before its `due_at`; its `cancelled` and
`done` are final states (no move out of them). Times are UTC.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from core.basics.actors import Actor
from core.outbox.reminders import waiting_reminders
from core.writes.pipeline import change_row
from core.writes.request import WriteRequest
from services.outbox import drain
from services.smtp import SmtpConfig
from tests.integration.outbox_fixtures import mail_shop_manifest, outbox_rows, smtp_server
from tests.integration.pipeline_fixtures import at
from tests.integration.sweep_fixtures import Shop

DUE = at("2026-06-13 11:00")
SENDS = at("2026-06-12 11:00")
"""24 h before DUE: the reminders' send time."""
STAFF = Actor.person("staff@example.com")


@pytest.fixture
def mail_shop(make_shop: Callable[..., Shop]) -> Shop:
    return make_shop(mail_shop_manifest())


def move(shop: Shop, key: Any, to: str) -> None:
    change_row(shop.store, WriteRequest("orders", STAFF, SENDS, key=key, move_to=to))


def test_a_final_row_gets_no_reminder_and_one_queued_is_dropped(mail_shop: Shop) -> None:
    live = mail_shop.order(DUE, email="live@example.com")
    final = mail_shop.insert("orders", status="cancelled", due_at=DUE, email="f@example.com")
    cancelled = mail_shop.order(DUE, email="cancelled@example.com")
    done = mail_shop.order(DUE, email="done@example.com")
    report = mail_shop.sweep(SENDS)
    assert report.reminders == 3
    reminded = [m["row_key"] for m in outbox_rows(mail_shop.engine)]
    assert sorted(reminded) == sorted(str(k) for k in (live, cancelled, done))
    assert str(final) not in reminded
    # Before the drain takes them, two rows reach a final state.
    move(mail_shop, cancelled, "cancelled")
    move(mail_shop, done, "done")
    with smtp_server() as (url, inbox):
        drained = drain(
            mail_shop.engine,
            "shop",
            SmtpConfig(url),
            clock=lambda: SENDS + timedelta(seconds=5),
            stores=[mail_shop.store],
        )
    assert len(drained.sent) == 2 and len(drained.dropped) == 2
    # The live row's reminder and the cancelled row's own message went; nothing else.
    assert sorted(str(m["To"]) for m in inbox.received) == [
        "cancelled@example.com",
        "live@example.com",
    ]
    fates = {
        (m["row_key"], m["kind"]): (m["status"], m["answer"]) for m in outbox_rows(mail_shop.engine)
    }
    assert fates[(str(cancelled), "reminder")] == (
        "dropped",
        f"orders {cancelled} is cancelled, a final state (no move out of it)",
    )
    assert fates[(str(done), "reminder")] == (
        "dropped",
        f"orders {done} is done, a final state (no move out of it)",
    )
    assert fates[(str(live), "reminder")][0] == "sent"
    # The row page's list of reminders to come leaves a final row out as well.
    later = mail_shop.order(DUE + timedelta(days=1), email="later@example.com")
    mail_shop.sql("UPDATE orders SET status = 'done' WHERE id = :k", k=later)
    with mail_shop.engine.connect() as conn:
        assert (
            waiting_reminders(
                conn, mail_shop.store, "orders", mail_shop.row("orders", later), SENDS
            )
            == []
        )


def test_states_name_where_a_reminder_applies(make_shop: Callable[..., Shop]) -> None:
    manifest = mail_shop_manifest()
    # `done` can go back to `placed`: no longer final, but the reminder names `placed` only.
    manifest["tables"]["orders"]["states"]["moves"]["done"] = ["placed"]
    manifest["outbox"]["producers"][1]["states"] = ["placed"]
    shop = make_shop(manifest)
    placed = shop.order(DUE, email="placed@example.com")
    shop.insert("orders", status="done", due_at=DUE, email="done@example.com")
    moved = shop.order(DUE, email="moved@example.com")
    assert shop.sweep(SENDS).reminders == 2
    move(shop, moved, "done")
    with smtp_server() as (url, inbox):
        drain(shop.engine, "shop", SmtpConfig(url), clock=lambda: SENDS, stores=[shop.store])
    assert [str(m["To"]) for m in inbox.received] == ["placed@example.com"]
    fates = {m["row_key"]: (m["status"], m["answer"]) for m in outbox_rows(shop.engine)}
    assert fates[str(moved)] == (
        "dropped",
        f"orders {moved} is done: this reminder goes only in placed",
    )
    assert fates[str(placed)][0] == "sent"
