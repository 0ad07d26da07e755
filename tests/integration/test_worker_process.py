"""Issue 21 item 10: the Procfile's worker runs alone. Nothing enqueues jobs for later
(`enqueue_in`, `enqueue_at`, retries with an interval), so the worker needs no RQ
scheduler: no `--with-scheduler` child outlives a worker killed by SIGKILL."""

from __future__ import annotations

import signal
from pathlib import Path

import psutil
import pytest
import redis
from rq import Worker

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
