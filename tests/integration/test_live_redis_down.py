"""An open screen is told when the web's Redis goes away, in the words of the page, and told
again when it answers: a real redis-server stopped and started on its port under a served
web app, and a real socket client on an open board."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
import redis
from simple_websocket import Client, ConnectionClosed

from services.events import Publisher
from services.models import db
from services.sweeps import sweep
from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.recovery_fixtures import RedisOnPort, redis_on_port
from tests.integration.screens_fixtures import (
    add_order,
    handshake,
    installed_screens_site,
    served,
    signed_in_client,
)

pytestmark = pytest.mark.integration
BOARD_SOCKET = "/live?screen=board&connection=venue&app=venue&table=orders&q=&state="
TOLD_WITHIN = 3.0
"""Seconds a screen may take to be told that Redis went away, or came back."""
WORDS = "<strong>Redis does not answer:</strong>"
CLOCK = 'class="clock-state {kind} clock-state-venue"'
"""The header's clock state of the venue, pushed (its kind: running, redis...)."""


@pytest.fixture(scope="module")
def own_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisOnPort]:
    """A redis-server of this module's own, to stop and start."""
    with redis_on_port(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture(scope="module")
def site(server_database_url: str, own_redis: RedisOnPort) -> Iterator[Site]:
    """The venue site on that Redis."""
    with installed_screens_site(server_database_url, own_redis.url) as built:
        yield built


@pytest.fixture(scope="module")
def host(site: Site) -> Iterator[str]:
    """The site served by a real threaded server: its `host:port`."""
    with served(site.app) as port:
        yield f"127.0.0.1:{port}"


@pytest.fixture(scope="module")
def cookie(site: Site) -> str:
    """A manager's session cookie (signed in while Redis answers: the throttle counts there)."""
    found = signed_in_client(site, "manager").get_cookie("session")
    assert found is not None
    return f"session={found.value}"


def open_board(host: str, cookie: str, path: str = BOARD_SOCKET) -> Client:
    return Client.connect(f"ws://{host}{path}", headers={"Cookie": cookie})


def heard(socket: Client, wanted: list[str], within: float) -> tuple[str, float]:
    """What the socket said until it had said all of `wanted` (within `within` seconds), and
    when it had."""
    deadline = time.monotonic() + within
    said = ""
    while (left := deadline - time.monotonic()) > 0:
        said += socket.receive(timeout=left) or ""
        if all(words in said for words in wanted):
            return said, time.monotonic()
    raise AssertionError(f"not all of {wanted!r} within {within} s: {said[:300]!r}")


def closed_with(socket: Client, within: float) -> int:
    """The code the server closes `socket` with, within `within` seconds, after whatever
    else it says first."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            socket.receive(timeout=max(0.0, deadline - time.monotonic()))
        except ConnectionClosed as closed:
            return int(closed.reason)
    raise AssertionError(f"not closed within {within} s")


def test_an_open_board_is_told_redis_does_not_answer_and_redrawn_when_it_does(
    site: Site, host: str, cookie: str, own_redis: RedisOnPort, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pickup Tue 7 July 12:30 BST: cancelled at 21:00 BST = 20:00 UTC; swept at 20:01 UTC.
    # The board's clock that evening: the cancelled column shows Tuesday's orders (a final
    # column shows the venue's day), so the pushed card lands in it.
    monkeypatch.setattr(site.clock, "now", at("2026-07-07 20:01"))
    key = add_order(site, at("2026-07-07 11:30"))
    board = open_board(host, cookie)
    cards = open_board(host, cookie, "/live?screen=connections")
    try:
        own_redis.stop()
        stopped = time.monotonic()
        told, at_told = heard(board, [WORDS, CLOCK.format(kind="redis")], TOLD_WITHIN)
        assert 'id="live-banner"' in told and 'role="alert"' in told
        assert "no screen is told of a change until it does" in told
        assert "drawn again when Redis answers" in told
        assert "clock waiting, Redis unreachable" in told  # the header says it too
        assert at_told - stopped < TOLD_WITHIN
        assert board.connected  # the socket stays open while Redis is away: the words stay
        # The connections screen's card says it as it does on a page load.
        card_words = '<p class="health-words" role="alert"><strong>Redis does not answer:'
        heard(cards, [WORDS, 'id="connection-venue"', card_words], TOLD_WITHIN)

        started = own_redis.start()
        # Told again: the header's clock as it is now, the words taken away, then the socket
        # closed with 1011, so the page reopens it (subscribed again) and refetches the board.
        cleared, at_cleared = heard(
            board, [CLOCK.format(kind="running"), 'id="live-banner"'], TOLD_WITHIN + 5.0
        )
        assert WORDS not in cleared and "Redis unreachable" not in cleared
        assert at_cleared - started < TOLD_WITHIN + 2.0
        with pytest.raises(ConnectionClosed) as closed:
            board.receive(timeout=TOLD_WITHIN)
        assert closed.value.reason == 1011
        # So is the connections screen's, after its own words. (Closing it here instead would
        # race the client's own close of the socket under it: a bad file descriptor.)
        assert closed_with(cards, TOLD_WITHIN + 5.0) == 1011
    finally:
        for socket in (board, cards):
            if socket.connected:
                socket.close()

    # The reopened board hears the next move again.
    reopened = open_board(host, cookie)
    client = redis.Redis.from_url(own_redis.url)
    try:
        with site.app.app_context():
            sweep(db.session, "venue", now=at("2026-07-07 20:01"), publisher=Publisher(client))
        card, _ = heard(reopened, [f'id="row-orders-{key}" data-state="cancelled"'], 2.0)
        assert WORDS not in card
    finally:
        reopened.close()
        client.close()


def test_a_board_opened_while_redis_answers_is_told_nothing(host: str, cookie: str) -> None:
    board = open_board(host, cookie)
    try:
        assert board.receive(timeout=0.5) is None
    finally:
        if board.connected:
            board.close()


def test_no_socket_opens_between_the_hub_subscribing_again_and_the_screens_told(
    site: Site, host: str, cookie: str, own_redis: RedisOnPort, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The hub, subscribed again, pushes each shown connection's clock state and then closes
    # every socket it told Redis was down (1011). A socket whose handshake came between the
    # two was closed with them: accepted, then dropped, its reopen and refetch wasted. The
    # pushes are held here, so the window is as long as the test needs: a handshake in it is
    # refused (503, which the page retries).
    live = site.app.extensions["adminium.live"]
    armed, entered, release = threading.Event(), threading.Event(), threading.Event()
    pushing = live.push_clock_states

    def held() -> None:
        if armed.is_set():
            entered.set()
            assert release.wait(30)
        pushing()

    monkeypatch.setattr(live, "push_clock_states", held)
    board = open_board(host, cookie)
    try:
        own_redis.stop()
        # Told, the header's clock state too (the push of Redis going): the next push is the
        # one after subscribing again.
        heard(board, [WORDS, CLOCK.format(kind="redis")], TOLD_WITHIN)
        armed.set()
        own_redis.start()
        assert entered.wait(TOLD_WITHIN + 5.0), "the hub did not subscribe again"
        assert handshake(host, BOARD_SOCKET, cookie) == 503
        release.set()
        assert closed_with(board, TOLD_WITHIN + 5.0) == 1011
    finally:
        release.set()
        if board.connected:
            board.close()
    # Once the screens are told, a socket opens and stays open.
    reopened = open_board(host, cookie)
    try:
        assert reopened.receive(timeout=0.5) is None
        assert reopened.connected
    finally:
        reopened.close()
