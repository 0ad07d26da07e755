"""One webhook POST over HTTP(S), to a public address only, never following a redirect.

The receiver's host is resolved at each POST and every address it resolves to is checked
(`services.webhooks.address_refusal`): a loopback, private, link-local or unspecified one
refuses the POST before any byte is sent, unless the operator allowed them
(`ADMINIUM_WEBHOOKS_ALLOW_PRIVATE=1`). The connection is then made to an address so checked,
never to a second lookup's answer (which a DNS server could point elsewhere), with the
URL's host name still the one TLS verifies and `Host` names. The whole POST has `timeout`
seconds, however slowly the receiver answers. No proxy from the environment
is used, and a redirect is an answer like any other (http.client follows none), so the
signature never goes anywhere the URL does not name. A user and password in the URL go as
HTTP Basic authentication.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import socket
import ssl
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

from core.setoff.automations import ANSWER_BYTES
from services.webhooks import BlockedAddress, address_refusal, check_webhook_url


def post(
    url: str,
    body: str,
    headers: Mapping[str, str],
    timeout: float,
    *,
    allow_private: bool = False,
) -> tuple[int, str]:
    """POST the body; the answer's status and first bytes. Raises BlockedAddress for a host
    that resolves to an address not allowed, and whatever the network or a malformed answer
    raises (OSError, http.client.HTTPException)."""
    parts = urlsplit(check_webhook_url(url))
    host = parts.hostname or ""
    connection = _connection(parts.scheme, host, parts.port, timeout, allow_private)
    sent = dict(headers)
    if parts.username:
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        sent["authorization"] = "Basic " + base64.b64encode(pair).decode()
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.connect()
        # `timeout` bounds each wait; this bounds the whole POST, so a receiver that drips
        # its answer a byte at a time is cut off at the same `timeout`.
        cut = threading.Event()
        cutoff = threading.Timer(timeout, _cut, (connection.sock, cut))
        cutoff.start()
        late = TimeoutError(f"no whole answer within {timeout:g} s")
        try:
            connection.request("POST", path, body.encode(), sent)
            with connection.getresponse() as answer:
                got = answer.status, _first(answer.read(ANSWER_BYTES))
        except (OSError, http.client.HTTPException) as error:
            if cut.is_set() or isinstance(error, TimeoutError):  # whichever came first
                raise late from error
            raise
        finally:
            cutoff.cancel()
        if cut.is_set():  # what was read before the cut ended it is no whole answer
            raise late
        return got
    finally:
        connection.close()


def _cut(sock: socket.socket, cut: threading.Event) -> None:
    """End a POST that ran past its time: its reads and writes fail at once."""
    cut.set()
    with contextlib.suppress(OSError):  # closed already: the POST ended by itself
        sock.shutdown(socket.SHUT_RDWR)


def _connection(
    scheme: str, host: str, port: int | None, timeout: float, allow_private: bool
) -> http.client.HTTPConnection:
    made: http.client.HTTPConnection
    if scheme == "https":
        made = http.client.HTTPSConnection(
            host, port, timeout=timeout, context=ssl.create_default_context()
        )
    else:
        made = http.client.HTTPConnection(host, port, timeout=timeout)
    # http.client opens its socket through this attribute (set in its __init__), for plain
    # HTTP and before TLS wraps it alike: the one place every connection passes.
    made._create_connection = lambda address, timeout, source: checked_socket(  # type: ignore[attr-defined]
        address, timeout, source, allow_private=allow_private
    )
    return made


def checked_socket(
    address: tuple[str, int],
    timeout: Any,
    source: tuple[str, int] | None = None,
    *,
    allow_private: bool,
) -> socket.socket:
    """A TCP connection to `address` (host, port) made to an address the host resolves to,
    every one of them checked first: BlockedAddress when one is not allowed."""
    host, port = address
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    if not allow_private:
        for *_, sockaddr in found:
            why = address_refusal(host, str(sockaddr[0]))
            if why is not None:
                raise BlockedAddress(why)
    last: OSError | None = None
    for family, kind, proto, _, sockaddr in found:
        sock = socket.socket(family, kind, proto)
        try:
            if timeout is not socket._GLOBAL_DEFAULT_TIMEOUT:  # type: ignore[attr-defined]
                sock.settimeout(timeout)
            if source is not None:
                sock.bind(source)
            sock.connect(sockaddr)
            return sock
        except OSError as error:
            sock.close()
            last = error
    raise last or OSError(f"{host} resolves to no address")


def _first(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")[:ANSWER_BYTES]
