"""Every writer's move queues its message: a timed move (test_outbox_queue), a screen move,
the REST API and the public API; and a commit that queued mail enqueues the drain job."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import redis
import sqlalchemy as sa
from rq import Queue
from rq.job import Job

from services.apps import install_adminium_tables
from services.models import App, db
from services.outbox import DRAIN, DRAIN_JOB, QUEUE
from tests.integration.api_fixtures import Site, rows_path
from tests.integration.outbox_fixtures import outbox_rows, queued_jobs, smtp_server
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import csrf_of, give_passwords, signed_in_client

RETURNED = {
    "kind": "message",
    "table": "tickets",
    "on": {"column": "status", "values": ["returned", "offered"]},
    "to": "pending_email",
    "subject": "Ticket {{ row.id }} is {{ row.status }}",
    "body": "Your ticket is {{ row.status }}.",
}


@pytest.fixture
def mail_site(fresh_site: Site) -> Site:
    """The venue site whose tickets queue a message when offered or returned."""
    with fresh_site.app.app_context():
        app = db.session.execute(db.select(App).filter_by(name="venue")).scalar_one()
        app.manifest = {
            **app.manifest,
            "outbox": {"settings": {"table": "settings"}, "producers": [RETURNED]},
        }
        db.session.commit()
    return fresh_site


def ticket(site: Site, **values: Any) -> int:
    event = site.insert("events", doors_at=at("2026-07-10 18:00"))
    return int(site.insert("tickets", event_id=event, status="valid", **values))


def move(site: Site, key: int, address: str) -> None:
    answer = site.client.post(
        rows_path("tickets", key) + "/moves",
        json={"to": "offered", "values": {"pending_email": address}},
        headers=site.headers("staff"),
    )
    assert answer.status_code == 200, answer.text


def venue_drains(client: redis.Redis) -> list[Job]:
    """The outbox drains of connection `venue` waiting in the queue."""
    return queued_jobs(client, DRAIN_JOB, "venue")


def drain_free(site: Site) -> redis.Redis:
    """The site's Redis with no outbox drain of `venue` waiting, nor its mark (another
    test's would answer for this one's)."""
    client = redis.Redis.from_url(site.app.config["REDIS_URL"])
    for job in venue_drains(client):
        job.delete(remove_from_queue=True)
    client.delete(DRAIN.waiting_key("venue"))
    return client


def emails(site: Site) -> list[tuple[str, str, str]]:
    return [(m["row_key"], m["address"], m["subject"]) for m in outbox_rows(site.store().engine)]


def test_a_rest_move_queues_and_enqueues_the_drain(mail_site: Site) -> None:
    client = drain_free(mail_site)
    key = ticket(mail_site)
    move(mail_site, key, "friend@example.com")
    assert emails(mail_site) == [(str(key), "friend@example.com", f"Ticket {key} is offered")]
    [job] = venue_drains(client)
    assert (job.func_name, job.args, job.origin) == (DRAIN_JOB, ("venue",), QUEUE)
    assert client.exists(DRAIN.waiting_key("venue"))
    # A second commit before the drain starts enqueues no other: the waiting one claims both.
    move(mail_site, ticket(mail_site), "other@example.com")
    assert venue_drains(client) == [job]
    job.delete(remove_from_queue=True)
    client.delete(DRAIN.waiting_key("venue"))


def test_mail_queued_while_a_drain_runs_is_sent_by_a_drain_of_its_own(
    mail_site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = drain_free(mail_site)
    first = ticket(mail_site)
    move(mail_site, first, "first@example.com")
    [running] = venue_drains(client)
    with smtp_server(stall=1.0) as (url, inbox):
        monkeypatch.setenv("DATABASE_URL", mail_site.app.config["DATABASE_URL"])
        monkeypatch.setenv("SMTP_URL", url)
        # The job run as a worker runs it: taken off the queue, performed (in a thread).
        Queue(QUEUE, connection=client).remove(running)
        worker = threading.Thread(target=running.perform)
        worker.start()
        # The drain has claimed the first email and sits in the server's DATA ...
        assert inbox.in_data.wait(timeout=10)
        # ... when a second commit queues mail: the drain may have made its last claim, so
        # the commit enqueues a drain of its own (no minute tick runs in this test).
        second = ticket(mail_site)
        move(mail_site, second, "second@example.com")
        [follower] = venue_drains(client)
        assert follower.id != running.id
        worker.join(timeout=15)
        assert not worker.is_alive()
        # The running drain claims one email at a time, so it takes the second too when the
        # commit came before its next claim; else the follower does. Each goes once.
        Queue(QUEUE, connection=client).remove(follower)
        # The job's result is the run's counts.
        assert set(follower.perform()) == {"sent", "retried", "failed", "dropped", "stopped"}
        assert not client.exists(DRAIN.waiting_key("venue"))  # taken as it started
    assert [m["status"] for m in outbox_rows(mail_site.store().engine)] == ["sent", "sent"]
    assert [m["To"] for m in inbox.received] == ["first@example.com", "second@example.com"]
    running.delete()
    follower.delete()


def test_a_public_move_queues(mail_site: Site) -> None:
    mail_site.clock.now = at("2026-07-10 12:00")
    key = ticket(
        mail_site,
        sale_from=at("2026-07-10 08:00"),
        pending_email="buyer@example.com",
        link_token="tk00000000000042",
    )
    answer = mail_site.client.post(
        "/public/venue/venue/tickets/tk00000000000042/moves", json={"to": "returned"}
    )
    assert answer.status_code == 200, answer.text
    assert emails(mail_site) == [(str(key), "buyer@example.com", f"Ticket {key} is returned")]


def test_a_screen_move_queues(mail_site: Site) -> None:
    give_passwords(mail_site)
    key = ticket(mail_site, pending_email="screen@example.com")
    client = signed_in_client(mail_site, "staff")
    token = csrf_of(client.get(f"/apps/venue/venue/tickets/{key}").text)
    answer = client.post(
        f"/apps/venue/venue/tickets/{key}/move",
        data={"to": "offered", "seen": "valid"},
        headers={"X-CSRFToken": token, "HX-Request": "true"},
    )
    assert answer.status_code == 200, answer.text
    assert emails(mail_site) == [(str(key), "screen@example.com", f"Ticket {key} is offered")]


def test_an_older_database_gets_the_outbox_at_the_next_start(mail_site: Site) -> None:
    engine = mail_site.store().engine
    with engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE adminium.outbox"))
    with mail_site.app.app_context():
        install_adminium_tables(db.session)
    assert outbox_rows(engine) == []  # the table is there again, empty
