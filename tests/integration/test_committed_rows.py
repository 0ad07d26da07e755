"""The row as committed is what every reader of a write is told.

A cancel that voids an order's lines recomputes the order's total at the end of the write;
the order's audit `after`, the webhook's `after` (POSTed to a real receiver, verified with
`standardwebhooks`), the email rendered from the row (sent to a real aiosmtpd server), the
live event on Redis and the writer's answer all carry the total as committed: 0, not the
15 the lines summed before the cancel. A person's cancel and the clock's alike.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
import redis
from standardwebhooks.webhooks import Webhook

from services.deliveries import drain as drain_deliveries
from services.events import Publisher, events_channel
from services.outbox import drain as drain_outbox
from services.smtp import SmtpConfig
from services.webhooks import Endpoint, make_secret
from services.writes import write_by_person
from tests.integration.effect_fixtures import DUE, KITCHEN, NOW, STAFF, Kitchen
from tests.integration.outbox_fixtures import smtp_server
from tests.integration.sweep_fixtures import Shop
from tests.integration.webhook_fixtures import receiver

SECRET = make_secret()


def told_kitchen() -> dict[str, Any]:
    """The effect tests' kitchen whose cancelled orders are posted and emailed, with the
    order's total in the email."""
    manifest = copy.deepcopy(KITCHEN)
    orders = manifest["tables"]["orders"]
    orders["columns"].append({"ref": "email", "type": "text", "nullable": True})
    manifest["automations"] = [
        {
            "name": "kitchen_screen",
            "table": "orders",
            "on": {"column": "status", "values": ["cancelled"]},
            "webhook": "kitchen",
        }
    ]
    manifest["outbox"]["producers"] = [
        {
            "kind": "message",
            "table": "orders",
            "on": {"column": "status", "values": ["cancelled"]},
            "to": "email",
            "subject": "Order {{ row.id }} cancelled",
            "body": "You owe {{ row.total }} for {{ row.lines }} lines.",
        }
    ]
    return manifest


@pytest.fixture
def kitchen(make_shop: Callable[..., Shop]) -> Kitchen:
    return Kitchen(make_shop(told_kitchen()).store)


@pytest.fixture
def events(redis_url: str) -> Iterator[Any]:
    """A subscription to the kitchen's live events on the real Redis."""
    client = redis.Redis.from_url(redis_url)
    listening = client.pubsub()
    listening.subscribe(events_channel("shop"))
    listening.get_message(timeout=5)  # the subscription's own answer
    yield client, listening
    listening.close()
    client.close()


def real_now() -> datetime:
    return datetime.now(UTC)


@pytest.mark.parametrize("writer", ["person", "clock"])
def test_every_reader_is_told_the_total_as_committed(
    kitchen: Kitchen, events: Any, writer: str
) -> None:
    client, listening = events
    order = kitchen.order(DUE, email="guest@example.com")
    for amount in (4, 5, 6):
        kitchen.line(order, amount)
    kitchen.sql("UPDATE kitchen.orders SET total = 15, lines = 3 WHERE id = :k", k=order)
    publisher = Publisher(client)
    if writer == "person":
        result = write_by_person(
            kitchen.store,
            "orders",
            order,
            actor=STAFF,
            clock=lambda: NOW,
            publisher=publisher,
            move_to="cancelled",
        )
        # The writer's answer (the REST API's body is this row).
        assert (result.row["total"], result.row["lines"]) == (Decimal(0), 3)
    else:
        moved: list[Any] = []
        kitchen.sweep(
            NOW, on_moved=lambda found: (moved.append(found), publisher.rows(found.events))
        )
        assert [found.key for found in moved] == [order]
    assert kitchen.total(order) == (Decimal(0), 3)
    # The audit entry of the order says the row as committed.
    [entry] = [e for e in kitchen.audit() if e["table_name"] == "orders"]
    assert (entry["after"]["status"], entry["after"]["total"], entry["after"]["lines"]) == (
        "cancelled",
        0,
        3,
    )
    assert entry["before"]["total"] == 15
    # The live event names the order in its committed state (a screen re-reads the row).
    order_event = None
    deadline = time.monotonic() + 5
    while order_event is None and time.monotonic() < deadline:
        message = listening.get_message(timeout=1)
        if message is not None and message["type"] == "message":
            told = json.loads(message["data"])
            order_event = told if told["table"] == "orders" else None
    assert order_event is not None
    assert (order_event["key"], order_event["state"]) == (order, "cancelled")
    # The webhook's `after`, as a receiver verifies and reads it.
    with receiver() as got:
        hooks = {"kitchen": Endpoint("kitchen", got.url, SECRET)}
        done = drain_deliveries(kitchen.engine, "shop", hooks, clock=real_now, allow_private=True)
    assert len(done.sent) == 1
    event = Webhook(SECRET).verify(got.received[0].body, got.received[0].headers)
    assert (event["after"]["total"], event["after"]["lines"]) == ("0", 3)
    assert event["before"]["total"] == "15"
    # The email, rendered from the row as committed.
    with smtp_server() as (url, inbox):
        drain_outbox(kitchen.engine, "shop", SmtpConfig(url), clock=real_now)
    [mail] = inbox.received
    assert mail.get_payload().strip() == "You owe 0 for 3 lines."
