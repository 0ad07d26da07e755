"""The Procfile's worker as a real process on a redis-server of the test's own.

Issue 21 item 10: it runs alone. Nothing enqueues jobs for later (`enqueue_in`,
`enqueue_at`, retries with an interval), so the worker needs no RQ scheduler: no
`--with-scheduler` child outlives a worker killed by SIGKILL. Item 1: Redis going away in
the middle of a job does not end it (RQ left its loop and the process exited)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import psutil
import pytest
import redis
from rq import Queue, Worker

from tests.integration.launching import wait_for
from tests.integration.recovery_fixtures import (
    redis_on_port,
    start_procfile_process,
    stop_process,
)

pytestmark = pytest.mark.integration


def test_the_procfile_worker_has_no_child_to_leave_behind(tmp_path: Path) -> None:
    with redis_on_port(tmp_path) as server:
        log = tmp_path / "worker.log"
        worker = start_procfile_process("worker", {"REDIS_URL": server.url}, log)
        try:
            client = redis.Redis.from_url(server.url)
            wait_for("the worker registered", lambda: len(Worker.all(connection=client)) == 1)
            # RQ starts its scheduler's process (with --with-scheduler) before it listens.
            wait_for(
                "the worker listens",
                lambda: [w.get_state() for w in Worker.all(connection=client)] == ["idle"],
                10,
            )
            found = psutil.Process(worker.pid).children(recursive=True)
            assert [" ".join(p.cmdline()) for p in found] == [], log.read_text()
            worker.send_signal(signal.SIGKILL)
            worker.wait(10)
            client.close()
        finally:
            stop_process(worker)


def test_the_worker_rides_out_redis_going_away_in_the_middle_of_a_job(tmp_path: Path) -> None:
    with redis_on_port(tmp_path) as server:
        log = tmp_path / "worker.log"
        worker = start_procfile_process("worker", {"REDIS_URL": server.url}, log)
        try:
            client = redis.Redis.from_url(server.url)
            wait_for("the worker registered", lambda: len(Worker.all(connection=client)) == 1)
            running = Queue("adminium", connection=client).enqueue(time.sleep, 2)
            wait_for("the job started", lambda: running.get_status(refresh=True) == "started")
            client.close()
            # Redis goes while the job runs: RQ's calls after the job fail (RQ exited then).
            server.stop()
            time.sleep(4)
            server.start()
            client = redis.Redis.from_url(server.url)
            job = Queue("adminium", connection=client).enqueue(len, "abc")
            wait_for(
                "a job enqueued after the outage ran",
                lambda: job.get_status(refresh=True) == "finished" or worker.poll() is not None,
                30,
            )
            assert worker.poll() is None, log.read_text()
            assert job.return_value() == 3
            assert "Redis answers again; listening again" in log.read_text()
            client.close()
        finally:
            stop_process(worker)
