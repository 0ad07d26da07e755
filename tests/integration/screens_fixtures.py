"""The screens' tests' helpers: the venue site with passwords, signed-in clients, orders.

The fixtures over them (`screens_site`, `signed_in`) are in conftest.py.
"""

from __future__ import annotations

import http.client
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.serving import WSGIRequestHandler, make_server

from services.models import db
from services.users import add_user
from tests.integration.api_fixtures import Site, installed_site

_BODY = "adminium.tests.body"
"""Where `_keeping_body` leaves the answer's body in the request's environ."""


def _keeping_body(app: Any) -> Any:
    """The app, leaving each answer's body in its environ for `_ClosingHandler`."""

    def wsgi(environ: Any, start_response: Any) -> Any:
        body = app(environ, start_response)
        environ[_BODY] = body
        return body

    return wsgi


class _ClosingHandler(WSGIRequestHandler):
    """Werkzeug's handler, closing the answer when the browser went away. Its development
    server closes an answer only after reading what is left of the request, and a browser
    that went away meanwhile makes that read raise first: the answer's file (a static
    file, a 304's) was left open, an unclosed-file warning at a later test's teardown (red
    in a clean-clone run of 60f91e4)."""

    def connection_dropped(self, error: BaseException, environ: Any = None) -> None:
        body = (environ or {}).get(_BODY)
        close = getattr(body, "close", None)
        if close is not None:
            close()
        super().connection_dropped(error, environ)


@contextmanager
def served(app: Flask) -> Iterator[int]:
    """The app served by a real threaded server on a free loopback port (websockets and
    real HTTP receivers need one); its port. Shut down on leaving."""
    server = make_server(
        "127.0.0.1", 0, _keeping_body(app), threaded=True, request_handler=_ClosingHandler
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_port
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


PASSWORD = "correct horse battery"
"""Every test user's password."""

CHECK_NO_NOTE = (
    "ALTER TABLE public.orders ADD CONSTRAINT ck_cancelled_without_note "
    "CHECK (status <> 'cancelled' OR note IS NULL) NOT VALID"
)
"""A rule of the venue's own database: an order with a note may not be cancelled."""

NEEDS_NOTE = (
    "ALTER TABLE public.orders ADD CONSTRAINT cancelled_needs_note "
    "CHECK (status <> 'cancelled' OR note IS NOT NULL) NOT VALID;"
    "COMMENT ON CONSTRAINT cancelled_needs_note ON public.orders IS 'must be filled when cancelled'"
)
"""The venue's own rule, with its own words: a cancelled order must carry a note."""


def give_passwords(site: Site) -> None:
    """Let the four test users sign in with PASSWORD."""
    with site.app.app_context():
        for email, role, app_ref in (
            ("manager@venue.test", "manager", "venue/venue"),
            ("staff@venue.test", "staff", "venue/venue"),
            ("clerk@other.test", "clerk", "venue/other"),
            ("admin@venue.test", "admin", None),
        ):
            add_user(db.session, email, role, app_ref, password=PASSWORD)


def csrf_of(html: str) -> str:
    """The CSRF token a page carries."""
    found = re.search(r'name="csrf_token" value="([^"]+)"', html) or re.search(
        r'"X-CSRFToken": "([^"]+)"', html
    )
    assert found is not None, "the page carries no CSRF token"
    return found.group(1)


def sign_in(client: FlaskClient, email: str) -> None:
    """Sign a test client in through the form."""
    page = client.get("/signin")
    answer = client.post(
        "/signin",
        data={"email": email, "password": PASSWORD, "csrf_token": csrf_of(page.text)},
    )
    assert answer.status_code == 302, answer.text


def add_order(site: Site, pickup_at: datetime, **values: Any) -> int:
    """An order straight into the venue's database (status placed unless given)."""
    return int(site.insert("orders", **{"status": "placed", "pickup_at": pickup_at, **values}))


@contextmanager
def installed_screens_site(server_url: str, redis_url: str) -> Iterator[Site]:
    """The venue site on two new databases, its users able to sign in; dropped afterwards."""
    with installed_site(server_url, redis_url) as site:
        give_passwords(site)
        yield site


def signed_in_client(site: Site, user: str) -> FlaskClient:
    """A fresh client signed in as one of the test users (`manager`, `clerk`, …)."""
    client = site.app.test_client()
    sign_in(client, f"{user}@{'other' if user == 'clerk' else 'venue'}.test")
    return client


def forbid_cancel_with_note(site: Site) -> None:
    """Add the venue's own CHECK that refuses cancelling an order that has a note."""
    with site.store().engine.begin() as conn:
        conn.execute(sa.text(CHECK_NO_NOTE))


def handshake(host: str, path: str, cookie: str, origin: str | None = None) -> int:
    """A browser's opening handshake for the socket at `path`, sent by hand; the status it
    gets (101: opened). simple_websocket's client leaves its socket open when refused."""
    name, port = host.split(":")
    conn = http.client.HTTPConnection(name, int(port), timeout=10)
    headers = {
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version": "13",
        "Cookie": cookie,
    }
    if origin is not None:
        headers["Origin"] = origin
    try:
        conn.request("GET", path, headers=headers)
        return conn.getresponse().status
    finally:
        conn.close()
