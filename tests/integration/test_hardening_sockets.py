"""The live socket: only pages of this site may open it (Origin), and it opens only while
the web process is subscribed to Redis, so its refetch on open misses no change."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from simple_websocket import Client, ConnectionClosed

from services.models import db
from tests.integration.api_fixtures import Site
from tests.integration.screens_fixtures import handshake, served, sign_in
from web import create_app

pytestmark = pytest.mark.integration

SOCKET = "/live?screen=connections"


def serve(app: Flask) -> Iterator[str]:
    """An app served by a real threaded server (websockets need one): host:port."""
    with served(app) as port:
        yield f"127.0.0.1:{port}"


@pytest.fixture(scope="module")
def base_url(screens_site: Site) -> Iterator[str]:
    """The venue site, served."""
    yield from serve(screens_site.app)


def cookie_of(client: FlaskClient) -> str:
    """The session cookie header of a signed-in test client."""
    cookie = client.get_cookie("session")
    assert cookie is not None
    return f"session={cookie.value}"


@pytest.mark.parametrize(
    "origin",
    ["http://evil.example", "http://127.0.0.1:1", "null", "http://127.0.0.1.evil.example"],
)
def test_a_socket_from_another_origin_is_refused(
    signed_in: Callable[[str], FlaskClient], base_url: str, origin: str
) -> None:
    assert handshake(base_url, SOCKET, cookie_of(signed_in("staff")), origin) == 403


@pytest.mark.parametrize("origin", ["http://{host}", "HTTPS://{host}", None])
def test_a_socket_from_this_site_opens(
    signed_in: Callable[[str], FlaskClient], base_url: str, origin: str | None
) -> None:
    # No Origin: no browser, so no other site's page riding on the cookie.
    sent = origin.format(host=base_url) if origin else None
    assert handshake(base_url, SOCKET, cookie_of(signed_in("staff")), sent) == 101


def test_no_socket_opens_while_redis_is_away(
    screens_site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same users, and a Redis socket nobody listens on: the hub cannot subscribe.
    app = create_app(
        {
            "TESTING": True,
            "DATABASE_URL": screens_site.app.config["DATABASE_URL"],
            "REDIS_URL": f"unix://{tmp_path}/nobody.sock",
        }
    )
    client = app.test_client()
    sign_in(client, "staff@venue.test")
    try:
        for host in serve(app):
            # Opened, the screen would say "live" and refetch while no change can reach it.
            assert handshake(host, SOCKET, cookie_of(client), f"http://{host}") == 503
    finally:
        app.extensions["adminium.live"].stopping.set()
        with app.app_context():
            db.engine.dispose()


def test_a_sign_in_keeps_20_sockets_open_and_the_oldest_is_closed_for_a_21st(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], base_url: str
) -> None:
    hub = screens_site.app.extensions["adminium.live"]
    cookie = {"Cookie": cookie_of(signed_in("staff"))}
    elsewhere = Client.connect(
        f"ws://{base_url}{SOCKET}", headers={"Cookie": cookie_of(signed_in("staff"))}
    )
    opened = [Client.connect(f"ws://{base_url}{SOCKET}", headers=cookie) for _ in range(21)]
    try:
        # The oldest is told why, then closed with 4429 (which the ws extension does not retry).
        told = opened[0].receive(timeout=10)
        assert "more than 20 screens of this sign-in are open live" in told
        with pytest.raises(ConnectionClosed) as closed:
            opened[0].receive(timeout=10)
        assert closed.value.reason == 4429
        # The 20 newest stay registered, and so does the same user's other sign-in.
        assert max(len(numbers) for numbers in hub.sessions.values()) == 20
        assert all(socket.connected for socket in (*opened[1:], elsewhere))
    finally:
        for socket in (*opened, elsewhere):
            if socket.connected:
                socket.close()
