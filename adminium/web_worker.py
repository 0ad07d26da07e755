"""The Procfile's web worker: gunicorn's gevent worker, whose own refusal of a request line
over its cap (8190 bytes: `--limit-request-line`) answers as the API does on its paths.

Gunicorn refuses such a line while parsing it, before the app sees anything, with an HTML
414. The app answers every URL up to that cap itself (414 `REQUEST_TOO_LARGE` past 4 KB,
`web.errors.URL_MAX`); past it, this worker answers the same JSON when the request line
starts with a path of the REST API (`/api/`) or the public API (`/public/`); any other path
gets gunicorn's own answer. How each request line starts is read without consuming it,
before gunicorn parses it: the first as the connection opens (MSG_PEEK), each later one on
a kept-alive connection once the request before it has been answered and the rest of its
body read (as gunicorn reads it next), from what gunicorn's reader holds already (a
pipelined request) and else from the socket. Both waits are gunicorn's keepalive seconds.

Every answer gunicorn makes itself (a 400 for a malformed request, 414, 431 for a header
over `--limit-request-field_size` or past 100 headers, a 500 of its own) carries the
security headers the app's answers carry (`web/headers.py`), with a policy that lets the
error page load nothing: they are put after its status line as it is written.

This module imports no part of the web app (gunicorn's arbiter imports the worker class
before the worker patches the standard library for gevent).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
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


SECURITY_HEADERS = (
    ("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; base-uri 'none'"),
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "same-origin"),
    ("Cache-Control", "no-store"),
)
"""The headers of web/headers.py on gunicorn's own answers (an error page loads nothing)."""
_HEADER_LINES = "".join(f"{name}: {value}\r\n" for name, value in SECURITY_HEADERS).encode()


class HeadedSocket:
    """A client socket whose first write, an answer gunicorn makes itself, gets the security
    headers after its status line; everything else is the socket's."""

    def __init__(self, sock: Any) -> None:
        self._sock = sock
        self._headed = False

    def sendall(self, data: bytes) -> None:
        if not self._headed:
            self._headed = True
            status, end, rest = bytes(data).partition(b"\r\n")
            data = status + end + _HEADER_LINES + rest if end else data
        self._sock.sendall(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


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
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n\r\n"
    )
    return head.encode("latin-1") + data


def _upgrades(req: Any) -> bool:
    """Whether a request asked to upgrade (a websocket): no later HTTP request follows it."""
    return any(name == "UPGRADE" for name, _ in req.headers)


class WebWorker(GeventWorker):  # type: ignore[misc]
    """Gunicorn's gevent worker; a request line over the cap on the APIs' paths gets JSON."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.starts: dict[int, bytes] = {}
        self.quitting = False

    def handle_quit(self, sig: int, frame: Any) -> None:
        """Quit once. Ctrl-C sends SIGINT to the whole process group, so this worker hears
        it from the terminal and then SIGQUIT from the arbiter stopping it: gunicorn's quit
        (its `sys.exit(0)` in a greenlet) ran for both, and the second landed while the
        exiting process sat in gevent's threading shutdown, which printed it as the main
        greenlet "failed with SystemExit", a traceback in the web log."""
        if self.quitting:
            return
        self.quitting = True
        super().handle_quit(sig, frame)

    def handle(self, listener: Any, client: Any, addr: Any) -> None:
        """Note how the connection's first request line starts, then serve it as gunicorn does."""
        client.setblocking(1)
        # Nothing within keepalive seconds: nothing; gunicorn's own wait then applies.
        self.starts[id(client)] = self._within_keepalive(lambda: self._peek(client)) or b""
        try:
            super().handle(listener, client, addr)
        finally:
            self.starts.pop(id(client), None)

    def handle_request(self, listener_name: Any, req: Any, sock: Any, addr: Any) -> None:
        """Serve a request as gunicorn does; then note how the next request on the kept-alive
        connection starts (gunicorn's keep-alive loop parses it next)."""
        self.starts[id(sock)] = b""
        super().handle_request(listener_name, req, sock, addr)  # StopIteration: it closes
        if req.should_close() or _upgrades(req) or getattr(req.body, "failed", False):
            return  # gunicorn parses no later request on this connection
        start = self._within_keepalive(lambda: self._next_start(req, sock))
        if start is None:
            # Nothing came within keepalive seconds: closed now, as gunicorn's own wait for
            # the next request would close it, rather than after waiting as long again.
            raise StopIteration()
        self.starts[id(sock)] = start

    def _within_keepalive(self, read: Callable[[], bytes]) -> bytes | None:
        """What `read` returns within keepalive seconds (gunicorn's wait for a request), or
        None."""
        with gevent.Timeout(max(self.cfg.keepalive, 1), False):
            return read()
        return None

    def _next_start(self, req: Any, sock: Any) -> bytes:
        """How the request after `req` starts: the rest of `req`'s body read first, as
        gunicorn does before parsing the next; then what its reader holds already,
        completed from the socket while the line has not ended there."""
        if req.body is not None:
            while req.body.read(8192):
                pass
        held = bytes(req.unreader.buf.getvalue()[:PEEK_BYTES])
        if b"\r\n" in held or len(held) == PEEK_BYTES:
            return held
        return held + self._peek(sock, PEEK_BYTES - len(held))

    def _peek(self, client: Any, size: int = PEEK_BYTES) -> bytes:
        """The next bytes the client sent, left unread (b"" when it closed or reset)."""
        try:
            return bytes(client.recv(size, socket.MSG_PEEK))
        except (OSError, ValueError):  # reset, closed, or a socket that cannot peek
            return b""

    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        """A request line over the cap on the APIs' paths: their JSON 414; else gunicorn's
        own answer. Either with the security headers."""
        body = body_for(self.starts.get(id(client), b""))
        if req is not None or not isinstance(exc, LimitRequestLine) or body is None:
            super().handle_error(req, HeadedSocket(client), addr, exc)
            return
        self.log.warning("Invalid request from ip=%s: %s (answered as JSON)", addr[0], exc)
        try:
            HeadedSocket(client).sendall(answer(body))
        except OSError:
            self.log.debug("Failed to send error message.")
