"""One bad email never stops the drain or sends another twice: a line break in an address
(the probe's poisoned guest), a list where one address is expected, and a real aiosmtpd
server that refuses, drops and breaks on some messages while it takes the others. Times
are UTC."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from core.basics.actors import Actor
from core.store.store import make_engine
from core.writes.pipeline import change_row
from core.writes.request import WriteRequest
from services.outbox import drain, drop
from services.sending import RETRY_WAITS, Drained, DropAnswer
from services.smtp import SmtpConfig
from tests.integration.outbox_fixtures import (
    faulty_smtp_server,
    mail_shop_manifest,
    module_shop,
    outbox_rows,
    reset_shop,
    smtp_server,
)
from tests.integration.pipeline_fixtures import at
from tests.integration.sweep_fixtures import Shop

NOW = at("2026-06-12 10:00")
SENDER = "orders@shop.example"
POISON = "poison@example.com\r\nBcc: x@evil.example"


@pytest.fixture(scope="module")
def shared_mail_shop(server_database_url: str) -> Iterator[Shop]:
    with module_shop(server_database_url, mail_shop_manifest()) as shop:
        yield shop


@pytest.fixture
def mail_shop(shared_mail_shop: Shop) -> Shop:
    return reset_shop(shared_mail_shop)


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
        (
            "ann@example.com, bob@example.com",
            "the address is a list of 2 addresses where one is expected",
        ),
    ],
    ids=["crlf", "list"],
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
    """A row queued before the address was checked on the way in (or written in SQL).
    (Every address the check refuses: tests/core/test_outbox_addresses.py.)"""
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


def test_a_server_that_fails_some_messages_takes_every_other_once(
    mail_shop: Shop, caplog: pytest.LogCaptureFixture
) -> None:
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
    with faulty_smtp_server() as (url, inbox), caplog.at_level("INFO"):
        first = drain_at(mail_shop, url, when)
        # Every good email went in the first drain, each bad one waits for its retry; the
        # run ends with its counts.
        assert (first.sent, first.retried, first.failed) == (good, sorted(bad), [poison])
        summary = (
            f"outbox of connection shop via {url}: sent 5, to try again 4, failed 1, dropped 0"
        )
        assert summary in caplog.text
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


def test_a_fault_of_the_database_inside_one_try_is_that_email_s_try(
    make_shop: Callable[..., Shop],
) -> None:
    """A reminder is read against its row before it goes; with the venue's table renamed
    under it, that read fails inside the try. The try is counted with the database's words
    (its savepoint rolled back) and the next email goes in the same drain. (A shop of its
    own: its table is renamed.)"""
    mail_shop = make_shop(mail_shop_manifest())
    mail_shop.sql(
        "INSERT INTO adminium.outbox (app, table_name, row_key, producer, kind, moment, address,"
        " subject, body, queued_at, send_at) VALUES ('mailshop', 'orders', '1', 2, 'reminder',"
        " :at, 'rita@example.com', 'Order 1 is due', 'Soon', :at, :at)",
        at=NOW,
    )
    ann = cancel(mail_shop, "ann@example.com")
    mail_shop.sql("ALTER TABLE orders RENAME TO orders_moved")
    with smtp_server() as (url, inbox):
        done = drain(
            mail_shop.engine,
            "shop",
            SmtpConfig(url, SENDER),
            clock=lambda: NOW,
            stores=[mail_shop.store],
        )
    [reminder] = [r for r in outbox_rows(mail_shop.engine) if r["kind"] == "reminder"]
    assert (done.retried, done.sent) == ([reminder["id"]], [ann])
    assert message_ids(inbox.received) == [mid(ann)]
    assert (reminder["status"], reminder["attempts"]) == ("queued", 1)
    assert reminder["answer"] == 'UndefinedTable: relation "public.orders" does not exist'


def test_a_drain_whose_database_is_gone_says_so_and_raises_nothing(
    mail_shop: Shop, caplog: pytest.LogCaptureFixture
) -> None:
    gone = mail_shop.engine.url.set(database="adminium_h30a_no_such_database")
    engine = make_engine(gone.render_as_string(hide_password=False).replace("+psycopg", ""))
    with caplog.at_level("INFO"), smtp_server() as (url, _):
        done = drain(engine, "shop", SmtpConfig(url, SENDER), clock=lambda: NOW)
    engine.dispose()
    assert done.tried == []
    assert done.stopped is not None and done.stopped.startswith("the database failed: ")
    assert 'database "adminium_h30a_no_such_database" does not exist' in done.stopped
    # The run ends with its counts, and no traceback.
    assert f"outbox of connection shop via {url}: sent 0, to try again 0, failed 0, dropped 0;" in (
        caplog.text
    )
    assert "Traceback" not in caplog.text


def test_a_drain_past_its_deadline_leaves_the_rest_queued_for_the_next(mail_shop: Shop) -> None:
    first, second, third = (cancel(mail_shop, f"g{n}@example.com") for n in range(3))
    ticks = iter([0.0, 10.0, 20.0, 60.0])  # started, first claim, second, third: past 50 s
    with smtp_server() as (url, inbox):
        done = drain(
            mail_shop.engine,
            "shop",
            SmtpConfig(url, SENDER),
            clock=lambda: NOW,
            monotonic=lambda: next(ticks),
        )
        rest = drain_at(mail_shop, url, NOW)
    assert (done.sent, done.stopped) == (
        [first, second],
        "its 50 s were up; the rest go with the next drain",
    )
    assert rest.sent == [third]
    assert message_ids(inbox.received) == [mid(first), mid(second), mid(third)]


def test_drop_leaves_an_email_being_sent_to_its_try(mail_shop: Shop) -> None:
    mail = cancel(mail_shop, "ann@example.com")
    with mail_shop.engine.connect() as held:  # a drain's claim, as it waits for the server
        held.execute(
            sa.text("SELECT id FROM adminium.outbox WHERE id = :id FOR UPDATE"), {"id": mail}
        )
        busy = drop(mail_shop.engine, mail, "mailshop", now=NOW, actor="m@shop.example")
        held.rollback()
    assert busy is DropAnswer.busy
    assert drop(mail_shop.engine, mail, "mailshop", now=NOW, actor="m@shop.example") is (
        DropAnswer.dropped
    )
    assert drop(mail_shop.engine, mail, "mailshop", now=NOW, actor="m@shop.example") is (
        DropAnswer.gone
    )
    assert drop(mail_shop.engine, mail, "another", now=NOW, actor="m@shop.example") is (
        DropAnswer.missing
    )
    row = by_id(mail_shop)[mail]
    assert (row["status"], row["dropped_by"], row["dropped_at"]) == (
        "dropped",
        "m@shop.example",
        NOW,
    )
    with smtp_server() as (url, inbox):
        assert drain_at(mail_shop, url, NOW).tried == []
    assert inbox.received == []
