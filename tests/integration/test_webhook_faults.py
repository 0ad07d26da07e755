"""One bad receiver never stops the drain or posts another twice: an answer of 150 headers,
a port that is no web server (a mail server's banner), a 500, a reply slower than the
timeout and one dripped a line at a time past it, beside a receiver that takes its events.
Times are UTC, on the tests' own clock (no signature is verified here)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest

from core.basics.actors import Actor
from core.writes.pipeline import change_row
from core.writes.request import WriteRequest
from services.deliveries import drain
from services.sending import RETRY_WAITS, Drained
from services.webhooks import Endpoint, make_secret
from tests.integration.outbox_fixtures import module_shop, reset_shop
from tests.integration.pipeline_fixtures import at
from tests.integration.sweep_fixtures import SHOP, Shop
from tests.integration.webhook_fixtures import (
    SMTP_BANNER,
    attempt_rows,
    delivery_rows,
    many_headers,
    raw_server,
    receiver,
)

NOW = at("2026-06-12 10:00")
TIMEOUT = 0.3
"""Seconds a receiver has to answer here (the product's is 10)."""
HOOKS = ("kitchen", "headers", "banner", "down", "slow", "drip")
DRIP = b"".join([b"HTTP/1.1 200 OK\r\n", *(b"X-Slow: %d\r\n" % n for n in range(50)), b"\r\n"])
"""An answer sent a line every 0.1 s: each read is quick, the whole one past TIMEOUT."""


@pytest.fixture(scope="module")
def shared_faults_shop(server_database_url: str) -> Iterator[Shop]:
    """The shop whose cancelled orders post to six webhooks, one of them good."""
    manifest = copy.deepcopy(SHOP)
    manifest["name"] = "hookshop"
    manifest["automations"] = [
        {
            "name": f"to_{hook}",
            "table": "orders",
            "on": {"column": "status", "values": ["cancelled"]},
            "webhook": hook,
        }
        for hook in HOOKS
    ]
    with module_shop(server_database_url, manifest) as shop:
        yield shop


@pytest.fixture
def faults_shop(shared_faults_shop: Shop) -> Shop:
    return reset_shop(shared_faults_shop)


def cancel(shop: Shop) -> None:
    key = shop.order(None)
    change_row(
        shop.store,
        WriteRequest(
            "orders", Actor.person("staff@example.com"), NOW, key=key, move_to="cancelled"
        ),
    )


def drain_at(shop: Shop, urls: dict[str, str], when: datetime) -> Drained:
    hooks = {name: Endpoint(name, url, make_secret()) for name, url in urls.items()}
    return drain(
        shop.engine, "shop", hooks, clock=lambda: when, timeout=TIMEOUT, allow_private=True
    )


@pytest.mark.parametrize(
    ("answer", "greets", "why"),
    [
        (many_headers(150), False, "HTTPException: got more than 100 headers"),
        (SMTP_BANNER, True, f"BadStatusLine: {SMTP_BANNER.decode().strip()}"),
        (b"HTTP/1.1 500 Oops\r\nContent-Length: 5\r\n\r\nab\x00cd", False, "500 ab\ufffdcd"),
    ],
    ids=["150-headers", "smtp-banner", "nul-in-reply"],
)
def test_a_malformed_reply_is_one_delivery_s_retry_not_the_drain_s_stop(
    faults_shop: Shop, answer: bytes, greets: bool, why: str
) -> None:
    """The probe's cases: before, the drain's job crashed and rolled back its batch, so the
    other webhooks waited and the receiver got the same event again each minute."""
    cancel(faults_shop)
    with receiver() as kitchen, raw_server(answer, greets=greets) as bad:
        urls = {"kitchen": kitchen.url, "headers": bad.url}
        first = drain_at(faults_shop, urls, NOW)
        drain_at(faults_shop, urls, NOW + timedelta(seconds=30))
    assert len(kitchen.received) == 1
    rows = {r["webhook"]: r for r in delivery_rows(faults_shop.engine)}
    assert first.sent == [rows["kitchen"]["id"]]
    assert (rows["kitchen"]["status"], rows["kitchen"]["attempts"]) == ("sent", 0)
    assert (rows["headers"]["status"], rows["headers"]["attempts"], rows["headers"]["answer"]) == (
        "queued",
        1,
        why,
    )
    assert bad.connections == 1  # tried once: its retry waits a minute


def test_bad_receivers_stop_no_other_delivery_and_each_event_goes_once(
    faults_shop: Shop,
) -> None:
    cancel(faults_shop)
    cancel(faults_shop)
    rows = delivery_rows(faults_shop.engine)
    good = [r["id"] for r in rows if r["webhook"] == "kitchen"]
    bad = sorted(r["id"] for r in rows if r["webhook"] != "kitchen")
    with (
        receiver() as kitchen,
        raw_server(many_headers(150)) as headers,
        raw_server(SMTP_BANNER, greets=True) as banner,
        receiver(status=500) as down,
        receiver(stall=30.0) as slow,
        raw_server(DRIP, drip=0.1) as drip,
    ):
        urls = {
            "kitchen": kitchen.url,
            "headers": headers.url,
            "banner": banner.url,
            "down": down.url,
            "slow": slow.url,
            "drip": drip.url,
        }
        first = drain_at(faults_shop, urls, NOW)
        # The good receiver had both events in the first drain; the others wait to retry.
        assert (first.sent, first.retried, first.failed) == (good, bad, [])
        assert len(kitchen.received) == 2
        when = NOW
        for wait in RETRY_WAITS:
            when += wait
            again = drain_at(faults_shop, urls, when)
            assert again.sent == []
        assert (again.retried, again.failed) == ([], bad)
        assert drain_at(faults_shop, urls, when + timedelta(days=1)).tried == []
        # Each event reached the good receiver once, with its own webhook-id.
        ids = [p.headers["webhook-id"] for p in kitchen.received]
        assert sorted(ids) == [f"delivery-{d}.hookshop.shop" for d in good]
    answers: dict[str, set[tuple[Any, ...]]] = {}
    for row in delivery_rows(faults_shop.engine):
        answers.setdefault(row["webhook"], set()).add(
            (row["status"], row["attempts"], row["answer"])
        )
    tries = len(RETRY_WAITS) + 1
    assert answers == {
        "kitchen": {("sent", 0, "200 ok")},
        "headers": {("failed", tries, "HTTPException: got more than 100 headers")},
        "banner": {("failed", tries, f"BadStatusLine: {SMTP_BANNER.decode().strip()}")},
        "down": {("failed", tries, "500 kitchen screen is down")},
        "slow": {("failed", tries, f"TimeoutError: no whole answer within {TIMEOUT:g} s")},
        "drip": {("failed", tries, f"TimeoutError: no whole answer within {TIMEOUT:g} s")},
    }
    # Every try is kept: one for each good event, six for each bad one.
    attempts = attempt_rows(faults_shop.engine)
    assert len(attempts) == len(good) + tries * len(bad)
    assert sum(1 for a in attempts if a["ok"]) == len(good)


def test_a_host_that_resolves_to_the_loopback_is_refused_at_each_post(faults_shop: Shop) -> None:
    """A webhook added while it resolved elsewhere (or with private addresses allowed) is
    checked again as each POST is made: nothing reaches the loopback unless allowed."""
    cancel(faults_shop)
    with receiver() as kitchen:
        local = kitchen.url.replace("127.0.0.1", "localhost")  # resolved: 127.0.0.1
        hooks = {"kitchen": Endpoint("kitchen", local, make_secret())}
        refused = drain(faults_shop.engine, "shop", hooks, clock=lambda: NOW)
        assert not kitchen.in_request.is_set()
        later = NOW + RETRY_WAITS[0]
        allowed = drain(faults_shop.engine, "shop", hooks, clock=lambda: later, allow_private=True)
    [kitchen_row] = [r for r in delivery_rows(faults_shop.engine) if r["webhook"] == "kitchen"]
    assert kitchen_row["id"] in refused.retried
    assert allowed.sent == [kitchen_row["id"]]
    assert len(kitchen.received) == 1
    [first, _] = [
        a for a in attempt_rows(faults_shop.engine) if a["delivery_id"] == kitchen_row["id"]
    ]
    assert (first["status"], first["ok"], first["answer"]) == (
        None,
        False,
        "the webhook's host localhost (it resolves to 127.0.0.1) is a loopback address:"
        " webhooks post to public addresses only, unless ADMINIUM_WEBHOOKS_ALLOW_PRIVATE=1"
        " allows the machine's own networks",
    )


def test_a_redirect_is_an_answer_never_followed(faults_shop: Shop) -> None:
    cancel(faults_shop)
    with receiver() as elsewhere, receiver(status=307, location=elsewhere.url) as moved:
        done = drain_at(faults_shop, {"kitchen": moved.url}, NOW)
    [row] = [r for r in delivery_rows(faults_shop.engine) if r["webhook"] == "kitchen"]
    assert row["id"] in done.retried
    assert (row["status"], row["answer"]) == ("queued", "307 kitchen screen is down")
    assert len(moved.received) == 1
    assert elsewhere.received == []  # the signed event went nowhere the URL does not name
