"""An app whose only minute work is its reminders is swept: the tick lists its connection,
the sweep job reads its store, its reminder is queued and the drain the sweep enqueued sends
it (real PostgreSQL, Redis and aiosmtpd)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import redis
import sqlalchemy as sa
from rq import Queue
from rq.job import Job

from core.sweep.records import recent_sweeps
from jobs.sweep import minute_of, sweep_job_id
from jobs.tick import enqueue_minute
from services.apps import add_app, app_store, swept_stores
from services.connections import add_connection, connections_with_minute_work, get_connection
from services.outbox import DRAIN, DRAIN_JOB, QUEUE
from services.storage import engine_for, open_session
from tests.integration.outbox_fixtures import outbox_rows, queued_jobs, smtp_server

BOOKINGS: dict[str, Any] = {
    "name": "bookings",
    "tables": {
        "settings": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "reminder_hours", "type": "integer", "default": 24},
            ],
        },
        "bookings": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "email", "type": "text", "nullable": True},
                {"ref": "starts_at", "type": "timestamptz"},
            ],
        },
    },
    "outbox": {
        "settings": {"table": "settings"},
        "producers": [
            {
                "kind": "reminder",
                "to": "email",
                "before": {
                    "table": "bookings",
                    "at": "starts_at",
                    "lead": {"table": "settings", "column": "reminder_hours"},
                },
                "subject": "See you soon",
            }
        ],
    },
}
"""No state, no timed move, no hold: a reminder 24 hours (a setting) before each booking."""


def test_a_reminder_only_app_gets_its_reminder_from_the_minute_job(
    control: str,
    make_database: Callable[[], str],
    redis_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name = f"c-{uuid.uuid4().hex[:10]}"
    venue_url = make_database()
    with open_session(control) as session:
        add_connection(session, name, venue_url, "Europe/London")
        add_app(session, name, BOOKINGS, create_tables=True)
        store = app_store(get_connection(session, name).apps[0])
    # The job reads the real clock: a booking two hours ahead is inside its 24-hour lead
    # (send time = start less 24 h, already past) while its moment is still ahead.
    starts = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=2)
    with store.engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO settings DEFAULT VALUES"))
        conn.execute(
            sa.text("INSERT INTO bookings (email, starts_at) VALUES ('ann@example.com', :at)"),
            {"at": starts},
        )
    with open_session(control) as session:
        assert name in connections_with_minute_work(session)  # what the tick lists
        assert [s.app.name for s in swept_stores(get_connection(session, name))] == ["bookings"]
    client = redis.Redis.from_url(redis_url)
    queue = Queue(f"test-{uuid.uuid4().hex[:8]}", connection=client)
    # The tick's minute is passed its own start as `now`, so its sweep may wait its full
    # time in the queue whatever second of the minute the test runs at.
    minute = minute_of(datetime.now(UTC))
    assert enqueue_minute(queue, [name], minute, minute) == 1
    job = Job.fetch(sweep_job_id(name, minute), connection=client)
    try:
        result: dict[str, Any] = job.perform()  # jobs.sweep.run_sweep -> services.sweeps
        # The sweep queued a reminder, so it enqueued the outbox drain: this minute's drain
        # sends it, not the next minute's tick.
        [drain] = queued_jobs(client, DRAIN_JOB, name)
        with smtp_server() as (url, inbox):
            monkeypatch.setenv("SMTP_URL", url)
            Queue(QUEUE, connection=client).remove(drain)
            assert drain.perform()["sent"] == 1  # jobs.outbox.run_drain
        assert [m["To"] for m in inbox.received] == ["ann@example.com"]
    finally:
        job.delete()
        client.delete(DRAIN.waiting_key(name))
        client.close()
    assert result["outcome"] == "done"
    [mail] = outbox_rows(store.engine)
    assert (mail["kind"], mail["table_name"], mail["row_key"]) == ("reminder", "bookings", "1")
    assert (mail["status"], mail["address"], mail["subject"], mail["moment"]) == (
        "sent",
        "ann@example.com",
        "See you soon",
        starts,
    )
    # The sweep took its fence and kept its minute's record, with no timed rule to run.
    with store.engine.connect() as conn:
        [record] = recent_sweeps(conn, name)
    assert (record["outcome"], record["moved"]) == ("done", 0)
    engine_for(venue_url).dispose()
