"""The Procfile's web worker: gunicorn's gevent worker, whose own refusal of a request line
over its cap (8190 bytes: `--limit-request-line`) answers as the API does on its paths.

Gunicorn refuses such a line while parsing it, before the app sees anything, with an HTML
414. The app answers every URL up to that cap itself (414 `REQUEST_TOO_LARGE` past 4 KB,
`web.errors.URL_MAX`); past it, this worker answers the same JSON when the request line
starts with a path of the REST API (`/api/`) or the public API (`/public/`), read without
consuming it (MSG_PEEK) as the connection opens. A later request on a kept-alive
connection, or any other path, gets gunicorn's own answer.

This module imports no part of the web app (gunicorn's arbiter imports the worker class
before the worker patches the standard library for gevent).
"""

from __future__ import annotations

import json
import socket
from typing import Any

import gevent
from gunicorn.http.errors import LimitRequestLine
from gunicorn.workers.ggevent import GeventWorker

PEEK_BYTES = 64
"""Enough of a request line to read its method and the start of its path."""

STAFF_BODY = {
    "error": {
        "code": "REQUEST_TOO_LARGE",
        "message": "the URL is longer than the server reads",
        "details": {},
    }
}
GUEST_BODY = {
    "error": {"code": "REQUEST_TOO_LARGE", "message": "The request is too large.", "params": {}}
}
"""The answers of web.errors for a URL too long (staff: details; guests: params)."""


def body_for(start: bytes) -> dict[str, Any] | None:
    """The JSON answer for a request line that starts so, or None off the APIs' paths."""
    parts = start.split(b" ", 2)
    if len(parts) < 2:
        return None
    path = parts[1]
    if path.startswith(b"/api/"):
        return STAFF_BODY
    if path.startswith(b"/public/"):
        return GUEST_BODY
    return None


def answer(body: dict[str, Any]) -> bytes:
    """A whole HTTP answer: 414 with the JSON body; the connection closes."""
    data = json.dumps(body).encode()
    head = (
        "HTTP/1.1 414 URI Too Long\r\nConnection: close\r\n"
        "Content-Type: application/json\r\nX-Content-Type-Options: nosniff\r\n"
        f"Content-Length: {len(data)}\r\n\r\n"
    )
    return head.encode("latin-1") + data


class WebWorker(GeventWorker):  # type: ignore[misc]
    """Gunicorn's gevent worker; a request line over the cap on the APIs' paths gets JSON."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.starts: dict[int, bytes] = {}

    def handle(self, listener: Any, client: Any, addr: Any) -> None:
        """Note how the connection's first request line starts, then serve it as gunicorn does."""
        client.setblocking(1)
        self.starts[id(client)] = self._peek(client)
        try:
            super().handle(listener, client, addr)
        finally:
            self.starts.pop(id(client), None)

    def _peek(self, client: Any) -> bytes:
        """The first bytes the client sent, left unread (nothing within keepalive seconds:
        nothing; gunicorn's own wait for the request then applies as before)."""
        try:
            with gevent.Timeout(max(self.cfg.keepalive, 1), False):
                return bytes(client.recv(PEEK_BYTES, socket.MSG_PEEK))
        except (OSError, ValueError):  # reset, closed, or a socket that cannot peek
            pass
        return b""

    def handle_request(self, listener_name: Any, req: Any, sock: Any, addr: Any) -> Any:
        """A request served: a later refusal on this connection is no longer its first."""
        self.starts[id(sock)] = b""
        return super().handle_request(listener_name, req, sock, addr)

    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        """A request line over the cap on the APIs' paths: their JSON 414; else gunicorn's."""
        body = body_for(self.starts.get(id(client), b""))
        if req is not None or not isinstance(exc, LimitRequestLine) or body is None:
            super().handle_error(req, client, addr, exc)
            return
        self.log.warning("Invalid request from ip=%s: %s (answered as JSON)", addr[0], exc)
        try:
            client.sendall(answer(body))
        except OSError:
            self.log.debug("Failed to send error message.")
