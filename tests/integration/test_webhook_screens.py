"""Webhooks on the web: a REST move queues a delivery and enqueues its drain; the product's
own receiver (the demo's) verifies a real delivery over HTTP and lists it; the Webhooks,
Deliveries and Recent calls screens, who sees them, and Send again."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import redis
from rq.job import Job

from services.deliveries import DELIVERY_JOB, DRAIN, drain_connection
from services.models import App, db
from services.webhook_receiver import calls_key
from services.webhooks import ALLOW_PRIVATE, add_webhook
from tests.integration.api_fixtures import Site, rows_path
from tests.integration.outbox_fixtures import queued_jobs
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import csrf_of, give_passwords, served, signed_in_client
from tests.integration.webhook_fixtures import attempt_rows, delivery_rows, receiver

OFFERED = {
    "name": "ticket_offered",
    "table": "tickets",
    "on": {"column": "status", "values": ["offered"]},
    "webhook": "kitchen",
}


@pytest.fixture
def hook_site(fresh_site: Site, monkeypatch: pytest.MonkeyPatch) -> Site:
    """The venue site whose tickets post to the webhook `kitchen` when offered; its
    receivers are on the loopback, which the operator allows here."""
    monkeypatch.setenv(ALLOW_PRIVATE, "1")
    with fresh_site.app.app_context():
        app = db.session.execute(db.select(App).filter_by(name="venue")).scalar_one()
        app.manifest = {**app.manifest, "automations": [OFFERED]}
        db.session.commit()
    give_passwords(fresh_site)
    client = redis.Redis.from_url(fresh_site.app.config["REDIS_URL"])
    client.delete(calls_key("venue"))
    # A drain or waiting mark left by another test of this Redis would answer for this one's.
    for job in venue_drains(client):
        job.delete(remove_from_queue=True)
    client.delete(DRAIN.waiting_key("venue"))
    return fresh_site


def venue_drains(client: redis.Redis) -> list[Job]:
    """The delivery drains of connection `venue` waiting in the queue."""
    return queued_jobs(client, DELIVERY_JOB, "venue")


@pytest.fixture
def served_at(hook_site: Site) -> Iterator[str]:
    """The site's web app served over real HTTP on a free loopback port; its base URL."""
    with served(hook_site.app) as port:
        yield f"http://127.0.0.1:{port}"


def offer(site: Site) -> int:
    event = site.insert("events", doors_at=at("2026-07-10 18:00"))
    key = int(site.insert("tickets", event_id=event, status="valid"))
    answer = site.client.post(
        rows_path("tickets", key) + "/moves",
        json={"to": "offered", "values": {"pending_email": "friend@example.com"}},
        headers=site.headers("staff"),
    )
    assert answer.status_code == 200, answer.text
    return key


def deliver(site: Site) -> Any:
    with site.app.app_context():
        return drain_connection(db.session, "venue", clock=lambda: datetime.now(UTC))


def test_a_rest_move_queues_a_delivery_and_enqueues_its_drain(hook_site: Site) -> None:
    key = offer(hook_site)
    [row] = delivery_rows(hook_site.store().engine)
    assert (row["automation"], row["row_key"], row["event"]["actor"]) == (
        "ticket_offered",
        str(key),
        "staff@venue.test",
    )
    client = redis.Redis.from_url(hook_site.app.config["REDIS_URL"])
    drains = venue_drains(client)
    # One drain waits; a second commit before it starts enqueues no other.
    offer(hook_site)
    again = venue_drains(client)
    assert len(drains) == len(again) == 1
    assert client.exists(DRAIN.waiting_key("venue"))
    drains[0].delete(remove_from_queue=True)
    # A drain that has started takes the mark: the next commit enqueues one of its own.
    with hook_site.app.app_context():
        drain_connection(db.session, "venue", clock=lambda: at("2026-07-10 09:00"), client=client)
    assert not client.exists(DRAIN.waiting_key("venue"))
    offer(hook_site)
    later = venue_drains(client)
    assert len(later) == 1
    later[0].delete(remove_from_queue=True)
    client.delete(DRAIN.waiting_key("venue"))


def test_the_product_s_own_receiver_verifies_a_delivery_and_lists_it(
    hook_site: Site, served_at: str
) -> None:
    with hook_site.app.app_context():
        add_webhook(db.session, "venue", "kitchen", f"{served_at}/receiver/venue/kitchen")
    hook_site.clock.now = datetime.now(UTC)  # a signature holds five minutes of real time
    key = offer(hook_site)
    assert len(deliver(hook_site).sent) == 1
    [attempt] = attempt_rows(hook_site.store().engine)
    assert (attempt["status"], attempt["ok"]) == (204, True)
    manager = signed_in_client(hook_site, "admin")
    page = manager.get("/connections/venue/receiver")
    assert page.status_code == 200
    assert "verified" in page.text
    assert f"ticket_offered: venue · tickets #{key} · valid → offered by staff@venue.test" in (
        page.text
    )


def test_the_receiver_refuses_an_unsigned_call_and_keeps_nothing(
    hook_site: Site, served_at: str
) -> None:
    with hook_site.app.app_context():
        add_webhook(db.session, "venue", "kitchen", f"{served_at}/receiver/venue/kitchen")
    forged = {"webhook-id": "x", "webhook-timestamp": "1", "webhook-signature": "v1,AAAA"}
    answer = hook_site.client.post(
        "/receiver/venue/kitchen", data=b'{"forged": true}', headers=forged
    )
    assert answer.status_code == 401
    # A webhook or a connection that does not exist: the very same answer.
    for path in ("/receiver/venue/till", "/receiver/nowhere/kitchen"):
        unknown = hook_site.client.post(path, data=b'{"forged": true}', headers=forged)
        assert (unknown.status_code, unknown.data) == (401, answer.data)
    client = redis.Redis.from_url(hook_site.app.config["REDIS_URL"])
    assert client.llen(calls_key("venue")) == 0


def test_the_webhooks_screen_shows_urls_without_credentials_to_managers_only(
    hook_site: Site,
) -> None:
    with hook_site.app.app_context():
        added = add_webhook(
            db.session, "venue", "kitchen", "https://k:pa55@screens.example/h?token=t0k"
        )
    admin = signed_in_client(hook_site, "admin").get("/connections/venue/webhooks")
    assert admin.status_code == 200
    assert "https://k:***@screens.example/h?token=***" in admin.text
    for secret in ("pa55", "t0k", added.secret):
        assert secret not in admin.text
    # The manager holds a role in one of the connection's two apps: not every app's.
    assert (
        signed_in_client(hook_site, "manager").get("/connections/venue/webhooks").status_code == 403
    )


def test_deliveries_show_each_try_and_send_a_failed_one_again(hook_site: Site) -> None:
    with receiver(status=500) as down, hook_site.app.app_context():
        add_webhook(db.session, "venue", "kitchen", down.url)
        hook_site.clock.now = datetime.now(UTC)
        offer(hook_site)
        engine = hook_site.store().engine
        deliver(hook_site)
    [row] = delivery_rows(engine)
    with engine.begin() as conn:  # its last try has failed: five retries spent
        conn.exec_driver_sql("UPDATE adminium.deliveries SET status = 'failed', attempts = 6")
    manager = signed_in_client(hook_site, "manager")
    page = manager.get("/connections/venue/deliveries")
    assert page.status_code == 200
    assert "ticket_offered → kitchen" in page.text
    assert "500" in page.text and "kitchen screen is down" in page.text
    assert f"delivery-{row['id']}.venue.venue" in page.text
    # The clerk holds no role in the venue app: its deliveries are not theirs to see.
    clerk = signed_in_client(hook_site, "clerk").get("/connections/venue/deliveries")
    assert "ticket_offered" not in clerk.text
    token = csrf_of(page.text)
    again = manager.post(
        f"/connections/venue/deliveries/{row['id']}/send-again",
        data={"app": "venue"},
        headers={"X-CSRFToken": token, "HX-Request": "true"},
    )
    assert again.status_code == 200, again.text
    assert delivery_rows(engine)[0]["status"] == "queued"
    with receiver() as up, hook_site.app.app_context():
        db.session.execute(
            db.text("UPDATE adminium_control.webhooks SET url = :url"), {"url": up.url}
        )
        db.session.commit()
        assert len(deliver(hook_site).sent) == 1
    assert len(up.received) == 1


def test_a_receiver_s_reply_is_shown_to_managers_and_a_manager_drops_a_delivery(
    hook_site: Site,
) -> None:
    with receiver(status=500) as down, hook_site.app.app_context():
        add_webhook(db.session, "venue", "kitchen", down.url)
        hook_site.clock.now = datetime.now(UTC)
        offer(hook_site)
        deliver(hook_site)
    engine = hook_site.store().engine
    [row] = delivery_rows(engine)
    assert row["answer"] == "500 kitchen screen is down"
    staff = signed_in_client(hook_site, "staff")
    seen = staff.get("/connections/venue/deliveries").text
    assert "ticket_offered → kitchen" in seen and "500" in seen
    assert "kitchen screen is down" not in seen  # the receiver's words: managers only
    assert "The receiver's replies are shown to the app's managers." in seen
    manager = signed_in_client(hook_site, "manager")
    page = manager.get("/connections/venue/deliveries").text
    assert "kitchen screen is down" in page
    drop = f"/connections/venue/deliveries/{row['id']}/drop"
    assert drop in page  # queued for its retry: a manager may drop it
    assert drop not in seen
    headers = {"X-CSRFToken": csrf_of(seen), "HX-Request": "true"}
    assert staff.post(drop, data={"app": "venue"}, headers=headers).status_code == 403
    headers = {"X-CSRFToken": csrf_of(page), "HX-Request": "true"}
    answer = manager.post(drop, data={"app": "venue"}, headers=headers)
    assert answer.status_code == 200, answer.text
    [row] = delivery_rows(engine)
    assert (row["status"], row["dropped_by"]) == ("dropped", "manager@venue.test")
    assert "dropped</span> by manager@venue.test" in answer.text
    with hook_site.app.app_context():
        assert deliver(hook_site).tried == []  # never posted again
