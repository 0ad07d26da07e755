"""The Procfile's web process answers pages while it holds more open screens than the old
gthread process had threads (64) and its control-plane pool has connections (15)."""

from __future__ import annotations

import base64
import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from adminium.supervisor import read_procfile
from tests.integration.api_fixtures import Site
from tests.integration.launching import ROOT, free_port, wait_for

pytestmark = pytest.mark.integration

SOCKETS = 80
"""More than the 64 threads the web line used to have, and the pool's 15 connections."""
ROW = "/live?screen=row&connection=venue&app=venue&table=orders&key=1"


def get(port: int, path: str, cookie: str = "") -> tuple[int, float]:
    """GET a page (5 s at most): its status and seconds taken; (0, 5.0) when no answer."""
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path, headers={"Cookie": f"session={cookie}"} if cookie else {})
        reply = conn.getresponse()
        reply.read()
        return reply.status, time.monotonic() - started
    except OSError:
        return 0, 5.0
    finally:
        conn.close()


def open_socket(port: int, cookie: str) -> tuple[socket.socket, bytes]:
    """A websocket handshake by hand (5 s at most): the socket and the answer's first line."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        f"GET {ROW} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        f"Cookie: session={cookie}\r\n\r\n".encode()
    )
    answer = b""
    try:
        while b"\r\n\r\n" not in answer and (chunk := sock.recv(4096)):
            answer += chunk
    except TimeoutError:
        return sock, b"no answer within 5 s"
    return sock, answer.split(b"\r\n", 1)[0]


@pytest.fixture
def web(screens_site: Site) -> Iterator[int]:
    """The Procfile's web line on the module's site; its port."""
    port = free_port()
    config = screens_site.app.config
    env = {
        **os.environ,
        "DATABASE_URL": config["DATABASE_URL"],
        "REDIS_URL": config["REDIS_URL"],
        "SECRET_KEY": config["SECRET_KEY"],
        "PORT": str(port),
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
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
        wait_for("the web answers", lambda: get(port, "/status")[0] == 200)
        yield port
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)


def test_pages_answer_while_more_screens_are_open_than_threads(
    web: int, signed_in: Callable[[str], FlaskClient]
) -> None:
    cookie = signed_in("manager").get_cookie("session")
    assert cookie is not None
    with ThreadPoolExecutor(16) as pool:
        opened = list(pool.map(lambda _: open_socket(web, cookie.value), range(SOCKETS)))
    try:
        assert [line for _, line in opened if b" 101 " not in line] == []
        # Every socket is still held; pages that read the control plane still answer (a
        # starved process gives no answer within the client's 5 s: status 0).
        for path, who in (("/status", ""), ("/apps/venue/venue/orders", cookie.value)):
            status, took = get(web, path, who)
            assert status == 200, (path, status, took)
        # ...and one more screen still opens.
        extra, line = open_socket(web, cookie.value)
        extra.close()
        assert b" 101 " in line, line
    finally:
        for sock, _ in opened:
            sock.close()
