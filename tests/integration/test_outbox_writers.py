"""Every writer's move queues its message: a timed move (test_outbox_queue), a screen move,
the REST API and the public API; and a commit that queued mail enqueues the drain job."""

from __future__ import annotations

from typing import Any

import pytest
import redis
import sqlalchemy as sa
from rq.job import Job

from services.apps import install_adminium_tables
from services.models import App, db
from services.outbox import QUEUE
from tests.integration.api_fixtures import Site, rows_path
from tests.integration.outbox_fixtures import outbox_rows
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import csrf_of, give_passwords, signed_in_client

DRAIN_ID = "adminium-outbox-venue"
"""The one drain job of the site's connection."""
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


def emails(site: Site) -> list[tuple[str, str, str]]:
    return [(m["row_key"], m["address"], m["subject"]) for m in outbox_rows(site.store().engine)]


def test_a_rest_move_queues_and_enqueues_the_drain(mail_site: Site) -> None:
    client = redis.Redis.from_url(mail_site.app.config["REDIS_URL"])
    Job(DRAIN_ID, connection=client).delete()
    key = ticket(mail_site)
    answer = mail_site.client.post(
        rows_path("tickets", key) + "/moves",
        json={"to": "offered", "values": {"pending_email": "friend@example.com"}},
        headers=mail_site.headers("staff"),
    )
    assert answer.status_code == 200, answer.text
    assert emails(mail_site) == [(str(key), "friend@example.com", f"Ticket {key} is offered")]
    job = Job.fetch(DRAIN_ID, connection=client)
    assert (job.func_name, job.args, job.origin) == ("jobs.outbox.run_drain", ("venue",), QUEUE)
    job.delete(remove_from_queue=True)


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
