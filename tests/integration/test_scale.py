"""Running at scale, on real Redis and PostgreSQL: a dropped sweep is counted and logged and
its connection goes first the next minute; the warm engines stay bounded; the worker class
still stops a job at its timeout."""

from __future__ import annotations

import logging
import math
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
import redis
from rq import Queue
from rq.job import Job, JobStatus

from jobs import worker
from jobs.sweep import sweep_job_id
from jobs.tick import enqueue_minute
from jobs.worker import SweepWorker
from services.storage import Engines
from services.sweep_ledger import (
    BUCKETS,
    DROPPED,
    DropReason,
    histogram,
    mark_finished,
    mark_started,
    missed,
)

ROOT = Path(__file__).resolve().parents[2]
# A fixed past minute: the tests pass `now`, so nothing here waits for the wall clock.
MINUTE = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)


def names(count: int) -> list[str]:
    tag = uuid.uuid4().hex[:8]
    return [f"s{tag}-{i}" for i in range(count)]


def test_a_sweep_not_started_in_its_minute_is_counted_logged_and_goes_first_next_minute(
    client: redis.Redis, queue: Queue, caplog: pytest.LogCaptureFixture
) -> None:
    a, b, c = names(3)
    # 12:00:01: all three enqueued, never served before, so by name.
    assert enqueue_minute(queue, [c, b, a], MINUTE, MINUTE + timedelta(seconds=1)) == 3
    assert queue.get_job_ids() == [sweep_job_id(n, MINUTE) for n in (a, b, c)]
    # Only a's job started in 12:00 (its first act marks it); b's and c's waits ran out.
    mark_started(client, a, MINUTE, MINUTE + timedelta(seconds=3))
    queue.empty()

    following = MINUTE + timedelta(minutes=1)
    with caplog.at_level(logging.WARNING, logger="services.sweep_ledger"):
        assert enqueue_minute(queue, [a, b, c], following, following + timedelta(seconds=1)) == 3
    # The skipped ones first (served never), the one served at 12:00 last.
    assert queue.get_job_ids() == [sweep_job_id(n, following) for n in (b, c, a)]
    for name in (b, c):
        assert int(client.hget(DROPPED, name) or 0) == 1
        found = missed(client, name)
        assert found is not None
        assert (found.count, found.minute, found.why) == (1, MINUTE, DropReason.expired.value)
        assert (
            f"sweep of connection {name} for 2026-05-04 12:00Z dropped: "
            f"{DropReason.expired.value}" in caplog.text
        )
    assert missed(client, a) is None
    # A second tick of 12:01 (another clock) enqueues nothing and counts nothing again.
    assert enqueue_minute(queue, [a, b, c], following, following + timedelta(seconds=2)) == 0
    assert int(client.hget(DROPPED, b) or 0) == 1


def test_a_tick_after_its_minutes_window_sweeps_late_at_once_and_drops_nothing(
    client: redis.Redis, queue: Queue, caplog: pytest.LogCaptureFixture
) -> None:
    (late,) = names(1)
    # 12:00:56 is past the 55 s a sweep of 12:00 may wait (Redis did not answer until
    # then): its rows are still due, so the sweep goes now, with a full wait of its own.
    with caplog.at_level(logging.WARNING, logger="jobs.tick"):
        assert enqueue_minute(queue, [late], MINUTE, MINUTE + timedelta(seconds=56)) == 1
    assert queue.get_job_ids() == [sweep_job_id(late, MINUTE)]
    assert Job.fetch(sweep_job_id(late, MINUTE), connection=client).ttl == 55
    assert "minute 12:00Z: its tick came 56 s late; its sweeps go now (1)" in caplog.text
    assert missed(client, late) is None
    # The next minute's tick counts no drop of it, whether or not it has started yet.
    following = MINUTE + timedelta(minutes=1)
    assert enqueue_minute(queue, [late], following, following + timedelta(seconds=1)) == 1
    assert missed(client, late) is None
    assert int(client.hget(DROPPED, late) or 0) == 0


def test_warm_engines_are_bounded_and_the_coldest_lets_its_connections_go(
    server_database_url: str,
) -> None:
    tag = uuid.uuid4().hex[:8]
    # Three URLs of one database, told apart by application_name (what pg_stat_activity shows).
    urls = [
        f"{server_database_url}{'&' if '?' in server_database_url else '?'}"
        f"application_name=lru-{tag}-{i}"
        for i in range(3)
    ]
    engines = Engines(2)

    def open_on_server(i: int) -> int:
        with psycopg.connect(server_database_url) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
                (f"lru-{tag}-{i}",),
            ).fetchone()
        return int(row[0]) if row else 0

    def settled(i: int, count: int) -> int:
        deadline = time.monotonic() + 5
        while open_on_server(i) != count and time.monotonic() < deadline:
            time.sleep(0.05)  # the server sees a closed socket a moment later
        return open_on_server(i)

    def use(i: int) -> None:
        with engines.get(urls[i]).connect() as conn:
            conn.exec_driver_sql("SELECT 1")

    try:
        use(0)
        use(1)
        assert (open_on_server(0), open_on_server(1)) == (1, 1)  # each pool keeps its one
        use(2)
        assert len(engines) == 2
        assert (settled(0, 0), open_on_server(1), open_on_server(2)) == (0, 1, 1)
        # The coldest is the least recently used, not the first made: 1 used again, so 2 goes.
        use(1)
        use(0)
        assert (settled(2, 0), open_on_server(0), open_on_server(1)) == (0, 1, 1)
    finally:
        engines.clear()


def sessions_named(server_url: str, name: str) -> int:
    """The server's sessions of that application name, read again for up to 5 s until none
    is left (the server sees a closed socket a moment later)."""
    deadline = time.monotonic() + 5
    while True:
        with psycopg.connect(server_url) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (name,)
            ).fetchone()
        found = int(row[0]) if row else 0
        if found == 0 or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def test_a_database_met_again_keeps_its_engine_and_one_in_use_as_it_cools_closes_on_return(
    server_database_url: str,
) -> None:
    tag = uuid.uuid4().hex[:8]
    sep = "&" if "?" in server_database_url else "?"
    urls = [f"{server_database_url}{sep}application_name=kept-{tag}-{i}" for i in range(3)]
    engines = Engines(1)

    def open_on_server(i: int) -> int:
        return sessions_named(server_database_url, f"kept-{tag}-{i}")

    try:
        first = engines.get(urls[0])
        held = first.connect()  # in use while its pool goes cold
        held.exec_driver_sql("SELECT 1")
        engines.get(urls[1])  # the coldest (0) lets its pool go cold
        held.close()  # given back to a cold pool: closed, not kept
        assert open_on_server(0) == 0
        # Met again, the same engine (not made again), its pool warm again.
        assert engines.get(urls[0]) is first
        with first.connect() as conn:
            conn.exec_driver_sql("SELECT 1")
        assert open_on_server(1) == 0  # 1 went cold as 0 came back
    finally:
        engines.clear()


def test_a_connection_in_use_as_its_engine_is_disposed_closes_on_return(
    server_database_url: str,
) -> None:
    """`Engines.clear` (tests, a process that forks) disposes of an engine while one of its
    connections is in use: given back, it is closed at once, not left open in the dropped
    pool for the garbage collector (psycopg's ResourceWarning, a session held till then)."""
    tag = uuid.uuid4().hex[:8]
    sep = "&" if "?" in server_database_url else "?"
    url = f"{server_database_url}{sep}application_name=disposed-{tag}"
    engines = Engines(2)
    held = engines.get(url).connect()
    held.exec_driver_sql("SELECT 1")
    dbapi = held.connection.dbapi_connection
    engines.clear()
    held.close()  # given back to the pool its engine dropped
    assert dbapi is not None and dbapi.closed
    assert sessions_named(server_database_url, f"disposed-{tag}") == 0


def test_the_worker_class_stops_a_job_at_its_timeout(client: redis.Redis, queue: Queue) -> None:
    job = queue.enqueue(time.sleep, 10, job_timeout=1)
    SweepWorker([queue], connection=client).work(burst=True)
    job = Job.fetch(job.id, connection=client)
    # Stopped by its timeout: a sleep that ran its 10 s would have finished, not failed.
    assert job.get_status() == JobStatus.FAILED
    assert "JobTimeoutException" in (job.latest_result().exc_string or "")


def test_the_duration_histogram_counts_each_sweep_once_in_cumulative_buckets(
    client: redis.Redis,
) -> None:
    """Three sweeps of 4 ms, 30 ms and 70 s: a Prometheus histogram counts each in every
    bucket at or above it (le 0.005 holds the 4 ms one; 0.05 to 60 hold two; +Inf all three)."""
    before, before_sum = histogram(client, "duration")
    for seconds in (0.004, 0.03, 70.0):
        mark_finished(client, names(1)[0], seconds=seconds, moved=0, set_aside=0)
    after, after_sum = histogram(client, "duration")
    added = {le: count - dict(before)[le] for le, count in after}
    assert [le for le, _ in after] == [*(str(b) for b in BUCKETS), "+Inf"]
    assert added == {
        "0.005": 1, "0.01": 1, "0.025": 1, "0.05": 2, "0.1": 2, "0.25": 2, "0.5": 2,
        "1.0": 2, "2.5": 2, "5.0": 2, "10.0": 2, "30.0": 2, "60.0": 2, "+Inf": 3,
    }  # fmt: skip
    assert after_sum - before_sum == pytest.approx(70.034)


@pytest.mark.parametrize("burst", [False, True], ids=["long-lived", "burst"])
def test_only_a_long_lived_worker_settles_its_memory(
    client: redis.Redis, queue: Queue, monkeypatch: pytest.MonkeyPatch, burst: bool
) -> None:
    settled: list[bool] = []
    monkeypatch.setattr(worker, "settle_memory", lambda: settled.append(True))
    job = queue.enqueue(math.floor, 2.5)
    SweepWorker([queue], connection=client).work(burst=burst, max_jobs=1)
    assert Job.fetch(job.id, connection=client).return_value() == 2  # the job ran
    assert settled == ([] if burst else [True])


def test_settling_freezes_what_is_held_and_collects_young_objects_less_often() -> None:
    # In a process of its own: the test process keeps Python's own collector settings.
    script = (
        "import gc, jobs.worker as w; w.settle_memory(); "
        "print(gc.get_threshold() == w.GC_THRESHOLD, gc.get_freeze_count() > 10000)"
    )
    found = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert found.stdout.split() == ["True", "True"]
