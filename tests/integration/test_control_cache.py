"""Each web process keeps what a REST request needs of the control plane (a token's user and
roles, the app, its store), and every control-plane write is seen by every process from its
next request on: the writer's own process at once, another through the announcement on
Redis. Real PostgreSQL, real Redis, and a second web process: the Procfile's gunicorn."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from adminium.supervisor import read_procfile
from services.models import db
from services.users import add_user, remove_role, renew_token
from tests.integration.api_fixtures import Site, rows_path

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def status_of(port: int, path: str, token: str) -> int:
    """A GET of the web on `port` with a bearer token; the answer's status."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {token}"})
        answer = conn.getresponse()
        answer.read()
        return answer.status
    finally:
        conn.close()


@pytest.fixture
def other_web(fresh_site: Site, redis_url: str) -> Iterator[int]:
    """A second web process over the site's control plane and Redis (the Procfile's line,
    as `adminium run` starts it), reading the version itself only every 600 s: a change it
    sees sooner came through the announcement. Its port."""
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": fresh_site.app.config["DATABASE_URL"],
        "REDIS_URL": redis_url,
        "SECRET_KEY": "test-two-processes",
        "PORT": str(port),
        "ADMINIUM_CONTROL_CHECK_SECONDS": "600",
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
    }
    process = subprocess.Popen(
        ["/bin/sh", "-c", read_procfile(ROOT / "Procfile")["web"]],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                status_of(port, "/status", "")
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, "no web"
                time.sleep(0.1)
        yield port
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(15)


def seen_within(check: Callable[[], bool], seconds: float) -> bool:
    """Whether `check` holds within `seconds` (asked again every 10 ms)."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_what_one_process_writes_of_the_control_plane_another_sees_at_once(
    fresh_site: Site, other_web: int
) -> None:
    """One second web process for every case (a gunicorn start is seconds): a role taken
    away, a role given, a new token; and, to show the other process keeps what it read, a
    write nobody announced."""
    path = rows_path("settings", 1)
    staff, manager, clerk = (fresh_site.tokens[n] for n in ("staff", "manager", "clerk"))
    assert status_of(other_web, path, staff) == 200
    assert status_of(other_web, path, manager) == 200
    assert status_of(other_web, path, clerk) == 403  # a clerk of the other app only
    # A write nobody announces (SQL by hand) is not seen at once: the other process keeps
    # the manager's roles as it read them (until it reads the version itself).
    with psycopg.connect(fresh_site.app.config["DATABASE_URL"], autocommit=True) as conn:
        conn.execute(
            "DELETE FROM adminium_control.user_roles WHERE user_id ="
            " (SELECT id FROM adminium_control.users WHERE email = 'manager@venue.test')"
        )
    assert status_of(other_web, path, manager) == 200
    # The staff role taken away in this process: announced after its commit.
    with fresh_site.app.app_context():
        remove_role(db.session, "staff@venue.test", "staff", "venue/venue")
    here = fresh_site.client.get(path, headers={"Authorization": f"Bearer {staff}"})
    assert here.status_code == 403
    assert seen_within(lambda: status_of(other_web, path, staff) == 403, 2.0)
    # Everything the other process kept went with it, the manager's old roles too.
    assert status_of(other_web, path, manager) == 403
    # A role given, then a new token: the old one opens nothing from then on.
    with fresh_site.app.app_context():
        add_user(db.session, "clerk@other.test", "staff", "venue/venue")
    assert seen_within(lambda: status_of(other_web, path, clerk) == 200, 2.0)
    with fresh_site.app.app_context():
        new = renew_token(db.session, "clerk@other.test")
    assert seen_within(lambda: status_of(other_web, path, clerk) == 401, 2.0)
    assert status_of(other_web, path, new) == 200
