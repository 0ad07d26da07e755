"""The web process's one Redis subscription: row events in bursts, fanned out to the sockets.

Its thread listens to every connection's row events and, for each open screen that shows a
changed row, renders the screen's partials once and queues them to the screen's sockets;
a second thread watches each shown connection's sweep health (the stalled banner). When
Redis fails every open screen is told at once, in words on the page ("Redis does not
answer", `templates/screens/_live_banner.html`), its socket kept open, and the hub tries to
subscribe again; once it has, each of those screens has the words taken away and its socket
closed with 1011, so it reopens and fetches what it may have missed.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import redis
from flask import Flask, current_app, g, render_template

from services import redis_client
from services.connections import get_connection
from services.events import CHANNEL_PREFIX
from services.models import db
from web.live.screen import Screen
from web.screens.clock_health import stall_of

log = logging.getLogger(__name__)

RETRY_SECONDS = (0.5, 1.0, 2.0, 5.0)
"""How long the hub waits before subscribing again after Redis failed."""
WATCH_SECONDS = 15.0
"""How often the hub checks the sweep health of the connections open screens show
(config LIVE_WATCH_SECONDS)."""
COALESCE_SECONDS = 0.25
"""The longest the events of a burst wait to go out together (config LIVE_COALESCE_SECONDS):
each open screen gets one message per interval carrying every change since the last."""
QUIET_SECONDS = 0.05
"""A pause this long between events ends a burst: a lone event goes out at once."""
SESSION_SOCKETS = 20
"""The most sockets one sign-in keeps open in a web process (config LIVE_SESSION_SOCKETS):
one more closes the oldest, told why (`CROWDED`), so a page that opens sockets in a loop
holds 20 threads' worth of pushes, not a thousand."""
_CLOSE = object()
_SIGNED_OUT = object()
_CROWDED = object()


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
        self.redis_down = False
        """Whether the screens were told that Redis does not answer (under `lock`)."""
        self.losses = 0
        """How many times the subscription has lost Redis (under `lock`)."""
        self.sessions: dict[str, list[int]] = {}
        """Each sign-in's open sockets, oldest first (under `lock`)."""
        self.session_of: dict[int, str] = {}

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

    def register(
        self, screen: Screen, losses: int | None = None, session: str = ""
    ) -> tuple[int, queue.Queue[object]]:
        """Add an open socket of a sign-in `session` whose handshake saw the subscription hold
        after `losses` losses of Redis: told at once if it has been lost since (and reopened
        if it is back). Past the session's cap its oldest socket is closed."""
        inbox: queue.Queue[object] = queue.Queue()
        with self.lock:
            number = id(inbox)
            self.sockets[number] = (screen, inbox)
            if self.redis_down:
                inbox.put(self.banner(down=True, locale=screen.locale))
            elif losses is not None and losses != self.losses:
                inbox.put(_CLOSE)  # lost and back before it was added: its refetch may be old
            crowded = self._over_cap(session, number)
        for oldest in crowded:
            oldest.put(self.banner(down=self.redis_down, crowded=True, locale=screen.locale))
            oldest.put(_CROWDED)
        if crowded:
            log.info("live socket of a sign-in over %s closed: the oldest", self._cap())
        return number, inbox

    def _cap(self) -> int:
        return int(self.app.config.get("LIVE_SESSION_SOCKETS", SESSION_SOCKETS))

    def _over_cap(self, session: str, number: int) -> list[queue.Queue[object]]:
        """Note a session's new socket; the inboxes of its oldest past the cap (under `lock`)."""
        opened = self.sessions.setdefault(session, [])
        opened.append(number)
        self.session_of[number] = session
        crowded = []
        while len(opened) > self._cap():
            oldest = opened.pop(0)
            self.session_of.pop(oldest, None)
            found = self.sockets.get(oldest)
            if found is not None:
                crowded.append(found[1])
        return crowded

    def unregister(self, number: int) -> None:
        """Forget a closed socket."""
        with self.lock:
            self.sockets.pop(number, None)
            session = self.session_of.pop(number, None)
            opened = self.sessions.get(session or "", [])
            if number in opened:
                opened.remove(number)
            if session is not None and not opened:
                self.sessions.pop(session, None)

    def listen(self) -> None:
        """Subscribe to every connection's events; on a Redis failure tell every screen so,
        and try again until Redis answers."""
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
                self.tell_redis_down()
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
                    # Redis confirmed the subscription: from here on no event is missed.
                    # The screens told it was down are told it answers (and closed, to
                    # reopen) first; only then may sockets open, so none opened meanwhile
                    # is closed with them (and its refetch wasted).
                    if self.redis_down:
                        self.push_clock_states()  # before the screens reopen (their header)
                        self.tell_redis_answers()
                    self.subscribed.set()
                    log.info("live events: subscribed to %s*", CHANNEL_PREFIX)
                elif message["type"] == "pmessage":
                    self.deliver(message["data"])
                if self.pending and time.monotonic() - self.pending_since >= coalesce:
                    self.flush()
        finally:
            self.pending = []  # lost with Redis: the screens told refetch when it answers
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

    def shown_connections(self) -> set[str]:
        """The connections the open screens show."""
        with self.lock:
            screens = [screen for screen, _ in self.sockets.values()]
        names = {s.connection for s in screens if s.connection}
        return names | {name for s in screens for name in s.connections}

    def check_clocks(self) -> None:
        """Read each shown connection's sweep health; push a change of stalled minutes."""
        names = self.shown_connections()
        if not names:
            return
        for name, stalled in sorted(self.read_stalls(names).items()):
            if name not in self.stalls or self.stalls[name] != stalled:
                self.stalls[name] = stalled
                if stalled is not None:
                    log.warning("connection %s: timed moves stalled for %s min", name, stalled)
                self.fan_out({"connection": name, "stalled": stalled})

    def read_stalls(self, names: set[str]) -> dict[str, int | None]:
        """Each connection's stalled minutes as its sweeps say now (None: not stalled)."""
        with self.app.app_context():
            try:
                return {name: stall_of(get_connection(db.session, name)) for name in names}
            finally:
                db.session.remove()

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
            g.forced_locale = screen.locale
            g.card_view = screen.view  # a board's cards as its screen draws them
            try:
                return screen.render_all(events)
            except Exception:
                if len(events) == 1:
                    log.exception("live push failed: screen %s event %s", screen.kind, events[0])
                    return ""
        # One event of the burst failed to render: each on its own, so only it is lost.
        return "".join(self._render(screen, [event]) for event in events)

    def tell_redis_down(self) -> None:
        """Tell every open screen that Redis does not answer (once, while it stays away):
        its socket stays open, so the words reach the page and the clock watch still pushes."""
        with self.lock:
            if self.redis_down:
                return
            self.redis_down = True
            self.losses += 1
            sockets = list(self.sockets.values())
            inboxes = [inbox for _, inbox in sockets]
            told: dict[str, str] = {}
            for screen, inbox in sockets:
                if screen.locale not in told:
                    told[screen.locale] = self.banner(down=True, locale=screen.locale)
                inbox.put(told[screen.locale])
        log.warning("live screens told Redis does not answer (%s open)", len(inboxes))
        self.push_clock_states()  # the header's clock state (a connection's card) says so too

    def tell_redis_answers(self) -> None:
        """Redis answers again and the hub has subscribed: every screen told it did not has
        the words taken away and its socket closed with 1011, so it reopens (now that no
        change can slip by) and fetches again what it may have missed."""
        with self.lock:
            if not self.redis_down:
                return
            self.redis_down = False
            inboxes = [inbox for _, inbox in self.sockets.values()]
            cleared = self.banner(down=False)  # empty: the same in every language
            for inbox in inboxes:
                inbox.put(cleared)
                inbox.put(_CLOSE)
        log.info("live screens told Redis answers; %s reopen and refetch", len(inboxes))

    def push_clock_states(self) -> None:
        """Push each shown connection's clock state (and stalled banner) as it reads now,
        Redis in it."""
        try:
            found = self.read_stalls(self.shown_connections())
        except Exception as error:  # the screens keep the banner; the clock watch tries again
            log.warning("live clock states not read: %s: %s", error.__class__.__name__, error)
            return
        self.stalls.update(found)
        self.fan_out_all([{"connection": n, "stalled": found[n]} for n in sorted(found)])

    def banner(self, down: bool, crowded: bool = False, locale: str = "en") -> str:
        """The live banner as pushed, in the screen's language: the words while Redis does
        not answer, or of a socket closed for more open in its sign-in; else empty."""
        with self.app.test_request_context("/live"):
            g.forced_locale = locale
            return render_template(
                "screens/_live_banner.html", redis_down=down, crowded=crowded, cap=self._cap()
            )

    def close_all(self) -> None:
        """Ask every open socket to close with the code the ws extension retries on."""
        with self.lock:
            for _, inbox in self.sockets.values():
                inbox.put(_CLOSE)


def hub() -> Hub:
    """This web process's hub."""
    found: Hub = current_app.extensions["adminium.live"]
    return found
