"""Remove sample data from the connections screen: a manager's button, CSRF, a staff role
refused, the sample rows gone and real rows kept, and open boards told of each removal."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
import redis
import sqlalchemy as sa
from flask.testing import FlaskClient

from core.samples.data import add_sample, remove_sample
from core.samples.files import read_sample
from core.store.schema import sample_marks
from services.events import events_channel
from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import add_order, csrf_of

pytestmark = pytest.mark.integration
REMOVE = "/connections/venue/apps/venue/sample/remove"


def add_sample_orders(site: Site, count: int) -> list[int]:
    """`count` sample orders, picked up five hours after the sample's moment."""
    sample = read_sample(
        {"app": "venue", "rows": {"orders": [{"pickup_at": {"@in": "PT5H"}}] * count}}
    )
    added = add_sample(site.store(), sample, now=at("2026-07-10 09:00"))
    return [int(row.key) for row in added]


def marks(site: Site) -> list[tuple[str, str]]:
    """The sample rows marked in the venue's database (table, key)."""
    with site.store().engine.connect() as conn:
        found = conn.execute(sa.select(sample_marks.c.table_name, sample_marks.c.row_key))
        return [(str(table), str(key)) for table, key in found]


def order_keys(site: Site) -> set[int]:
    """Every order's key in the venue's database."""
    store = site.store()
    orders = store.table("orders")
    with store.engine.connect() as conn:
        return set(conn.scalars(sa.select(orders.c.id)))


@pytest.fixture
def events(redis_url: str) -> Iterator[Callable[[], list[dict[str, object]]]]:
    """What the venue connection's channel carries from now on."""
    client = redis.Redis.from_url(redis_url)
    pubsub = client.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(events_channel("venue"))
    pubsub.get_message(timeout=1.0)  # the subscription's own confirmation

    def read() -> list[dict[str, object]]:
        found = []
        while (message := pubsub.get_message(timeout=0.5)) is not None:
            found.append(json.loads(message["data"]))
        return found

    yield read
    pubsub.close()
    client.close()


def test_manager_sees_the_button_and_staff_does_not(
    signed_in: Callable[[str], FlaskClient],
) -> None:
    assert REMOVE in signed_in("manager").get("/connections").text
    assert REMOVE in signed_in("admin").get("/connections").text
    assert REMOVE not in signed_in("staff").get("/connections").text


def test_staff_role_is_refused_with_403_and_the_samples_stay(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    samples = add_sample_orders(screens_site, 2)
    client = signed_in("staff")
    token = csrf_of(client.get("/connections").text)
    answer = client.post(REMOVE, headers={"X-CSRFToken": token, "HX-Request": "true"})
    assert answer.status_code == 403
    assert "FORBIDDEN" in answer.text
    assert set(samples) <= order_keys(screens_site)


def test_removal_without_csrf_token_is_refused_and_the_samples_stay(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    samples = add_sample_orders(screens_site, 2)
    answer = signed_in("manager").post(REMOVE, headers={"HX-Request": "true"})
    assert answer.status_code == 400
    assert set(samples) <= order_keys(screens_site)


def test_manager_removes_the_sample_rows_and_keeps_the_real_one(
    screens_site: Site,
    signed_in: Callable[[str], FlaskClient],
    events: Callable[[], list[dict[str, object]]],
) -> None:
    samples = add_sample_orders(screens_site, 3)
    real = add_order(screens_site, at("2026-07-10 14:00"))
    marked = set(order_keys(screens_site)) - {real}
    client = signed_in("manager")
    token = csrf_of(client.get("/connections").text)
    answer = client.post(REMOVE, headers={"X-CSRFToken": token, "HX-Request": "true"})
    assert answer.status_code == 200, answer.text
    left = order_keys(screens_site)
    assert real in left
    assert not set(samples) & left
    # Every sample row of the module's earlier tests went too; only unmarked rows stay.
    removed = len(marked - left)
    assert f"{removed} rows from orders" in answer.text
    with screens_site.store().engine.connect() as conn:
        assert conn.scalar(sa.select(sa.func.count()).select_from(sample_marks)) == 0
    sent = [e for e in events() if e.get("removed")]
    assert {int(str(e["key"])) for e in sent} == marked - left
    assert {(e["app"], e["table"], e["actor"]) for e in sent} == {
        ("venue", "orders", "Sample data")
    }


def test_removing_when_there_is_no_sample_says_so(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    client = signed_in("admin")
    token = csrf_of(client.get("/connections").text)
    client.post(REMOVE, headers={"X-CSRFToken": token, "HX-Request": "true"})
    answer = client.post(REMOVE, headers={"X-CSRFToken": token, "HX-Request": "true"})
    assert answer.status_code == 200
    assert "there was none" in answer.text


def test_a_sample_row_a_real_row_refers_to_is_kept_and_named_in_words(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    # A sample event, and a real ticket for it: deleting the event would break the ticket,
    # so the event stays (still sample data) and the answer names it and the ticket. It
    # starts from no sample row, whichever of the module's tests ran before it.
    remove_sample(screens_site.store(), now=at("2026-07-10 09:00"))
    assert marks(screens_site) == []
    sample = read_sample({"app": "venue", "rows": {"events": [{"doors_at": {"@in": "P2D"}}]}})
    (event,) = add_sample(screens_site.store(), sample, now=at("2026-07-10 09:00"))
    ticket = screens_site.insert("tickets", event_id=event.key, status="offered")
    client = signed_in("manager")
    token = csrf_of(client.get("/connections").text)
    assert marks(screens_site) == [("events", str(event.key))]
    answer = client.post(REMOVE, headers={"X-CSRFToken": token, "HX-Request": "true"})
    assert answer.status_code == 200
    assert "Sample data of venue removed:\n  none could go." in answer.text
    assert (
        f"It kept 1 sample row that rows staying refer to: events {event.key} (tickets {ticket});"
        " they go with a later removal once nothing refers to them."
    ) in answer.text
    assert screens_site.row("events", event.key)["id"] == event.key
    assert screens_site.row("tickets", ticket)["event_id"] == event.key
