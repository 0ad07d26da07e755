"""The live socket: a signed-in board hears a timed move (how soon is bench/live.py's
figure: the waits here are deadlines for a push that never comes, not a speed claim); a row
the sweep sets aside joins an open set-aside list; removed sample rows leave open boards;
signed out is refused; a failed server side closes with a code the ws extension reconnects
on."""

from __future__ import annotations

import http.client
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis
from flask.testing import FlaskClient
from simple_websocket import Client, ConnectionClosed

from core.samples.data import add_sample
from core.samples.files import read_sample
from services.events import Publisher
from services.models import db
from services.sweeps import sweep
from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import add_order, csrf_of, forbid_cancel_with_note
from web.live import endpoint as live

pytestmark = pytest.mark.integration
BOARD_SOCKET = "/live?screen=board&connection=venue&app=venue&table=orders&q=&state="
ASIDE_SOCKET = "/live?screen=set_aside&connection=venue"
PUSH_DEADLINE = 15.0
"""Seconds after which a push that has not come is a failure (a loaded machine's push takes
well under one; bench/live.py measures it)."""


def cookie_of(client: FlaskClient) -> str:
    """The session cookie header of a signed-in test client."""
    cookie = client.get_cookie("session")
    assert cookie is not None
    return f"session={cookie.value}"


def test_open_board_hears_the_timed_move(
    screens_site: Site,
    signed_in: Callable[[str], FlaskClient],
    base_url: str,
    redis_url: str,
) -> None:
    # Pickup Tue 7 July 12:30 BST: cancelled at 21:00 BST = 20:00 UTC; swept at 20:01 UTC.
    key = add_order(screens_site, at("2026-07-07 11:30"))
    socket = Client.connect(
        f"ws://{base_url}{BOARD_SOCKET}", headers={"Cookie": cookie_of(signed_in("staff"))}
    )
    client = redis.Redis.from_url(redis_url)
    try:
        started = time.monotonic()
        with screens_site.app.app_context():
            report = sweep(
                db.session, "venue", now=at("2026-07-07 20:01"), publisher=Publisher(client)
            )
        assert [d.key for d in report.moved] == [key]
        message = ""
        while f"row-orders-{key}" not in message:
            message = socket.receive(timeout=PUSH_DEADLINE) or ""
            assert time.monotonic() - started < PUSH_DEADLINE, "no push of the move"
    finally:
        socket.close()
        client.close()
    assert f'<div id="row-orders-{key}" hx-swap-oob="delete"></div>' in message
    assert 'hx-swap-oob="afterbegin:#column-orders-cancelled"' in message
    assert f'id="row-orders-{key}" data-state="cancelled"' in message
    assert 'id="count-orders-cancelled" hx-swap-oob="true"' in message


def receive_until(socket: Client, wanted: str, started: float, bound: float = PUSH_DEADLINE) -> str:
    """The first message holding `wanted`, read within `bound` seconds of `started`."""
    message = ""
    while wanted not in message:
        message = socket.receive(timeout=bound) or ""
        assert time.monotonic() - started < bound, f"no {wanted!r} within {bound} s"
    return message


def test_row_the_sweep_sets_aside_joins_the_open_list_and_its_card_says_so(
    screens_site: Site,
    signed_in: Callable[[str], FlaskClient],
    base_url: str,
    redis_url: str,
) -> None:
    # The venue refuses cancelling an order with a note. Pickup Wed 8 July 12:30 BST:
    # due at closing, 21:00 BST = 20:00 UTC; the 20:01 UTC sweep is refused and sets it aside.
    forbid_cancel_with_note(screens_site)
    key = add_order(screens_site, at("2026-07-08 11:30"), note="allergy: nuts")
    cookie = {"Cookie": cookie_of(signed_in("staff"))}
    aside = Client.connect(f"ws://{base_url}{ASIDE_SOCKET}", headers=cookie)
    board = Client.connect(f"ws://{base_url}{BOARD_SOCKET}", headers=cookie)
    client = redis.Redis.from_url(redis_url)
    try:
        started = time.monotonic()
        with screens_site.app.app_context():
            report = sweep(
                db.session, "venue", now=at("2026-07-08 20:01"), publisher=Publisher(client)
            )
        assert [r.due.key for r in report.set_aside] == [key]
        listed = receive_until(aside, f'id="aside-orders-{key}"', started)
        card = receive_until(board, f'id="row-orders-{key}"', started)
    finally:
        aside.close()
        board.close()
        client.close()
    # Any earlier item of the row goes; the new one joins the end of the list (whose
    # "No row is set aside" line the stylesheet hides while any row is there).
    assert f'<li id="aside-orders-{key}" hx-swap-oob="delete"></li>' in listed
    assert '<ul hx-swap-oob="beforeend:#set-aside-list">' in listed
    assert f'<li class="aside" id="aside-orders-{key}">' in listed
    # In plain words, the code small; the database's own sentence under its summary.
    assert (
        '<span class="refusal-words">Note breaks a rule of the table. Change Note, then try'
        ' again.</span> <code class="code">VALUE_REFUSED</code>' in listed
    )
    assert "ck_cancelled_without_note" in listed
    # Set aside at 20:01 UTC until 21:01 UTC; the web's clock reads Fri 10 July, past that
    # hour, so the row is tried again by the next minute's sweep.
    assert "tried again by the next minute" in listed
    # The board's card is re-rendered where it stays (placed), marked set aside.
    assert 'hx-swap-oob="afterbegin:#column-orders-placed"' in card
    # The pushed card says why too (before issue 35 a push's card said only until when).
    assert (
        '<span class="badge aside"><span class="head">set aside until 22:01:</span>'
        ' <span class="then">Note breaks a rule of the table</span></span>' in card
    )


def test_removed_sample_rows_leave_an_open_board(
    screens_site: Site,
    signed_in: Callable[[str], FlaskClient],
    base_url: str,
) -> None:
    sample = read_sample({"app": "venue", "rows": {"orders": [{"pickup_at": {"@in": "PT5H"}}]}})
    (added,) = add_sample(screens_site.store(), sample, now=at("2026-07-10 09:00"))
    real = add_order(screens_site, at("2026-07-10 14:00"))
    manager = signed_in("manager")
    board = Client.connect(
        f"ws://{base_url}{BOARD_SOCKET}", headers={"Cookie": cookie_of(signed_in("staff"))}
    )
    try:
        token = csrf_of(manager.get("/connections").text)
        started = time.monotonic()
        answer = manager.post(
            "/connections/venue/apps/venue/sample/remove",
            headers={"X-CSRFToken": token, "HX-Request": "true"},
        )
        assert answer.status_code == 200, answer.text
        message = receive_until(board, f'id="row-orders-{added.key}"', started)
    finally:
        board.close()
    # The card is deleted and not put back anywhere; the real order is not named.
    assert f'<div id="row-orders-{added.key}" hx-swap-oob="delete"></div>' in message
    assert "<article" not in message
    assert f"row-orders-{real}" not in message


def test_signed_out_socket_is_refused_before_the_handshake(base_url: str) -> None:
    # A browser's opening handshake, sent by hand: refused with 403, never upgraded (101).
    host, port = base_url.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        conn.request(
            "GET",
            BOARD_SOCKET,
            headers={
                "Upgrade": "websocket",
                "Connection": "Upgrade",
                "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
                "Sec-WebSocket-Version": "13",
            },
        )
        assert conn.getresponse().status == 403
    finally:
        conn.close()


def test_a_page_whose_session_has_gone_is_told_signed_out_and_closed_4401(base_url: str) -> None:
    # A page of this site reconnecting after its session went (signed out elsewhere while its
    # socket was away): a refused handshake would be tried again forever ("reconnecting…");
    # it is told it is signed out and closed with 4401, which sends it to sign-in. Nothing else.
    # (simple_websocket's client names the host without its port; the Origin matches it.)
    host = base_url.split(":")[0]
    url = f"ws://{base_url}{BOARD_SOCKET}"
    page = Client.connect(url, headers={"Origin": f"http://{host}"})
    messages = []
    with pytest.raises(ConnectionClosed):
        while True:
            messages.append(page.receive(timeout=PUSH_DEADLINE))
            assert messages[-1] is not None, f"no close within {PUSH_DEADLINE:g} s"
    assert messages == ["adminium:signed-out"]
    assert page.close_reason == 4401


class FakeSocket:
    """A socket that records how it was closed."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.closed: tuple[Any, Any] | None = None

    def send(self, data: str) -> None:
        self.sent.append(data)

    def receive(self, timeout: float | None = None) -> str | None:
        """What the page said: nothing (a client that never answers pings)."""
        return None

    def close(self, reason: Any = None, message: Any = None) -> None:
        self.closed = (reason, message)


def test_a_failed_server_side_closes_with_1011_which_the_ws_extension_retries() -> None:
    inbox: queue.Queue[object] = queue.Queue()
    inbox.put("<div id='x'></div>")
    inbox.put(live._CLOSE)
    fake = FakeSocket()
    live.serve(fake, inbox, lambda: fake.closed is None)
    assert fake.sent == ["<div id='x'></div>"]
    assert fake.closed is not None and fake.closed[0] == 1011
    # The vendored extension reconnects on these codes only (static/vendor/ws.js).
    assert "[1006, 1011, 1012, 1013]" in Path("static/vendor/ws.js").read_text()


class AnsweringSocket(FakeSocket):
    """A page that says it answers pings as it opens, then answers `answers` pings."""

    def __init__(self, answers: int) -> None:
        super().__init__()
        self.said = ["adminium:pong"]
        self.answers = answers

    def send(self, data: str) -> None:
        super().send(data)
        if data == "adminium:ping" and self.answers > 0:
            self.answers -= 1
            self.said.append("adminium:pong")

    def receive(self, timeout: float | None = None) -> str | None:
        return self.said.pop(0) if self.said else None


def test_a_page_that_answers_is_pinged_and_one_that_stops_answering_is_closed() -> None:
    inbox: queue.Queue[object] = queue.Queue()
    page = AnsweringSocket(answers=3)
    live.serve(page, inbox, lambda: page.closed is None, heartbeat=0.01)
    # Three pings answered, then five unanswered in a row: closed with 1011 (retried).
    assert page.sent == ["adminium:ping"] * 8
    assert page.closed == (1011, "the page stopped answering")


def test_a_client_that_never_answers_is_not_pinged() -> None:
    inbox: queue.Queue[object] = queue.Queue()
    client = FakeSocket()
    threading.Timer(0.3, inbox.put, [live._CLOSE]).start()
    live.serve(client, inbox, lambda: client.closed is None, heartbeat=0.01)
    assert client.sent == []
    assert client.closed is not None and client.closed[0] == 1011
