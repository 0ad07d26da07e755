"""Live screens: a flask-sock endpoint, and one Redis subscription per web process.

A screen opens `/live?screen=…` (htmx's ws extension). The hub's thread listens to every
connection's row events on Redis and, for each open screen that shows the changed row,
renders the screen's own partials as out-of-band swaps and queues them to its socket.
Pub/sub keeps nothing while a screen is away, so each screen refetches its state when its
socket (re)opens. When Redis fails, every socket is closed with 1011, a code the ws
extension reconnects on; a handshake is refused (503, which the extension retries) until
the hub has subscribed again, so a screen opens, says "live" and refetches only when no
change can slip by unpushed. A handshake must come from a page of this host (Origin).

The hub also watches the clock: every few seconds it reads the sweep health of each
connection an open screen shows and pushes the stalled banner when it changes. A web
process is what the person is looking at, so the check lives here rather than in the tick:
a dead worker or clock process could never publish that it has stopped. Signing out closes
the user's open sockets (4401, which the ws extension does not retry; the page reloads and
goes to sign-in), in every web process, through the same Redis subscription; so do a new
password, a role given or taken away and a user removed (services/users.py).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import queue
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

import redis
from flask import Blueprint, Flask, abort, current_app, g, request
from flask_sock import Sock
from simple_websocket import ConnectionClosed

from core.errors import AdminiumError
from services import redis_client
from services.connections import get_connection
from services.events import CHANNEL_PREFIX
from services.models import db
from web.errors import status_of
from web.screens import pushes
from web.screens.access import (
    all_connections,
    may_pause,
    require_user,
    roles_of,
    screen_app,
    screen_connection,
    signed_in_user,
)
from web.screens.clock_health import stall_of
from web.screens.outbox import push_outbox
from web.screens.samples import may_remove_sample

log = logging.getLogger(__name__)

bp = Blueprint("live", __name__)
sock = Sock()

SERVER_FAILED = 1011
"""The close code when the server side fails (Redis gone): the ws extension retries on it."""
IDLE_SECONDS = 20.0
"""How often an idle socket checks that its browser is still there."""
RETRY_SECONDS = (0.5, 1.0, 2.0, 5.0)
"""How long the hub waits before subscribing again after Redis failed."""
SIGNED_OUT = 4401
"""The close code when the user signed out: not retried; the page goes to sign-in."""
SIGNED_OUT_MESSAGE = "adminium:signed-out"
"""The message a socket gets just before it closes for a sign-out (static/js/live.js)."""
WATCH_SECONDS = 15.0
"""How often the hub checks the sweep health of the connections open screens show
(config LIVE_WATCH_SECONDS)."""
COALESCE_SECONDS = 0.25
"""The longest the events of a burst wait to go out together (config LIVE_COALESCE_SECONDS):
each open screen gets one message per interval carrying every change since the last."""
QUIET_SECONDS = 0.05
"""A pause this long between events ends a burst: a lone event goes out at once."""
_CLOSE = object()
_SIGNED_OUT = object()


@dataclass(frozen=True)
class Screen:
    """What one open socket shows: its kind, where, its filters, and who looks (roles)."""

    kind: str
    base_url: str
    connection: str = ""
    app: str = ""
    table: str = ""
    key: str = ""
    q: str = ""
    state: str = ""
    roles: frozenset[str] = frozenset()
    apps: frozenset[str] = frozenset()
    pausable: frozenset[str] = frozenset()
    connections: frozenset[str] = frozenset()
    removable: frozenset[str] = frozenset()
    app_roles: tuple[tuple[str, frozenset[str]], ...] = ()
    user: int = 0
    """Who looks (the session's user id): signing out closes their sockets."""

    def shows(self, event: Mapping[str, Any]) -> bool:
        """Whether this screen shows the row (or the connection) an event names."""
        connection = str(event.get("connection", ""))
        if self.kind == "connections":
            return connection in self.connections
        if connection != self.connection:
            return False
        if self.kind == "outbox" or "outbox" in event:
            return self.kind == "outbox" and event.get("outbox") == self.app
        if "paused" in event or "stalled" in event:
            return True
        if self.kind in ("pending", "set_aside"):
            return str(event.get("app")) in self.apps
        same_table = event.get("app") == self.app and event.get("table") == self.table
        if self.kind == "row":
            return same_table and str(event.get("key")) == self.key
        return same_table

    def render_all(self, events: Sequence[Mapping[str, Any]]) -> str:
        """The out-of-band fragments that bring this screen up to date with a burst of
        events, in one message: a board's row events read and drawn together
        (`pushes.push_boards`), each other event once (the same event twice, once)."""
        fragments: list[str] = []
        rows = [e for e in events if self.kind == "board" and _row_event(e)]
        if rows:
            fragments.append(pushes.push_boards(rows, self.q, self.state))
        seen: set[str] = set()
        for event in events:
            if self.kind == "board" and _row_event(event):
                continue
            same = json.dumps(event, sort_keys=True, default=str)
            if same not in seen:
                seen.add(same)
                fragments.append(self.render(event))
        return "".join(fragments)

    def render(self, event: Mapping[str, Any]) -> str:
        """The out-of-band fragment that brings this screen up to date."""
        if self.kind == "connections":
            name = str(event["connection"])
            return pushes.push_connection(name, name in self.pausable, self.apps, self.removable)
        if "paused" in event:
            return pushes.push_paused(self.connection)
        if "stalled" in event:
            return pushes.push_stalled(self.connection, event["stalled"])
        if self.kind == "outbox":
            return push_outbox(event)
        if self.kind == "board":
            return pushes.push_board(event, self.q, self.state)
        if self.kind == "row":
            return pushes.push_row(event, self.roles)
        if self.kind == "pending":
            return pushes.push_pending(event)
        return pushes.push_set_aside(event, dict(self.app_roles))


def _row_event(event: Mapping[str, Any]) -> bool:
    """Whether an event is a row's change (not a pause, a stall or an outbox's)."""
    return not ({"paused", "stalled", "outbox"} & event.keys()) and "table" in event


class Hub:
    """The web process's one Redis subscription, fanning events out to the open sockets.

    Events are pushed in bursts: those that arrive within QUIET_SECONDS of each other (at
    most COALESCE_SECONDS' worth) are rendered together for each distinct screen and sent
    as one message, so a sweep moving hundreds of rows sends each screen a few messages,
    not hundreds, and reads what every event of the burst shares once."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self.sockets: dict[int, tuple[Screen, queue.Queue[object]]] = {}
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None
        self.subscribed = threading.Event()
        self.stopping = threading.Event()
        self.watcher: threading.Thread | None = None
        self.stalls: dict[str, int | None] = {}
        self.pending: list[Mapping[str, Any]] = []
        self.pending_since = 0.0

    def start(self, wait: float = 2.0) -> bool:
        """Listen to Redis from the first socket on; whether the subscription holds."""
        if not self.app.config.get("REDIS_URL"):
            return True
        with self.lock:
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self.listen, name="live-hub", daemon=True)
                self.thread.start()
            if self.watcher is None or not self.watcher.is_alive():
                self.watcher = threading.Thread(target=self.watch, name="live-clock", daemon=True)
                self.watcher.start()
        return self.subscribed.wait(wait)

    def stop(self, wait: float = 3.0) -> None:
        """Stop listening and watching (the threads end within a second or so)."""
        self.stopping.set()
        for thread in (self.thread, self.watcher):
            if thread is not None:
                thread.join(wait)

    def register(self, screen: Screen) -> tuple[int, queue.Queue[object]]:
        """Add an open socket."""
        inbox: queue.Queue[object] = queue.Queue()
        with self.lock:
            number = id(inbox)
            self.sockets[number] = (screen, inbox)
        return number, inbox

    def unregister(self, number: int) -> None:
        """Forget a closed socket."""
        with self.lock:
            self.sockets.pop(number, None)

    def listen(self) -> None:
        """Subscribe to every connection's events; on a Redis failure close every socket."""
        failures = 0
        while True:
            try:
                self._listen_once()
                return
            except redis.RedisError as error:
                if self.subscribed.is_set():
                    failures = 0  # it had held: Redis is likely back soon
                self.subscribed.clear()
                if self.stopping.is_set():
                    return
                log.warning(
                    "live events lost: Redis failed: %s: %s", error.__class__.__name__, error
                )
                self.close_all()
                time.sleep(RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)])
                failures += 1

    def _listen_once(self) -> None:
        client = redis_client.connect(self.app.config["REDIS_URL"])
        pubsub = client.pubsub()
        pubsub.psubscribe(f"{CHANNEL_PREFIX}*")
        coalesce = float(self.app.config.get("LIVE_COALESCE_SECONDS", COALESCE_SECONDS))
        try:
            while not self.stopping.is_set():
                message = pubsub.get_message(timeout=QUIET_SECONDS if self.pending else 1.0)
                if message is None:
                    self.flush()  # the burst is over (or there was none)
                    continue
                if message["type"] == "psubscribe":
                    # Redis confirmed the subscription: from here on no event is missed,
                    # so sockets may open (and their screens refetch).
                    self.subscribed.set()
                    log.info("live events: subscribed to %s*", CHANNEL_PREFIX)
                elif message["type"] == "pmessage":
                    self.deliver(message["data"])
                if self.pending and time.monotonic() - self.pending_since >= coalesce:
                    self.flush()
        finally:
            self.pending = []  # a failed subscription closes every socket: they refetch
            pubsub.close()
            client.close()

    def deliver(self, data: bytes | str) -> None:
        """Render the event for each distinct screen that shows it; queue it to its sockets."""
        try:
            event = json.loads(data)
        except ValueError:
            log.warning("live event is not JSON: %r", data[:200])
            return
        if "signed_out" in event:
            self.sign_out(event["signed_out"], str(event.get("why", "signed out")))
            return
        if not self.pending:
            self.pending_since = time.monotonic()
        self.pending.append(event)

    def flush(self) -> None:
        """Push the events of the burst so far (see the class)."""
        events, self.pending = self.pending, []
        if events:
            self.fan_out_all(events)

    def sign_out(self, user: object, why: str = "signed out") -> None:
        """Close every open socket of a user who signed out, got a new password or a role
        change, or was removed (`why`): the page reloads, as the ws extension does not
        retry 4401, and shows sign-in or the user's roles as they are now."""
        with self.lock:
            inboxes = [inbox for screen, inbox in self.sockets.values() if screen.user == user]
        for inbox in inboxes:
            inbox.put(_SIGNED_OUT)
        log.info("live sockets of user %s closed: %s (%s)", user, why, len(inboxes))

    def watch(self) -> None:
        """Every few seconds, push the stalled banner of each shown connection that changed."""
        while not self.stopping.wait(self.app.config.get("LIVE_WATCH_SECONDS", WATCH_SECONDS)):
            try:
                self.check_clocks()
            except Exception as error:  # the next check tries again; the screens stay up
                log.warning("live clock check failed: %s: %s", error.__class__.__name__, error)

    def check_clocks(self) -> None:
        """Read each shown connection's sweep health; push a change of stalled minutes."""
        with self.lock:
            screens = [screen for screen, _ in self.sockets.values()]
        names = {s.connection for s in screens if s.connection}
        names |= {name for s in screens for name in s.connections}
        if not names:
            return
        with self.app.app_context():
            try:
                found = {name: stall_of(get_connection(db.session, name)) for name in names}
            finally:
                db.session.remove()
        for name, stalled in sorted(found.items()):
            if name not in self.stalls or self.stalls[name] != stalled:
                self.stalls[name] = stalled
                if stalled is not None:
                    log.warning("connection %s: timed moves stalled for %s min", name, stalled)
                self.fan_out({"connection": name, "stalled": stalled})

    def fan_out(self, event: Mapping[str, Any]) -> None:
        """Render an event for each distinct screen that shows it; queue it to its sockets."""
        self.fan_out_all([event])

    def fan_out_all(self, events: Sequence[Mapping[str, Any]]) -> None:
        """Render a burst of events once for each distinct screen that shows any of them
        (those it shows, in order); queue the one message to its sockets."""
        with self.lock:
            sockets = list(self.sockets.values())
        by_screen: dict[Screen, tuple[list[queue.Queue[object]], list[Mapping[str, Any]]]] = {}
        shown: dict[Screen, list[Mapping[str, Any]]] = {}
        for screen, inbox in sockets:
            # Who looks matters to a sign-out, not to the fragment: the boards of one
            # table open by many people with the same roles are rendered once.
            same = replace(screen, user=0)
            if same not in shown:
                shown[same] = [e for e in events if same.shows(e)]
            if shown[same]:
                by_screen.setdefault(same, ([], shown[same]))[0].append(inbox)
        for screen, (inboxes, its_events) in by_screen.items():
            fragment = self._render(screen, its_events)
            if fragment.strip():
                for inbox in inboxes:
                    inbox.put(fragment)

    def _render(self, screen: Screen, events: Sequence[Mapping[str, Any]]) -> str:
        """One screen's fragments, in a request context of its own (for `url_for`)."""
        with self.app.test_request_context("/live", base_url=screen.base_url):
            try:
                return screen.render_all(events)
            except Exception:
                if len(events) == 1:
                    log.exception("live push failed: screen %s event %s", screen.kind, events[0])
                    return ""
        # One event of the burst failed to render: each on its own, so only it is lost.
        return "".join(self._render(screen, [event]) for event in events)

    def close_all(self) -> None:
        """Ask every open socket to close with the code the ws extension retries on."""
        with self.lock:
            for _, inbox in self.sockets.values():
                inbox.put(_CLOSE)


def hub() -> Hub:
    """This web process's hub."""
    found: Hub = current_app.extensions["adminium.live"]
    return found


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
    g.live_screen = _screen()
    if not hub().start():
        # Opened now, the screen would say "live" and refetch while no change can reach
        # it. Refused, the ws extension tries again (1006) until the hub has subscribed.
        log.info("live socket refused: not subscribed to Redis")
        return "live events are not available yet; retrying", 503
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
    number, inbox = hub().register(g.live_screen)
    # The handshake's checks read the control plane; a socket lives for hours, so its
    # connection goes back to the pool now rather than at teardown (else the pool's 15
    # connections capped a process at 15 open screens and starved every page after).
    db.session.remove()
    try:
        serve(ws, inbox, lambda: ws.connected)
    finally:
        hub().unregister(number)


def serve(ws: Any, inbox: queue.Queue[object], alive: Callable[[], bool]) -> None:
    """Send what is queued, all that waits in one message; close with 1011 when the hub
    failed."""
    held: object = None
    while alive():
        try:
            fragment = held if held is not None else inbox.get(timeout=IDLE_SECONDS)
        except queue.Empty:
            continue
        held = None
        if isinstance(fragment, str):
            # A screen that fell behind gets what waits for it at once, not one by one.
            fragment, held = _waiting(inbox, fragment)
        if fragment is _CLOSE:
            ws.close(reason=SERVER_FAILED, message="live events lost; reconnect")
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


def init_app(app: Flask) -> None:
    """Register the live endpoint and this process's hub."""
    found = app.extensions["adminium.live"] = Hub(app)
    _HUBS.add(found)
    app.register_blueprint(bp)


_HUBS: weakref.WeakSet[Hub] = weakref.WeakSet()


def stop_hub(app: Flask) -> None:
    """Stop an app's hub before its databases or Redis go (tests; a process that exits)."""
    app.extensions["adminium.live"].stop()


@atexit.register
def _stop_hubs() -> None:
    """A process that exits drops its sockets (1006, which the ws extension retries on)."""
    for found in list(_HUBS):
        found.stopping.set()
