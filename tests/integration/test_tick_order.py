"""The minute tick's queue on real Redis and PostgreSQL: the sweeps of the connections with
something due in the minute first, then every other connection, each part in fair order,
each connection once, and the minute's drains job behind them all (once a minute, also
when no connection has minute work), so listing the drains' connections holds no worker
back from a due sweep."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
import redis
from rq import Queue
from rq.job import Job

from jobs.sweep import minute_of, sweep_job_id
from jobs.tick import FIRST_FLUSH, claim_key, drains_data, enqueue_minute, enqueue_sweeps
from services.apps import add_app
from services.connections import add_connection
from services.due_hints import HINTS
from services.outbox import DRAIN, DRAIN_JOB
from services.storage import ENGINES, open_session
from services.sweep_ledger import QUEUE, SERVED, WAITING
from tests.integration.outbox_fixtures import mail_shop_manifest, queued_jobs

MINUTE = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def test_due_sweeps_first_in_fair_order_then_the_rest_then_the_drains_once(
    client: redis.Redis, queue: Queue
) -> None:
    tag = uuid.uuid4().hex[:6]
    names = [f"n{i:02d}{tag}" for i in range(3 * FIRST_FLUSH)]
    # Served longest ago first: the even ones a minute before the odd ones; never served
    # (the last two) first of all.
    served = {
        n: (MINUTE - timedelta(minutes=2 - i % 2)).timestamp() for i, n in enumerate(names[:-2])
    }
    # Due in the minute or before it (more than the first pipeline takes), the others later.
    due = {n for i, n in enumerate(names) if i % 3 == 0 or n == names[-1]}
    hints = {
        n: (MINUTE + timedelta(seconds=i % 59 - 20 if n in due else 300)).timestamp()
        for i, n in enumerate(names)
    }
    client.zadd(SERVED, served)
    client.zadd(HINTS, hints)
    try:
        drains = drains_data(MINUTE, 55)
        now = MINUTE + timedelta(seconds=1)
        assert enqueue_minute(queue, names, MINUTE, now, after=[drains]) == len(names)
        # A second tick of the minute (another clock's) enqueues nothing, no drains either.
        assert enqueue_minute(queue, names, MINUTE, now, after=[drains]) == 0

        def fair(part: list[str]) -> list[str]:
            return sorted(part, key=lambda n: (served.get(n, -1.0), n))

        first = fair([n for n in names if n in due])
        rest = fair([n for n in names if n not in due])
        assert len(first) > FIRST_FLUSH
        assert queue.get_job_ids() == [
            *(sweep_job_id(n, MINUTE) for n in first + rest),
            drains.job_id,
        ]
        # Every sweep marked waiting for its minute; the drains job is not a sweep.
        assert client.hmget(WAITING, names) == [str(int(MINUTE.timestamp())).encode()] * len(names)
        job = Job.fetch(drains.job_id, connection=client)
        assert job.func_name == "jobs.tick.enqueue_minute_drains"
    finally:
        client.zrem(HINTS, *names)
        client.zrem(SERVED, *names)
        client.hdel(WAITING, *names)


def test_a_minute_with_no_minute_work_still_gets_its_drains_job(
    client: redis.Redis, queue: Queue
) -> None:
    drains = drains_data(MINUTE + timedelta(minutes=7), 55)
    minute = MINUTE + timedelta(minutes=7)
    assert enqueue_minute(queue, [], minute, minute, after=[drains]) == 0
    assert queue.get_job_ids() == [drains.job_id]


def test_the_tick_queues_its_drains_behind_its_sweeps_and_they_enqueue_each_drain(
    client: redis.Redis,
    redis_url: str,
    control: str,
    make_database: Callable[[], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("REDIS_URL", redis_url)
    name = f"m{uuid.uuid4().hex[:8]}"
    with open_session(control) as session:
        add_connection(session, name, make_database(), "Europe/London")
        add_app(session, name, mail_shop_manifest(), create_tables=True)
    queue = Queue(QUEUE, connection=client)
    if datetime.now(UTC).second >= 50:
        time.sleep(11)  # the tick enqueues no sweep in its minute's last 5 s
    minute = minute_of(datetime.now(UTC))
    try:
        # The tick outside a job (its minute is now's); the product's queue.
        assert enqueue_sweeps() == 1
        ids = queue.get_job_ids()
        drains_id = drains_data(minute, 55).job_id
        assert ids.index(sweep_job_id(name, minute)) < ids.index(drains_id)
        assert queued_jobs(client, DRAIN_JOB, name) == []  # the tick itself drained nothing
        job = Job.fetch(drains_id, connection=client)
        queue.remove(job)
        assert job.perform() == {"outbox": 1, "deliveries": 0}
        assert len(queued_jobs(client, DRAIN_JOB, name)) == 1
    finally:
        for job_id in queue.get_job_ids():
            if name in job_id or job_id.startswith("adminium-drains-"):
                queue.remove(job_id)
        for job in queued_jobs(client, DRAIN_JOB, name):
            queue.remove(job)
        client.delete(DRAIN.waiting_key(name))
        client.hdel(WAITING, name)
        # The minute's claim too: another test's tick of this minute must find it free.
        client.delete(claim_key(queue, minute))
        ENGINES.clear()
