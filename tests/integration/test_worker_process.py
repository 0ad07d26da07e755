"""The Procfile's worker as a real process on a redis-server of the module's own (one
worker for both tests: starting one is the slow part).

It runs alone. Nothing enqueues jobs for later (`enqueue_in`,
`enqueue_at`, retries with an interval), so the worker needs no RQ scheduler: no
`--with-scheduler` child outlives a worker killed by SIGKILL. Redis going away in
the middle of a job does not end it (RQ left its loop and the process exited)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
import redis
from rq import Queue, Worker

from tests.integration.launching import wait_for
from tests.integration.recovery_fixtures import (
    RedisOnPort,
    redis_on_port,
    start_procfile_process,
    stop_process,
)

pytestmark = pytest.mark.integration


@dataclass
class Running:
    server: RedisOnPort
    worker: subprocess.Popen[bytes]
    log: Path


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    """The Procfile's worker, listening, on a Redis of the module's own."""
    folder = tmp_path_factory.mktemp("worker")
    with redis_on_port(folder) as server:
        log = folder / "worker.log"
        worker = start_procfile_process("worker", {"REDIS_URL": server.url}, log)
        try:
            with redis.Redis.from_url(server.url) as client:
                wait_for(
                    "the worker listens",
                    lambda: [w.get_state() for w in Worker.all(connection=client)] == ["idle"],
                )
            yield Running(server, worker, log)
        finally:
            stop_process(worker)


def test_the_procfile_worker_has_no_child_to_leave_behind(running: Running) -> None:
    # RQ starts its scheduler's process (with --with-scheduler) before it listens.
    found = psutil.Process(running.worker.pid).children(recursive=True)
    assert [" ".join(p.cmdline()) for p in found] == [], running.log.read_text()


def test_the_worker_rides_out_redis_going_away_in_the_middle_of_a_job(running: Running) -> None:
    with redis.Redis.from_url(running.server.url) as client:
        busy = Queue("adminium", connection=client).enqueue(time.sleep, 1.5)
        wait_for("the job started", lambda: busy.get_status(refresh=True) == "started")
    # Redis goes while the job runs: RQ's calls after the job fail (RQ exited then).
    running.server.stop()
    time.sleep(2)
    running.server.start()
    with redis.Redis.from_url(running.server.url) as client:
        job = Queue("adminium", connection=client).enqueue(len, "abc")
        wait_for(
            "a job enqueued after the outage ran",
            lambda: job.get_status(refresh=True) == "finished" or running.worker.poll() is not None,
            30,
        )
        assert running.worker.poll() is None, running.log.read_text()
        assert job.return_value() == 3
    assert "Redis answers again; listening again" in running.log.read_text()
