"""Sample data added where an automation hears sample rows (`samples: true`) enqueues the
delivery drain, as every other writer's commit does; where none does, nothing is queued or
enqueued (real PostgreSQL and Redis)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import redis

from core.samples.files import SampleFile
from core.store.store import Store
from services.deliveries import DELIVERY_JOB, DRAIN
from services.events import Publisher
from services.samples import add_sample_data
from tests.integration.outbox_fixtures import queued_jobs
from tests.integration.pipeline_fixtures import at
from tests.integration.sweep_fixtures import Shop
from tests.integration.webhook_fixtures import KITCHEN, delivery_rows, hook_shop_manifest

NOW = at("2026-06-12 10:00")
SAMPLE = SampleFile(app="hookshop", rows={"orders": [{"note": "a sample order"}]})


def add_on_a_connection_of_its_own(shop: Shop, client: redis.Redis) -> str:
    """Add the sample on a connection no other test names; that connection's name."""
    name = f"c-{uuid.uuid4().hex[:10]}"
    store = Store(shop.store.engine, shop.store.app, shop.store.zone, connection=name)
    add_sample_data(store, SAMPLE, now=NOW, publisher=Publisher(client))
    return name


def test_a_sample_heard_by_an_automation_enqueues_the_delivery_drain(
    make_shop: Callable[..., Shop], client: redis.Redis
) -> None:
    shop = make_shop(hook_shop_manifest())  # `every_change` hears sample rows
    name = add_on_a_connection_of_its_own(shop, client)
    try:
        rows = delivery_rows(shop.engine)
        assert [(r["automation"], r["sample"]) for r in rows] == [("every_change", True)]
        [drain] = queued_jobs(client, DELIVERY_JOB, name)
        assert drain.origin == "adminium"
        assert client.exists(DRAIN.waiting_key(name))
    finally:
        for job in queued_jobs(client, DELIVERY_JOB, name):
            job.delete(remove_from_queue=True)
        client.delete(DRAIN.waiting_key(name))


def test_a_sample_no_automation_hears_enqueues_nothing(
    make_shop: Callable[..., Shop], client: redis.Redis
) -> None:
    manifest: dict[str, Any] = {**hook_shop_manifest(), "automations": [dict(KITCHEN)]}
    shop = make_shop(manifest)  # only cancelled real orders are heard
    name = add_on_a_connection_of_its_own(shop, client)
    assert delivery_rows(shop.engine) == []
    assert queued_jobs(client, DELIVERY_JOB, name) == []
    assert not client.exists(DRAIN.waiting_key(name))
