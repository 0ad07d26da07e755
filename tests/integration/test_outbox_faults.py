"""One bad email never stops the drain or sends another twice: a line break in an address
(the probe's poisoned guest), a list where one address is expected, and a real aiosmtpd
server that refuses, drops and breaks on some messages while it takes the others. Times
are UTC."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from core.basics.actors import Actor
from core.writes.pipeline import change_row
from core.writes.request import WriteRequest
from services.outbox import drain
from services.sending import RETRY_WAITS, Drained
from services.smtp import SmtpConfig
from tests.integration.outbox_fixtures import (
    faulty_smtp_server,
    mail_shop_manifest,
    outbox_rows,
    smtp_server,
)
from tests.integration.pipeline_fixtures import at
from tests.integration.sweep_fixtures import Shop

NOW = at("2026-06-12 10:00")
SENDER = "orders@shop.example"
POISON = "poison@example.com\r\nBcc: x@evil.example"


@pytest.fixture
def mail_shop(make_shop: Callable[..., Shop]) -> Shop:
    return make_shop(mail_shop_manifest())


def cancel(shop: Shop, address: str) -> int:
    """An order with this address cancelled by staff at NOW: its email's id."""
    key = shop.order(None, email=address)
    change_row(
        shop.store,
        WriteRequest(
            "orders", Actor.person("staff@example.com"), NOW, key=key, move_to="cancelled"
        ),
    )
    return int(outbox_rows(shop.engine)[-1]["id"])


def drain_at(shop: Shop, url: str, when: datetime) -> Drained:
    return drain(shop.engine, "shop", SmtpConfig(url, SENDER), clock=lambda: when)


def by_id(shop: Shop) -> dict[int, dict[str, Any]]:
    return {row["id"]: row for row in outbox_rows(shop.engine)}


def message_ids(received: list[Any]) -> list[str]:
    return sorted(m["Message-ID"] for m in received)


def mid(mail: int) -> str:
    return f"<outbox-{mail}.mailshop.shop@shop.example>"


def test_a_line_break_in_one_address_sends_no_other_email_twice(mail_shop: Shop) -> None:
    """The probe's case: a guest's address with a Bcc header in it, queued beside others.
    Before, the drain's batch rolled back each minute and sent the others again."""
    ann = cancel(mail_shop, "ann@example.com")
    poison = cancel(mail_shop, POISON)
    bob = cancel(mail_shop, "bob@example.com")
    with smtp_server() as (url, inbox):
        for minute in range(3):
            drain_at(mail_shop, url, NOW + timedelta(minutes=minute))
    assert message_ids(inbox.received) == [mid(ann), mid(bob)]
    assert all("evil" not in str(m) for m in inbox.received)
    rows = by_id(mail_shop)
    assert (rows[ann]["status"], rows[bob]["status"]) == ("sent", "sent")
    assert (rows[poison]["status"], rows[poison]["answer"]) == (
        "failed",
        "the address holds a line break",
    )


@pytest.mark.parametrize(
    ("address", "why"),
    [
        (POISON, "the address holds a line break"),
        ("poison@example.com\rBcc: x@evil.example", "the address holds a line break"),
        (
            "ann@example.com, bob@example.com",
            "the address is a list of 2 addresses where one is expected",
        ),
        (
            "ann@example.com bob@example.com",
            "the address is a list of 2 addresses where one is expected",
        ),
        ("ann at example.com", "the address is not one name@domain"),
    ],
    ids=["crlf", "bare-cr", "comma-list", "space-list", "no-at"],
)
def test_an_address_refused_on_the_way_in_queues_nothing_and_says_why(
    mail_shop: Shop, address: str, why: str
) -> None:
    mail = cancel(mail_shop, address)
    [row] = outbox_rows(mail_shop.engine)
    assert (row["id"], row["status"], row["attempts"], row["answer"]) == (mail, "failed", 0, why)
    with smtp_server() as (url, inbox):
        assert drain_at(mail_shop, url, NOW).tried == []
    assert inbox.received == []


def test_an_address_that_cannot_be_sent_is_refused_once_never_tried_again(
    mail_shop: Shop,
) -> None:
    """A row queued before the address was checked on the way in (or written in SQL)."""
    ann = cancel(mail_shop, "ann@example.com")
    poison = cancel(mail_shop, "later@example.com")
    bob = cancel(mail_shop, "bob@example.com")
    mail_shop.sql("UPDATE adminium.outbox SET address = :a WHERE id = :id", a=POISON, id=poison)
    with smtp_server() as (url, inbox):
        first = drain_at(mail_shop, url, NOW)
        later = drain_at(mail_shop, url, NOW + RETRY_WAITS[-1] * 2)
    assert (first.sent, first.failed, first.retried) == ([ann, bob], [poison], [])
    assert later.tried == []
    assert message_ids(inbox.received) == [mid(ann), mid(bob)]
    row = by_id(mail_shop)[poison]
    assert (row["status"], row["attempts"], row["answer"]) == (
        "failed",
        1,
        "the address holds a line break",
    )


FAULTS = {
    "nobody@example.com": "550 5.1.1 No such user here",
    "refuse@example.com": "554 5.7.1 Message refused by policy",
    "drop@example.com": "SMTPServerDisconnected: Connection unexpectedly closed",
    "broken@example.com": "500 Error: (RuntimeError) the mail handler broke",
}


def test_a_server_that_fails_some_messages_takes_every_other_once(mail_shop: Shop) -> None:
    """Good and bad emails in turn on one connection: each good one is delivered once, in
    the first minute; an address with a line break (written in SQL, past the check on the
    way in) is refused at once; each email the server fails is tried with growing waits,
    then failed with its reason."""
    good, bad = [], {}
    for n, address in enumerate(FAULTS):
        good.append(cancel(mail_shop, f"guest{n}@example.com"))
        bad[cancel(mail_shop, address)] = FAULTS[address]
    poison = cancel(mail_shop, "later@example.com")
    mail_shop.sql("UPDATE adminium.outbox SET address = :a WHERE id = :id", a=POISON, id=poison)
    good.append(cancel(mail_shop, "last@example.com"))
    when = NOW
    with faulty_smtp_server() as (url, inbox):
        first = drain_at(mail_shop, url, when)
        # Every good email went in the first drain, each bad one waits for its retry.
        assert (first.sent, first.retried, first.failed) == (good, sorted(bad), [poison])
        assert message_ids(inbox.received) == sorted(mid(m) for m in good)
        for wait in RETRY_WAITS:
            when += wait
            again = drain_at(mail_shop, url, when)
            assert again.sent == []
        assert (again.retried, again.failed) == ([], sorted(bad))
        assert drain_at(mail_shop, url, when + timedelta(days=1)).tried == []
    # Delivered once each: no resend of a message the server took.
    assert message_ids(inbox.received) == sorted(mid(m) for m in good)
    rows = by_id(mail_shop)
    assert {m: rows[m]["status"] for m in good} == dict.fromkeys(good, "sent")
    assert {m: (rows[m]["status"], rows[m]["attempts"], rows[m]["answer"]) for m in bad} == {
        m: ("failed", len(RETRY_WAITS) + 1, why) for m, why in bad.items()
    }
    assert (rows[poison]["status"], rows[poison]["attempts"], rows[poison]["answer"]) == (
        "failed",
        1,
        "the address holds a line break",
    )
