"""A request line over gunicorn's cap later on a kept-alive connection answers as the first
request on one does, through the real gunicorn the Procfile starts: on the APIs' paths the
JSON 414 of `REQUEST_TOO_LARGE` (staff: `details`; guests: `params`), whether it came after
a plain request, pipelined behind one, or after a request whose body the app left unread;
off them gunicorn's own 414. An idle kept-alive connection still closes after keepalive."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any, BinaryIO

import pytest

from tests.integration.api_fixtures import Site, rows_path
from tests.integration.procfile_web import procfile_web

pytestmark = pytest.mark.integration

LONG = 9000
"""Past gunicorn's `--limit-request-line 8190` (the Procfile's)."""
STAFF = ["code", "details", "message"]
GUEST = ["code", "message", "params"]
KEEPALIVE_SECONDS = 2
"""Gunicorn's keepalive, which the Procfile leaves as it is."""


@pytest.fixture(scope="module")
def web(shared_site: Site) -> Iterator[int]:
    """The Procfile's web line on the module's site: its port."""
    with procfile_web(shared_site.app.config) as port:
        yield port


def read_answer(stream: BinaryIO) -> tuple[int, dict[str, str], bytes]:
    """One HTTP answer read off a connection (status, fields, body by Content-Length)."""
    status = stream.readline().decode("latin-1")
    assert status.startswith("HTTP/1.1 "), f"no answer: {status!r}"
    fields: dict[str, str] = {}
    while (line := stream.readline().decode("latin-1").rstrip("\r\n")) != "":
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    body = stream.read(int(fields.get("content-length", "0")))
    return int(status.split()[1]), fields, body


def error_of(answer: tuple[int, dict[str, str], bytes]) -> tuple[int, str, Any]:
    """The status, the JSON error's code and its keys (or the Content-Type and a body excerpt)."""
    status, fields, body = answer
    kind = fields.get("content-type", "")
    if not kind.startswith("application/json"):
        return status, kind, body[:60]
    error = json.loads(body)["error"]
    return status, error["code"], sorted(error)


def head(path: str, extra: str = "") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}\r\n".encode()


STAFF_LONG = rows_path("orders") + "?after=" + "1" * LONG
GUEST_LONG = "/public/venue/venue/tickets/" + "t" * LONG
POST_UNREAD = (
    b"POST /status HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
    b"Content-Length: 20000\r\n\r\n" + b"x" * 20000
)
"""A request the app answers without reading its body (gunicorn reads the rest after)."""


@pytest.mark.parametrize(
    ("first", "later", "pipelined", "shape"),
    [
        pytest.param(head("/status"), STAFF_LONG, False, STAFF, id="staff-after-a-request"),
        pytest.param(head("/status"), GUEST_LONG, False, GUEST, id="guest-after-a-request"),
        pytest.param(head("/status"), STAFF_LONG, True, STAFF, id="staff-pipelined"),
        pytest.param(POST_UNREAD, GUEST_LONG, False, GUEST, id="guest-after-an-unread-body"),
    ],
)
def test_a_long_line_later_on_a_kept_alive_connection_is_the_apis_json_414(
    shared_site: Site, web: int, first: bytes, later: str, pipelined: bool, shape: list[str]
) -> None:
    token = f"Authorization: {shared_site.headers('staff')['Authorization']}\r\n"
    second = head(later, token)
    with socket.create_connection(("127.0.0.1", web), timeout=10) as conn:
        stream = conn.makefile("rb")
        if pipelined:
            conn.sendall(first + second)
            answered = read_answer(stream)
        else:
            conn.sendall(first)
            answered = read_answer(stream)
            assert answered[1].get("connection", "").lower() != "close"
            conn.sendall(second)
        assert answered[0] < 500
        refused = read_answer(stream)
    assert error_of(refused) == (414, "REQUEST_TOO_LARGE", shape)
    assert refused[1]["connection"] == "close"


def test_a_long_line_later_off_the_apis_paths_gets_gunicorns_own_414(web: int) -> None:
    with socket.create_connection(("127.0.0.1", web), timeout=10) as conn:
        stream = conn.makefile("rb")
        conn.sendall(head("/status"))
        assert read_answer(stream)[0] == 200
        conn.sendall(head("/connections?q=" + "q" * LONG))
        status, fields, _ = read_answer(stream)
    assert status == 414
    assert fields["content-type"].startswith("text/html")


def test_an_idle_kept_alive_connection_closes_after_keepalive_not_twice_that(web: int) -> None:
    with socket.create_connection(("127.0.0.1", web), timeout=10) as conn:
        stream = conn.makefile("rb")
        conn.sendall(head("/status"))
        assert read_answer(stream)[0] == 200
        answered = time.monotonic()
        assert stream.read(1) == b""  # the server closed the connection
        idle = time.monotonic() - answered
    assert KEEPALIVE_SECONDS - 0.5 < idle < KEEPALIVE_SECONDS + 1.0


def security_headers(fields: dict[str, str]) -> dict[str, str]:
    names = ("content-security-policy", "x-content-type-options", "x-frame-options")
    return {name: fields.get(name, "") for name in (*names, "referrer-policy", "cache-control")}


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        pytest.param(head("/connections?q=" + "q" * LONG), 414, id="gunicorns-414"),
        pytest.param(head(STAFF_LONG), 414, id="the-apis-json-414"),
        pytest.param(head("/status", f"X-Big: {'b' * LONG}\r\n"), 431, id="a-header-too-long"),
        pytest.param(
            head("/status", "".join(f"X-{n}: 1\r\n" for n in range(120))),
            431,
            id="too-many-headers",
        ),
        pytest.param(
            b"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: x\r\n\r\n",
            400,
            id="a-malformed-header",
        ),
    ],
)
def test_gunicorns_own_answers_carry_the_security_headers(
    web: int, request_bytes: bytes, status: int
) -> None:
    with socket.create_connection(("127.0.0.1", web), timeout=10) as conn:
        conn.sendall(request_bytes)
        answered, fields, _ = read_answer(conn.makefile("rb"))
    assert answered == status
    assert security_headers(fields) == {
        "content-security-policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'",
        "x-content-type-options": "nosniff",
        "x-frame-options": "DENY",
        "referrer-policy": "same-origin",
        "cache-control": "no-store",
    }
