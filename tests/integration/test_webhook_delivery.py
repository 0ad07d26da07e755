"""Delivery to real HTTP receivers the tests start: signed so `standardwebhooks` verifies
it, sent once by racing workers, retried with growing waits then failed, sent again, and a
worker killed mid-delivery. Times are UTC.

A signature carries the try's time and `standardwebhooks` refuses one more than five
minutes from the receiver's clock, so the tests that verify signatures write and deliver
on the real clock; the retry test walks its waits on a clock of its own.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from core.basics.actors import Actor
from core.store.store import make_engine
from core.writes.pipeline import change_row
from core.writes.request import WriteRequest
from services.deliveries import drain, send_again
from services.sending import RETRY_WAITS, Drained
from services.webhooks import Endpoint, make_secret
from tests.integration.pipeline_fixtures import at
from tests.integration.sweep_fixtures import Shop
from tests.integration.webhook_fixtures import (
    attempt_rows,
    delivery_rows,
    hook_shop_manifest,
    receiver,
)

STAFF = Actor.person("staff@example.com")
SECRET = make_secret()


def real_now() -> datetime:
    return datetime.now(UTC)


@pytest.fixture
def hook_shop(make_shop: Callable[..., Shop]) -> Shop:
    return make_shop(hook_shop_manifest())


def cancel(shop: Shop, now: datetime) -> Any:
    """A new order cancelled by staff at `now`: the kitchen's and the ledger's deliveries."""
    key = shop.order(None)
    change_row(shop.store, WriteRequest("orders", STAFF, now, key=key, move_to="cancelled"))
    return key


def kitchen_only(shop: Shop) -> None:
    """Leave only the kitchen's delivery of each event (the ledger's is not this test's)."""
    shop.sql("DELETE FROM adminium.deliveries WHERE webhook = 'ledger'")


def hooks(url: str) -> dict[str, Endpoint]:
    return {"kitchen": Endpoint("kitchen", url, SECRET)}


def drain_at(shop: Shop, url: str, when: datetime) -> Drained:
    return drain(shop.engine, "shop", hooks(url), clock=lambda: when, allow_private=True)


def test_a_delivery_is_signed_so_standard_webhooks_verifies_it(hook_shop: Shop) -> None:
    key = cancel(hook_shop, real_now())
    kitchen_only(hook_shop)
    [queued] = delivery_rows(hook_shop.engine)
    with receiver() as got:
        done = drain(hook_shop.engine, "shop", hooks(got.url), clock=real_now, allow_private=True)
        again = drain(hook_shop.engine, "shop", hooks(got.url), clock=real_now, allow_private=True)
    assert (done.sent, again.sent) == ([queued["id"]], [])
    [post] = got.received
    assert post.headers["webhook-id"] == f"delivery-{queued['id']}.hookshop.shop"
    assert post.headers["content-type"] == "application/json"
    event = Webhook(SECRET).verify(post.body, post.headers)
    assert (event["automation"], event["key"], event["after"]["status"]) == (
        "kitchen_screen",
        key,
        "cancelled",
    )
    # Another secret, or a body changed on the way, is refused.
    with pytest.raises(WebhookVerificationError):
        Webhook(make_secret()).verify(post.body, post.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(SECRET).verify(post.body.replace(b"cancelled", b"placed"), post.headers)
    [row] = delivery_rows(hook_shop.engine)
    assert (row["status"], row["attempts"], row["answer"]) == ("sent", 0, "200 ok")
    [attempt] = attempt_rows(hook_shop.engine)
    assert (attempt["delivery_id"], attempt["status"], attempt["ok"], attempt["answer"]) == (
        queued["id"],
        200,
        True,
        "ok",
    )


def test_refused_deliveries_are_tried_again_with_growing_waits_then_failed(
    hook_shop: Shop,
) -> None:
    when = at("2026-06-12 10:00")
    cancel(hook_shop, when)
    kitchen_only(hook_shop)
    [queued] = delivery_rows(hook_shop.engine)
    with receiver(status=500) as got:
        for wait in RETRY_WAITS:
            assert drain_at(hook_shop, got.url, when).retried == [queued["id"]]
            [row] = delivery_rows(hook_shop.engine)
            assert (row["status"], row["send_at"]) == ("queued", when + wait)
            # Not before its wait is over.
            assert drain_at(hook_shop, got.url, when + wait - timedelta(seconds=1)).retried == []
            when += wait
        assert drain_at(hook_shop, got.url, when).failed == [queued["id"]]
    [row] = delivery_rows(hook_shop.engine)
    assert (row["status"], row["attempts"], row["answer"]) == (
        "failed",
        6,
        "500 kitchen screen is down",
    )
    # Six tries, each kept with its status, time and the answer's first bytes; the same id.
    attempts = attempt_rows(hook_shop.engine)
    assert [(a["status"], a["ok"], a["answer"]) for a in attempts] == [
        (500, False, "kitchen screen is down")
    ] * 6
    assert [a["at"] for a in attempts][-1] == when
    assert {p.headers["webhook-id"] for p in got.received} == {
        f"delivery-{queued['id']}.hookshop.shop"
    }
    assert len(got.received) == 6
    # Sent again, it goes to a receiver that takes it.
    assert send_again(hook_shop.engine, queued["id"], "hookshop", now=when)
    assert not send_again(hook_shop.engine, queued["id"], "hookshop", now=when)  # queued now
    with receiver() as got:
        assert drain_at(hook_shop, got.url, when).sent == [queued["id"]]
    assert len(got.received) == 1


def test_a_webhook_the_connection_lacks_is_a_retry_that_says_how_to_add_it(
    hook_shop: Shop,
) -> None:
    when = at("2026-06-12 10:00")
    cancel(hook_shop, when)
    kitchen_only(hook_shop)
    done = drain(hook_shop.engine, "shop", {}, clock=lambda: when)
    assert len(done.retried) == 1
    [row] = delivery_rows(hook_shop.engine)
    assert row["answer"] == (
        "connection shop has no webhook named kitchen: adminium webhook add shop kitchen URL"
    )


def test_a_receiver_that_is_not_there_is_a_retry(hook_shop: Shop) -> None:
    when = at("2026-06-12 10:00")
    cancel(hook_shop, when)
    kitchen_only(hook_shop)
    with receiver() as got:
        pass  # stopped: nothing listens on its port any more
    done = drain_at(hook_shop, got.url, when)
    assert len(done.retried) == 1
    [attempt] = attempt_rows(hook_shop.engine)
    assert (attempt["status"], attempt["ok"]) == (None, False)
    assert attempt["answer"].startswith("ConnectionRefusedError")


def test_racing_workers_deliver_each_event_once(hook_shop: Shop) -> None:
    now = real_now()
    for _ in range(30):
        cancel(hook_shop, now)
    kitchen_only(hook_shop)
    with receiver() as got:
        workers = [
            threading.Thread(
                target=drain,
                args=(hook_shop.engine, "shop", hooks(got.url)),
                kwargs={"clock": real_now, "allow_private": True},
            )
            for _ in range(3)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=30)
    ids = [p.headers["webhook-id"] for p in got.received]
    assert len(ids) == 30
    assert len(set(ids)) == 30
    assert {r["status"] for r in delivery_rows(hook_shop.engine)} == {"sent"}


def _drain_in_child(url: str, database: str) -> None:
    drain(make_engine(database), "shop", hooks(url), clock=real_now, timeout=60, allow_private=True)


def test_a_worker_killed_mid_delivery_loses_nothing(hook_shop: Shop) -> None:
    cancel(hook_shop, real_now())
    kitchen_only(hook_shop)
    [queued] = delivery_rows(hook_shop.engine)
    with receiver(stall=30.0) as stalled:
        child = multiprocessing.get_context("fork").Process(
            target=_drain_in_child, args=(stalled.url, hook_shop.url)
        )
        child.start()
        assert stalled.in_request.wait(timeout=10), "the worker never posted"
        os.kill(child.pid or 0, signal.SIGKILL)
        child.join(timeout=5)
    # The dead worker's claim went with its transaction: the delivery is still queued, and
    # the next worker sends it with the same webhook-id (a receiver can drop the repeat).
    with receiver() as got:
        deadline = time.monotonic() + 10
        while not got.received and time.monotonic() < deadline:
            drain(hook_shop.engine, "shop", hooks(got.url), clock=real_now, allow_private=True)
            time.sleep(0.05)
    [post] = got.received
    assert post.headers["webhook-id"] == f"delivery-{queued['id']}.hookshop.shop"
    Webhook(SECRET).verify(post.body, post.headers)
    assert delivery_rows(hook_shop.engine)[0]["status"] == "sent"
