"""Delivery over SMTP to real aiosmtpd servers the tests start: sent, retried, failed, sent
again, and a worker killed mid-send. Times are UTC."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest

from core.basics.actors import Actor
from core.store.store import make_engine
from core.writes.pipeline import change_row
from core.writes.request import WriteRequest
from services.outbox import drain, send_again
from services.sending import RETRY_WAITS
from services.smtp import SmtpConfig
from tests.integration.outbox_fixtures import mail_shop_manifest, outbox_rows, smtp_server
from tests.integration.pipeline_fixtures import at
from tests.integration.sweep_fixtures import Shop

NOW = at("2026-06-12 10:00")
SENDER = "orders@shop.example"


@pytest.fixture
def mail_shop(make_shop: Callable[..., Shop]) -> Shop:
    return make_shop(mail_shop_manifest())


def queue_one(shop: Shop, address: str = "ann@example.com") -> int:
    key = shop.order(None, email=address)
    change_row(
        shop.store,
        WriteRequest(
            "orders", Actor.person("staff@example.com"), NOW, key=key, move_to="cancelled"
        ),
    )
    return int(outbox_rows(shop.engine)[-1]["id"])


def drain_at(shop: Shop, url: str, when: datetime):  # type: ignore[no-untyped-def]
    return drain(shop.engine, "shop", SmtpConfig(url, SENDER), clock=lambda: when)


def test_a_queued_email_is_sent_once_with_its_fixed_message_id(mail_shop: Shop) -> None:
    mail = queue_one(mail_shop)
    with smtp_server() as (url, inbox):
        done = drain_at(mail_shop, url, NOW)
        again = drain_at(mail_shop, url, NOW + timedelta(minutes=1))
    assert (done.sent, again.sent) == ([mail], [])
    [received] = inbox.received
    assert received["To"] == "ann@example.com"
    assert received["From"] == SENDER
    assert received["Subject"].startswith("Your order ")
    assert received["Message-ID"] == f"<outbox-{mail}.mailshop.shop@shop.example>"
    assert received.get_payload().strip() == "Cancelled because: None."
    [row] = outbox_rows(mail_shop.engine)
    assert (row["status"], row["sent_at"], row["attempts"]) == ("sent", NOW, 0)
    assert row["answer"].startswith("250 ")


@pytest.mark.parametrize("refusal", ["451 Try later", "550 No such user"])
def test_a_refused_email_is_tried_again_with_growing_waits_then_failed(
    mail_shop: Shop, refusal: str
) -> None:
    mail = queue_one(mail_shop)
    when = NOW
    with smtp_server(refuse=refusal) as (url, inbox):
        for wait in RETRY_WAITS:
            assert drain_at(mail_shop, url, when).retried == [mail]
            [row] = outbox_rows(mail_shop.engine)
            assert (row["status"], row["send_at"]) == ("queued", when + wait)
            # Not before its wait is over.
            assert drain_at(mail_shop, url, when + wait - timedelta(seconds=1)).retried == []
            when += wait
        assert drain_at(mail_shop, url, when).failed == [mail]
    [row] = outbox_rows(mail_shop.engine)
    assert (row["status"], row["attempts"], row["answer"]) == ("failed", 6, refusal)
    assert inbox.received == []
    # Sent again, it goes to a server that takes it.
    assert send_again(mail_shop.engine, mail, "mailshop", now=when)
    assert not send_again(mail_shop.engine, mail, "mailshop", now=when)  # no longer failed
    with smtp_server() as (url, inbox):
        assert drain_at(mail_shop, url, when).sent == [mail]
    assert len(inbox.received) == 1


def test_a_server_that_is_not_there_is_a_retry(mail_shop: Shop) -> None:
    mail = queue_one(mail_shop)
    with smtp_server() as (url, _):
        pass  # stopped: nothing listens on its port any more
    assert drain_at(mail_shop, url, NOW).retried == [mail]
    assert outbox_rows(mail_shop.engine)[0]["answer"].startswith("ConnectionRefusedError")


def _drain_in_child(url: str, database: str) -> None:
    drain(make_engine(database), "shop", SmtpConfig(url, SENDER), clock=lambda: NOW)


def test_a_worker_killed_mid_send_loses_no_email(mail_shop: Shop) -> None:
    mail = queue_one(mail_shop)
    with smtp_server(stall=30.0) as (url, inbox):
        child = multiprocessing.get_context("fork").Process(
            target=_drain_in_child, args=(url, mail_shop.url)
        )
        child.start()
        assert inbox.in_data.wait(timeout=10), "the worker never reached DATA"
        os.kill(child.pid or 0, signal.SIGKILL)
        child.join(timeout=5)
    # The dead worker's claim went with its transaction: the email is still queued, and
    # the next worker sends it (the same Message-ID tells a resend apart).
    deadline = time.monotonic() + 10
    while outbox_rows(mail_shop.engine)[0]["status"] != "queued" and time.monotonic() < deadline:
        time.sleep(0.1)
    with smtp_server() as (url, inbox):
        deadline = time.monotonic() + 10
        while not inbox.received and time.monotonic() < deadline:
            drain_at(mail_shop, url, NOW)
            time.sleep(0.1)
    assert [m["Message-ID"] for m in inbox.received] == [
        f"<outbox-{mail}.mailshop.shop@shop.example>"
    ]
    assert outbox_rows(mail_shop.engine)[0]["status"] == "sent"


def test_the_smtp_password_is_never_logged_or_shown(
    mail_shop: Shop, caplog: pytest.LogCaptureFixture
) -> None:
    queue_one(mail_shop)
    with smtp_server() as (url, _):
        pass  # nothing listens there any more
    secret = url.replace("smtp://", "smtp://sender:s3cret-pw@")
    config = SmtpConfig(secret, SENDER)
    assert config.shown == url.replace("smtp://", "smtp://sender:***@")
    with caplog.at_level("DEBUG"):
        drain(mail_shop.engine, "shop", config, clock=lambda: NOW)
    assert "s3cret-pw" not in caplog.text
    assert "s3cret-pw" not in str(outbox_rows(mail_shop.engine))
    assert "sender:***@" in caplog.text
