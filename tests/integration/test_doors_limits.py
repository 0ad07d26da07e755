"""Limits answer as the API does on the API's paths, through the real gunicorn the
Procfile starts: a URL over 4 KB is 414 and a chunked body over 1 MiB is 413, both with
the JSON of `REQUEST_TOO_LARGE` (staff: `details`; guests: `params`). Up to gunicorn's
8190-byte request line the app answers; past it, the Procfile's worker class does."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from tests.integration.api_fixtures import Site, rows_path
from tests.integration.procfile_web import procfile_web

pytestmark = pytest.mark.integration

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def web(shared_site: Site) -> Iterator[int]:
    """The Procfile's web line on the module's site: its port."""
    with procfile_web(shared_site.app.config) as port:
        yield port


def exchange(port: int, head: str, chunks: Iterable[bytes] = ()) -> tuple[int, str, str]:
    """Send a request by hand (the server may answer before the body ends): the status,
    Content-Type and body of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        try:
            conn.sendall(head.encode())
            for chunk in chunks:
                conn.sendall(chunk)
        except OSError:
            pass  # refused before the body ended: the answer is waiting
        answer = b""
        try:
            while data := conn.recv(65536):
                answer += data
                if b"\r\n\r\n" in answer and _complete(answer):
                    break
        except OSError:
            pass
    header, _, body = answer.partition(b"\r\n\r\n")
    lines = header.decode("latin-1").split("\r\n")
    fields = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), fields.get("content-type", ""), body.decode(errors="replace")


def _complete(answer: bytes) -> bool:
    header, _, body = answer.partition(b"\r\n\r\n")
    for line in header.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.lower() == "content-length":
            return len(body) >= int(value)
    return False


def error_of(status: int, kind: str, body: str) -> tuple[int, str, Any]:
    """The status, the JSON error's code and its keys (or the kind and a body excerpt)."""
    if not kind.startswith("application/json"):
        return status, kind, body[:80]
    error = json.loads(body)["error"]
    return status, error["code"], sorted(error)


STAFF = ["code", "details", "message"]
GUEST = ["code", "message", "params"]


@pytest.mark.parametrize("length", [4200, 8000, 9000, 60000])
def test_a_long_url_on_the_staff_api_is_414_with_its_code(
    shared_site: Site, web: int, length: int
) -> None:
    path = rows_path("orders") + "?after=" + "1" * length
    token = shared_site.headers("staff")["Authorization"]
    head = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: {token}\r\n\r\n"
    assert error_of(*exchange(web, head)) == (414, "REQUEST_TOO_LARGE", STAFF)


@pytest.mark.parametrize("length", [4200, 8000, 9000])
def test_a_long_url_on_the_public_api_is_414_with_its_code(web: int, length: int) -> None:
    path = "/public/venue/venue/tickets/" + "t" * length
    head = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    assert error_of(*exchange(web, head)) == (414, "REQUEST_TOO_LARGE", GUEST)


def chunked(total: int, size: int = 64 * 1024) -> Iterator[bytes]:
    """A JSON object's text of `total` bytes, sent in chunks (no Content-Length)."""
    text = b'{"values": {"note": "' + b"x" * (total - 24) + b'"}}'
    for start in range(0, len(text), size):
        piece = text[start : start + size]
        yield f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    yield b"0\r\n\r\n"


@pytest.mark.parametrize(
    ("path", "who", "shape"),
    [
        (rows_path("orders"), "staff", STAFF),
        (rows_path("orders", 1) + "/moves", "staff", STAFF),
        ("/public/venue/venue/tickets/tk-0000000000000/moves", None, GUEST),
    ],
)
def test_a_chunked_body_over_1_mib_is_413_with_its_code(
    shared_site: Site, web: int, path: str, who: str | None, shape: list[str]
) -> None:
    token = f"Authorization: {shared_site.headers(who)['Authorization']}\r\n" if who else ""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{token}"
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    assert error_of(*exchange(web, head, chunked(MIB + 4096))) == (
        413,
        "REQUEST_TOO_LARGE",
        shape,
    )


def test_a_chunked_body_under_1_mib_is_still_read(shared_site: Site, web: int) -> None:
    # Under the cap the body is read whole: a value no column holds is the pipeline's refusal.
    token = shared_site.headers("staff")["Authorization"]
    head = (
        f"POST {rows_path('orders')} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: {token}\r\n"
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    status, code, _ = error_of(*exchange(web, head, chunked(MIB - 4096)))
    assert (status, code) != (413, "REQUEST_TOO_LARGE")
    assert status < 500
