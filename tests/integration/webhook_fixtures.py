"""The webhook tests' helpers: a shop whose automations watch its orders, and a real HTTP
receiver (http.server on a free loopback port, in a thread) started by the test.
"""

from __future__ import annotations

import copy
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import sqlalchemy as sa

from tests.integration.sweep_fixtures import SHOP

KITCHEN = {
    "name": "kitchen_screen",
    "table": "orders",
    "on": {"column": "status", "values": ["cancelled"]},
    "webhook": "kitchen",
}
"""Cancelled orders, posted to the webhook `kitchen` (real rows only)."""
LEDGER = {"name": "every_change", "table": "orders", "webhook": "ledger", "samples": True}
"""Every change of an order, sample rows too, posted to the webhook `ledger`."""


def hook_shop_manifest() -> dict[str, Any]:
    """The sweep tests' shop with the two automations above."""
    manifest = copy.deepcopy(SHOP)
    manifest["name"] = "hookshop"
    manifest["automations"] = [copy.deepcopy(KITCHEN), copy.deepcopy(LEDGER)]
    return manifest


def delivery_rows(engine: sa.Engine) -> list[dict[str, Any]]:
    """Every delivery, oldest first."""
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT * FROM adminium.deliveries ORDER BY id")).mappings()
        return [dict(r) for r in rows]


def attempt_rows(engine: sa.Engine) -> list[dict[str, Any]]:
    """Every delivery attempt, oldest first."""
    with engine.connect() as conn:
        query = sa.text("SELECT * FROM adminium.delivery_attempts ORDER BY id")
        return [dict(r) for r in conn.execute(query).mappings()]


@dataclass
class Received:
    """One POST as the receiver read it."""

    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def event(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    """What a test receiver got, and how it answers: `status`, after `stall` seconds (and
    says so in `in_request` as the request arrives; leaving the receiver ends a stall)."""

    url: str = ""
    status: int = 200
    stall: float = 0.0
    location: str | None = None
    received: list[Received] = field(default_factory=list)
    in_request: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    arrived: threading.Condition = field(default_factory=threading.Condition)

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        """The received requests once there are `count` of them (bounded in time)."""
        deadline = time.monotonic() + timeout
        with self.arrived:
            while len(self.received) < count and time.monotonic() < deadline:
                self.arrived.wait(deadline - time.monotonic())
        return list(self.received)


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            receiver.in_request.set()
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            if receiver.stall:
                receiver.release.wait(receiver.stall)
            got = Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            with receiver.arrived:
                receiver.received.append(got)
                receiver.arrived.notify_all()
            answer = b"ok" if receiver.status < 300 else b"kitchen screen is down"
            try:
                self.send_response(receiver.status)
                if receiver.location is not None:
                    self.send_header("location", receiver.location)
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
            except OSError:
                pass  # the poster has gone (a killed worker): nothing to answer

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def receiver(
    status: int = 200, stall: float = 0.0, location: str | None = None
) -> Iterator[Receiver]:
    """A real HTTP server on a free loopback port, in a thread; its URL in `url` (with
    `location`, its answers say where to go instead)."""
    got = Receiver(status=status, stall=stall, location=location)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(got))
    server.daemon_threads = True
    got.url = f"http://127.0.0.1:{server.server_address[1]}/hooks"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield got
    finally:
        got.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@dataclass
class RawServer:
    """A TCP server that answers whatever connects with the same bytes: `answer` once the
    request has come, or (`greets`) the moment a client connects, as an SMTP server does."""

    answer: bytes
    greets: bool = False
    url: str = ""
    connections: int = 0
    drip: float = 0.0
    """Seconds between the answer's lines, when it drips them (each within any timeout)."""


def many_headers(count: int) -> bytes:
    """An HTTP answer of `count` headers (http.client takes at most 100)."""
    lines = [b"HTTP/1.1 200 OK"] + [f"X-Header-{n}: {n}".encode() for n in range(count)]
    return b"\r\n".join([*lines, b"Content-Length: 2", b"", b"ok"])


SMTP_BANNER = b"220 mail.internal.example ESMTP Postfix (Debian/GNU)\r\n"
"""What a port that is no web server says first: a mail server's greeting."""


@contextmanager
def raw_server(answer: bytes, *, greets: bool = False, drip: float = 0.0) -> Iterator[RawServer]:
    """A RawServer on a free loopback port, in a thread; its URL in `url`."""
    got = RawServer(answer, greets, drip=drip)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.05)
    got.url = f"http://127.0.0.1:{listener.getsockname()[1]}/hooks"
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            got.connections += 1
            with client:
                client.settimeout(5)
                try:
                    if not got.greets:
                        _read_request(client)
                    if got.drip:
                        for line in got.answer.splitlines(keepends=True):
                            if stop.wait(got.drip):
                                break
                            client.sendall(line)
                    else:
                        client.sendall(got.answer)
                    if got.greets:
                        _read_request(client)
                except OSError:
                    pass  # the poster has gone: nothing more to say

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        yield got
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


def _read_request(client: socket.socket) -> None:
    """Read a request's head and its body (by its content-length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = client.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        chunk = client.recv(65536)
        if not chunk:
            return
        body += chunk
