"""The clock and the per-connection job on real Redis: each sweep enqueued once per minute,
the pause read as the sweep starts, each move published at once."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import redis
from rq import Queue
from rq.cron import CronScheduler
from rq.job import Job

from core.sweep.report import SweepOutcome
from jobs.sweep import enqueue_sweep, sweep_job_id
from jobs.tick import claim_key, drains_data, enqueue_minute
from services.apps import add_app, app_store
from services.connections import add_connection, get_connection, set_paused
from services.events import NO_PUBLISHER, events_channel
from services.storage import engine_for, open_session
from services.sweep_ledger import QUEUE
from services.sweeps import sweep
from tests.integration.sweep_fixtures import SHOP

PAST = datetime(2026, 5, 4, 11, 0, tzinfo=UTC)


@pytest.fixture
def connection(control: str, make_database: Callable[[], str]) -> Iterator[str]:
    """A connection with the shop installed, one order long due; its unique name."""
    name = f"c-{uuid.uuid4().hex[:10]}"
    venue_url = make_database()
    with open_session(control) as session:
        add_connection(session, name, venue_url, "Europe/London")
        add_app(session, name, SHOP, create_tables=True)
        store = app_store(get_connection(session, name).apps[0])
    with store.engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO settings DEFAULT VALUES")
        conn.exec_driver_sql("INSERT INTO orders (status, due_at) VALUES ('placed', %s)", (PAST,))
    yield name
    engine_for(venue_url).dispose()


def test_clock_started_twice_enqueues_each_sweep_once(
    client: redis.Redis, control: str, connection: str
) -> None:
    if datetime.now(UTC).second >= 55:
        time.sleep(6)  # both clocks' ticks must fall in one minute
    clocks = []
    for _ in range(2):
        clock = CronScheduler(connection=client)
        clock.load_config_from_file("jobs/cron.py")
        (tick,) = clock.get_jobs()
        tick.next_enqueue_time = datetime.now(UTC) - timedelta(seconds=1)
        clocks.append(clock)
    ticks: list[Job] = []
    for clock in clocks:
        (tick,) = clock.enqueue_jobs()
        ticks.append(Job.fetch(tick.get_job_ids(client, 0, 0)[0], connection=client))
    assert len({t.id for t in ticks}) == 2  # RQ's cron holds no lock: two ticks
    counts = [t.perform() for t in ticks]
    assert sorted(counts) == [0, 1]
    minute = ticks[0].enqueued_at
    assert minute is not None
    job = Job.fetch(sweep_job_id(connection, minute), connection=client)
    assert job.ttl is not None and 0 < job.ttl <= 55
    assert job.timeout is not None and job.timeout < 60
    for t in ticks:
        t.delete()
    job.delete()
    # The product's queue and the minute's claim left as found: a later test's tick of
    # this minute must claim it and find no drains job of it.
    Job.fetch(drains_data(minute, 55).job_id, connection=client).delete()
    client.delete(claim_key(Queue(QUEUE, connection=client), minute))


def test_a_second_enqueue_of_one_minute_is_ignored(client: redis.Redis) -> None:
    queue = Queue(f"test-{uuid.uuid4().hex[:8]}", connection=client)
    minute = datetime.now(UTC).replace(second=0, microsecond=0)
    name = f"c-{uuid.uuid4().hex[:10]}"
    assert enqueue_minute(queue, [name], minute, minute + timedelta(seconds=1)) == 1
    assert enqueue_minute(queue, [name], minute, minute + timedelta(seconds=2)) == 0
    assert len(queue) == 1
    # A sweep whose minute is over is not enqueued at all.
    assert enqueue_sweep(queue, "late", minute, minute + timedelta(seconds=56)) is None
    queue.empty()


def test_pause_is_read_as_the_sweep_starts_and_resume_moves_what_is_due(
    control: str, connection: str
) -> None:
    now = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)
    with open_session(control) as session:
        set_paused(session, connection, True, NO_PUBLISHER)
        paused = sweep(session, connection, now=now, publisher=NO_PUBLISHER)
        assert paused.outcome is SweepOutcome.paused
        set_paused(session, connection, False, NO_PUBLISHER)
        report = sweep(session, connection, now=now, publisher=NO_PUBLISHER)
    assert (report.outcome, len(report.moved)) == (SweepOutcome.done, 1)


def test_the_job_publishes_each_move_on_redis(
    client: redis.Redis, control: str, connection: str
) -> None:
    pubsub = client.pubsub()
    pubsub.subscribe(events_channel(connection))
    pubsub.get_message(timeout=1)  # the subscription's own reply
    queue = Queue(f"test-{uuid.uuid4().hex[:8]}", connection=client)
    if datetime.now(UTC).second >= 50:
        time.sleep(11)  # a sweep is not enqueued in its minute's last 5 s (its wait is over)
    job = enqueue_sweep(queue, connection, datetime.now(UTC), datetime.now(UTC))
    assert job is not None
    result: dict[str, Any] = job.perform()
    assert (result["outcome"], len(result["moved"])) == ("done", 1)
    message = pubsub.get_message(timeout=2)
    assert message is not None
    event = json.loads(message["data"])
    assert (event["connection"], event["table"], event["state"], event["actor"]) == (
        connection,
        "orders",
        "cancelled",
        "Timed move",
    )
    pubsub.close()
    job.delete()
