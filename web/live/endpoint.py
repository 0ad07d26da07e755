"""The socket endpoint: `/live?screen=…`, checked at the handshake, then fed by the hub.

A handshake must come from a page of this host (Origin) and a signed-in user who may see
the screen; it is refused (503, which the ws extension retries) until the hub has
subscribed (after a loss, until it has closed the screens it told so). An open socket
sends what the hub queues for it, all that waits in one message.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from flask import Blueprint, abort, current_app, g, request, session
from flask_babel import get_locale
from flask_sock import Sock
from simple_websocket import ConnectionClosed

from core.basics.errors import AdminiumError
from services.models import db
from web.errors import status_of
from web.live.hub import _CLOSE, _CROWDED, _SIGNED_OUT, hub
from web.live.screen import Screen
from web.screens.access import (
    SESSION_KEY,
    all_connections,
    may_pause,
    require_user,
    roles_of,
    screen_app,
    screen_connection,
    signed_in_user,
)
from web.screens.bump import VIEWS
from web.screens.samples import may_remove_sample

log = logging.getLogger(__name__)

bp = Blueprint("live", __name__)
sock = Sock()

SERVER_FAILED = 1011
"""The close code when the server side fails (Redis gone): the ws extension retries on it."""
IDLE_SECONDS = 20.0
"""How often an idle socket checks that its browser is still there."""
HEARTBEAT_SECONDS = 3.0
"""How often the server pings a page that answers pings (config LIVE_HEARTBEAT_SECONDS): a
page that hears nothing for 10 s says it is offline (static/js/heartbeat.js)."""
PING_MESSAGE = "adminium:ping"
"""The server's heartbeat; the page answers each with PONG_MESSAGE."""
PONG_MESSAGE = "adminium:pong"
"""A page's answer to a ping; the page also sends it as its socket opens, to be pinged."""
UNANSWERED_PINGS = 5
"""Pings a page may leave unanswered in a row before its socket is closed (1011): a page
behind a hung proxy or a TV whose Wi-Fi went holds a thread until then, not for hours."""
SIGNED_OUT = 4401
"""The close code when the user signed out: not retried; the page goes to sign-in."""
SIGNED_OUT_MESSAGE = "adminium:signed-out"
"""The message a socket gets just before it closes for a sign-out (static/js/live.js)."""
CROWDED = 4429
"""The close code of a sign-in's oldest socket when it opened more than the hub keeps: not
retried (the page says so and stops being live until it is reloaded)."""


def _screen() -> Screen:
    """The screen a socket opens for, checked against the signed-in user's roles."""
    args = request.args
    kind = args.get("screen", "")
    base = request.host_url.replace("ws://", "http://").replace("wss://", "https://")
    connection = args.get("connection", "")
    user = require_user()
    if kind in ("board", "row", "outbox"):
        app, roles = screen_app(connection, args.get("app", ""))
        return Screen(
            kind,
            base,
            connection,
            app.name,
            args.get("table", ""),
            args.get("key", ""),
            args.get("q", ""),
            args.get("state", ""),
            roles,
            view=args.get("view", "") if args.get("view", "") in VIEWS else "",
            user=user.id,
        )
    if kind in ("pending", "set_aside"):
        _, apps = screen_connection(connection)
        return Screen(
            kind,
            base,
            connection,
            apps=frozenset(a.name for a in apps),
            app_roles=tuple(sorted((a.name, roles_of(user, a)) for a in apps)),
            user=user.id,
        )
    if kind == "connections":
        shown = all_connections(user)
        return Screen(
            kind,
            base,
            apps=frozenset(f"{c.name}/{a.name}" for c, apps in shown for a in apps),
            pausable=frozenset(c.name for c, _ in shown if may_pause(user, c)),
            connections=frozenset(c.name for c, _ in shown),
            removable=frozenset(
                f"{c.name}/{a.name}"
                for c, apps in shown
                for a in apps
                if may_remove_sample(user, a)
            ),
            user=user.id,
        )
    abort(404)


def _refuse_signed_out() -> tuple[str, int] | None:
    """A socket needs a signed-in user who may see its screen: refused before the handshake.

    The hub subscribes before the handshake, so the refetch a screen makes once its socket
    opens sees every change after it.
    """
    if not same_origin(request.headers.get("Origin")):
        log.warning(
            "live socket refused: Origin %r is not %s", request.headers["Origin"], request.host
        )
        return "this socket is for this site's own pages", 403
    if signed_in_user() is None:
        if request.headers.get("Origin") is None:  # no browser: refused before the handshake
            log.info("live socket refused: not signed in")
            return "sign in first", 403
        # A page of this site whose session has gone (signed out meanwhile, elsewhere or while
        # its socket was away): told so and closed with 4401, so it goes to sign-in rather
        # than trying a refused handshake again forever. It is sent nothing else.
        g.live_signed_out = True
        return None
    g.live_screen = replace(_screen(), locale=str(get_locale() or "en"))
    if not hub().start():
        # Opened now, the screen would say "live" and refetch while no change can reach
        # it. Refused, the ws extension tries again (1006) until the hub has subscribed.
        log.info("live socket refused: not subscribed to Redis")
        return "live events are not available yet; retrying", 503
    g.live_losses = hub().losses  # lost again before the socket is added: it is told
    return None


def same_origin(origin: str | None) -> bool:
    """Whether a handshake comes from a page of this host (browsers always send Origin).

    A client that sends no Origin is no browser, and so no page of another site that
    rides on the user's cookie: it may open the socket as the API may be called.
    """
    if origin is None:
        return True
    try:
        host = urlsplit(origin).netloc
    except ValueError:
        return False
    return bool(host) and host.lower() == request.host.lower()


def _refusal(error: AdminiumError) -> tuple[str, int]:
    """A refused socket: the status, before any handshake."""
    log.info("live socket refused: %s", error.code)
    return error.message, status_of(error)


bp.before_request(_refuse_signed_out)
bp.register_error_handler(AdminiumError, _refusal)


@sock.route("/live", bp=bp)
def connect(ws: Any) -> None:
    """One open screen: pushes its fragments until the browser or the server goes."""
    if g.get("live_signed_out"):
        log.info("live socket of a page signed out: told so and closed")
        with contextlib.suppress(ConnectionClosed):
            ws.send(SIGNED_OUT_MESSAGE)
            ws.close(reason=SIGNED_OUT, message="signed out")
        return
    # A sign-in made before sessions carried their own id counts as its user's.
    signed_in = str(session.get(SESSION_KEY) or f"user:{g.live_screen.user}")
    number, inbox = hub().register(g.live_screen, g.live_losses, signed_in)
    # The handshake's checks read the control plane; a socket lives for hours, so its
    # connection goes back to the pool now rather than at teardown (else the pool's 15
    # connections capped a process at 15 open screens and starved every page after).
    db.session.remove()
    try:
        beat = float(current_app.config.get("LIVE_HEARTBEAT_SECONDS", HEARTBEAT_SECONDS))
        serve(ws, inbox, lambda: ws.connected, beat)
    finally:
        hub().unregister(number)


def serve(
    ws: Any,
    inbox: queue.Queue[object],
    alive: Callable[[], bool],
    heartbeat: float = HEARTBEAT_SECONDS,
) -> None:
    """Send what is queued, all that waits in one message; close with 1011 when the hub
    failed. A page that has said PONG_MESSAGE is pinged every `heartbeat` seconds and
    answers each; one that leaves UNANSWERED_PINGS in a row unanswered is closed (1011). A
    client that never says it (no screen's script) is not pinged."""
    held: object = None
    answering = False
    unanswered = 0
    next_ping = time.monotonic() + heartbeat
    while alive():
        try:
            while (said := ws.receive(timeout=0)) is not None:
                if said == PONG_MESSAGE:
                    answering, unanswered = True, 0
        except ConnectionClosed:
            return
        if answering and time.monotonic() >= next_ping:
            if unanswered >= UNANSWERED_PINGS:
                log.info("live socket closed: %s pings unanswered", unanswered)
                ws.close(reason=SERVER_FAILED, message="the page stopped answering")
                return
            try:
                ws.send(PING_MESSAGE)
            except ConnectionClosed:
                return
            unanswered += 1
            next_ping = time.monotonic() + heartbeat
        wait = min(heartbeat, IDLE_SECONDS)
        if answering:
            wait = max(0.05, next_ping - time.monotonic())
        try:
            fragment = held if held is not None else inbox.get(timeout=wait)
        except queue.Empty:
            continue
        held = None
        if isinstance(fragment, str):
            # A screen that fell behind gets what waits for it at once, not one by one.
            fragment, held = _waiting(inbox, fragment)
        if fragment is _CLOSE:
            ws.close(reason=SERVER_FAILED, message="live events lost; reconnect")
            return
        if fragment is _CROWDED:
            ws.close(reason=CROWDED, message="too many screens of this sign-in open")
            return
        if fragment is _SIGNED_OUT:
            # Said in a message first: a browser may see the close itself only as 1006.
            try:
                ws.send(SIGNED_OUT_MESSAGE)
            except ConnectionClosed:
                return
            ws.close(reason=SIGNED_OUT, message="signed out")
            return
        try:
            ws.send(fragment)
        except ConnectionClosed:
            return


def _waiting(inbox: queue.Queue[object], first: str) -> tuple[str, object]:
    """`first` and every fragment queued after it, joined; and what stopped the join (a
    close), or None."""
    parts = [first]
    while True:
        try:
            found = inbox.get_nowait()
        except queue.Empty:
            return "".join(parts), None
        if not isinstance(found, str):
            return "".join(parts), found
        parts.append(found)
