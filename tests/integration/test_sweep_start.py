"""A minute's sweep started by the Procfile's worker: its start is in the ledger before the
sweep runs, written in the pipeline the worker sends as it starts the job (no round trip
of the job's own), counted once; a job run by any other worker writes its start itself.
The token read in that pipeline keeps the sweep's read of the control plane between jobs
until a write is announced."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
import redis
from rq import Queue, SimpleWorker
from sqlalchemy import event

import jobs.sweep
import services.apps
from core.sweep.report import SweepOutcome
from jobs.sweep import minute_of
from jobs.tick import enqueue_minute
from jobs.worker import SweepWorker
from services.apps import add_app
from services.connections import add_connection
from services.storage import ENGINES, engine_for, open_session, upgrade_control_plane
from services.sweep_ledger import COUNTS, DURATION, HISTOGRAMS, LAG, SERVED, WAITING
from tests.integration.sweep_fixtures import SHOP


@pytest.fixture
def connection(make_database: Callable[[], str], monkeypatch: pytest.MonkeyPatch) -> Any:
    control = make_database()
    upgrade_control_plane(control)
    monkeypatch.setenv("DATABASE_URL", control)
    name, url = f"start{uuid.uuid4().hex[:8]}", make_database()
    with open_session(control) as session:
        add_connection(session, name, url, "Europe/London")
        add_app(session, name, SHOP, create_tables=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO settings DEFAULT VALUES")
    yield name
    ENGINES.clear()


def watched(monkeypatch: pytest.MonkeyPatch, client: redis.Redis, name: str) -> dict[str, Any]:
    """What the ledger says as the sweep itself begins, and the starts the job wrote."""
    seen: dict[str, Any] = {"job_writes": 0}
    sweep, mark = jobs.sweep.sweep, jobs.sweep.mark_started

    def sweeping(*args: Any, **kwargs: Any) -> Any:
        seen["served"] = client.zscore(SERVED, name)
        seen["waiting"] = client.hget(WAITING, name)
        return sweep(*args, **kwargs)

    def marking(*args: Any, **kwargs: Any) -> None:
        seen["job_writes"] += 1
        mark(*args, **kwargs)

    monkeypatch.setattr(jobs.sweep, "sweep", sweeping)
    monkeypatch.setattr(jobs.sweep, "mark_started", marking)
    return seen


def lag_count(client: redis.Redis) -> int:
    found = client.hgetall(HISTOGRAMS["lag"])
    return sum(int(v) for k, v in found.items() if k != b"sum")


@pytest.mark.parametrize(
    ("worker_class", "job_writes"), [(SweepWorker, 0), (SimpleWorker, 1)], ids=["sweep", "rq"]
)
def test_a_sweeps_start_is_in_the_ledger_before_it_runs_and_counted_once(
    client: redis.Redis,
    queue: Queue,
    connection: str,
    monkeypatch: pytest.MonkeyPatch,
    worker_class: type[SimpleWorker],
    job_writes: int,
) -> None:
    minute = minute_of(datetime.now(UTC))
    now = minute + timedelta(seconds=1)  # the tick on time, whenever in the minute this runs
    seen = watched(monkeypatch, client, connection)
    lags = lag_count(client)
    try:
        assert enqueue_minute(queue, [connection], minute, now) == 1
        assert client.hget(WAITING, connection) is not None
        worker_class([queue], connection=client).work(burst=True)
        # As the sweep began its connection was served this minute, no longer waiting.
        assert seen["served"] == minute.timestamp()
        assert seen["waiting"] is None
        assert seen["job_writes"] == job_writes
        assert 0.0 <= float(client.hget(LAG, connection) or -1) < 120
        assert lag_count(client) == lags + 1
    finally:
        client.zrem(SERVED, connection)
        client.hdel(WAITING, connection)
        client.hdel(LAG, connection)


@pytest.mark.parametrize(
    ("worker_class", "job_round_trips"), [(SweepWorker, 0), (SimpleWorker, 1)], ids=["sweep", "rq"]
)
def test_a_sweeps_end_is_counted_once_in_the_workers_success_pipeline(
    client: redis.Redis,
    queue: Queue,
    connection: str,
    monkeypatch: pytest.MonkeyPatch,
    worker_class: type[SimpleWorker],
    job_round_trips: int,
) -> None:
    """The Procfile's worker sends the sweep's hint and counts with RQ's own writes as the
    job succeeds; under another worker the job sends them itself."""
    minute = minute_of(datetime.now(UTC))
    own: list[str] = []
    finished = jobs.sweep._finished
    monkeypatch.setattr(
        jobs.sweep, "_finished", lambda c, name, *a: (own.append(name), finished(c, name, *a))
    )
    try:
        assert enqueue_minute(queue, [connection], minute, minute + timedelta(seconds=1)) == 1
        worker_class([queue], connection=client).work(burst=True)
        assert len(own) == job_round_trips
        assert client.hget(COUNTS["run"], connection) == b"1"
        assert float(client.hget(DURATION, connection) or -1) >= 0
    finally:
        for key in (COUNTS["run"], DURATION, WAITING, LAG):
            client.hdel(key, connection)
        client.zrem(SERVED, connection)


def test_a_workers_idle_sweeps_read_the_control_plane_once_until_a_write_is_announced(
    client: redis.Redis,
    queue: Queue,
    connection: str,
    redis_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Procfile's worker keeps a sweep's read of the control plane while the token every
    announced write sets on Redis holds: the next minutes' sweeps send the control plane
    nothing; a pause made in another process (the console, announcing on REDIS_URL) is seen
    by the very next sweep, with no wait for anything to be heard."""
    control = os.environ["DATABASE_URL"]
    sent: list[str] = []
    outcomes: list[str] = []
    sweep = jobs.sweep.sweep

    def sweeping(*args: Any, **kwargs: Any) -> Any:
        report = sweep(*args, **kwargs)
        outcomes.append(report.outcome.value)
        return report

    monkeypatch.setattr(jobs.sweep, "sweep", sweeping)
    # The version check every ADMINIUM_CONTROL_CHECK_SECONDS (10 s) is the other way a change
    # is seen: out of the way here, so what is read after the pause is the token's doing
    # (red once under load: the console's pause took long enough for a check to fall due,
    # one statement more).
    monkeypatch.setattr(services.apps, "CHECK_SECONDS", 3600.0)
    first = minute_of(datetime.now(UTC)) - timedelta(minutes=10)
    worker = SweepWorker([queue], connection=client)

    def sweep_minute(offset: int) -> None:
        minute = first + timedelta(minutes=offset)
        assert enqueue_minute(queue, [connection], minute, minute + timedelta(seconds=1)) == 1
        worker.work(burst=True)

    engine = engine_for(control)
    listen = lambda *a: sent.append(str(a[2]))  # noqa: E731
    try:
        sweep_minute(0)
        sweep_minute(1)  # the first one's comparison with the tables was this process's write
        event.listen(engine, "before_cursor_execute", listen)
        sweep_minute(2)
        sweep_minute(3)
        assert sent == []  # nothing read again: no write announced since
        assert outcomes == [SweepOutcome.done.value] * 4
        done = subprocess.run(
            [str(Path(sys.executable).parent / "adminium"), "connection", "pause", connection],
            env={**os.environ, "DATABASE_URL": control, "REDIS_URL": redis_url},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        sweep_minute(4)
        assert outcomes[-1] == SweepOutcome.paused.value
        assert len(sent) == 1  # read again, once
    finally:
        event.remove(engine, "before_cursor_execute", listen)
        for key in (COUNTS["run"], DURATION, WAITING, LAG):
            client.hdel(key, connection)
        client.zrem(SERVED, connection)
