"""The clock's health as the screens show it: the stalled banner's minutes, a card's figures,
and one state per connection (running, paused, stalled, Redis unreachable), said once.

The rule (two missed minutes) is `core.sweep.health`'s; this reads it for a connection of
the control plane, on the web's clock. A paused connection is never stalled: its paused
banner already says why nothing moves.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

import redis
from flask import request
from flask_babel import gettext as _
from sqlalchemy.exc import DBAPIError

from core.store.store import Store
from core.sweep.faults import fault_words, is_connections
from core.sweep.health import SweepHealth, read_health
from core.sweep.pending import PENDING_HORIZON, Pending, pending_moves
from core.time.words import span_words
from services.apps import swept_stores
from services.models import Connection
from web.context import clock, publisher
from web.language import speech

log = logging.getLogger(__name__)

LIVE_PATH = "/live"
"""The path the live hub renders its pushes under (`web.live`)."""
NEXT_DUE_LOOK = 20
"""How many pending moves the card reads to find the next one not set aside."""


STATES = ("running", "paused", "stalled", "redis")
"""A connection's clock, one of: sweeps keep time, paused by a person, no sweep for two
missed minutes, or the web cannot reach Redis (no tick is enqueued, no push arrives)."""


@dataclass(frozen=True)
class ClockState:
    """A connection's one health state, and for a stall since when and how long."""

    kind: str
    minutes: int | None = None
    since: datetime | None = None
    """The last sweep's minute, for a stall (what "stalled since 06:09" names)."""

    @property
    def words(self) -> str:
        """The state as the card's badge and the header say it."""
        say = speech()
        if self.kind == "stalled":
            return say(
                "stalled %(span)s", span=span_words(timedelta(minutes=self.minutes or 0), say)
            )
        if self.kind == "redis":
            return say("Redis unreachable")
        return say("paused") if self.kind == "paused" else say("running")

    @property
    def moving(self) -> bool:
        """Whether the clock makes the timed moves as they fall due."""
        return self.kind == "running"


RUNNING = ClockState("running")


def state_of(connection: Connection, health: SweepHealth | None) -> ClockState:
    """The one state of a connection: paused first (a person said so), then Redis, then a
    stall read from its sweeps' `health`."""
    if connection.paused:
        return ClockState("paused")
    if not redis_answers():
        return ClockState("redis")
    if health is not None and health.stalled_minutes is not None:
        since = health.last["at"] if health.last else None
        return ClockState("stalled", health.stalled_minutes, since)
    return RUNNING


def redis_answers() -> bool:
    """Whether the web's Redis answers a ping (no Redis configured: nothing to reach)."""
    client = publisher().client
    if client is None:
        return True
    try:
        client.ping()
    except (redis.RedisError, OSError):
        return False
    return True


PUSH_READ_SECONDS = 1.0
"""How long a state read for a live push serves the pushes after it (a burst of moves is
rendered with one read a second, not one per card; a page's own request always reads)."""
_pushed: dict[str, tuple[float, ClockState]] = {}


def clock_state(connection: Connection, fresh: bool = False) -> ClockState:
    """A connection's state now, read once per request (the header and the banner share it);
    `fresh` reads it again even in a push (the push that says the state changed)."""
    cache: dict[str, ClockState] = request.environ.setdefault("adminium.clock_states", {})
    if connection.name not in cache and request.path == LIVE_PATH and not fresh:
        read = _pushed.get(connection.name)
        fresh = read is not None and time.monotonic() - read[0] < PUSH_READ_SECONDS
        if read is not None and fresh and (read[1].kind == "paused") == connection.paused:
            cache[connection.name] = read[1]
    if connection.name not in cache:
        health = None
        stores = [] if connection.paused else swept_stores(connection)
        if stores:
            try:
                with stores[0].engine.connect() as conn:
                    health = read_health(conn, connection.name, clock())
            except DBAPIError:
                log.warning(
                    "connection %s: its database did not answer the sweep check", connection.name
                )
        cache[connection.name] = state_of(connection, health)
        if request.path == LIVE_PATH:
            _pushed[connection.name] = (time.monotonic(), cache[connection.name])
    return cache[connection.name]


@dataclass(frozen=True)
class ClockFigures:
    """A connection card's sweep figures: health, and when the next timed move is due."""

    health: SweepHealth
    next_due: datetime | None
    state: ClockState = RUNNING
    unread: tuple[tuple[str, str], ...] = ()
    """(app, sentence) of each app whose pending moves could not be read (its tables
    disagree with its manifest): the next due moment is the other apps'."""

    @property
    def faults(self) -> list[tuple[str, str]]:
        """Each app that faulted, with its sentence: the last sweep's record first (what
        it was doing), then those the card could not read itself."""
        recorded = (self.health.last or {}).get("faults") or {}
        found = [
            (
                app,
                _(
                    "stopped this minute while %(during)s: %(error)s",
                    during=fault["during"],
                    error=fault["error"],
                ),
            )
            for app, fault in recorded.items()
        ]
        found += [
            (app, _("cannot be read: %(why)s", why=words))
            for app, words in self.unread
            if app not in recorded
        ]
        return found


def stall_of(connection: Connection) -> int | None:
    """Minutes since the connection's last sweep once it has stalled, else None."""
    if connection.paused:
        return None
    stores = swept_stores(connection)
    if not stores:
        return None
    try:
        with stores[0].engine.connect() as conn:
            return read_health(conn, connection.name, clock()).stalled_minutes
    except DBAPIError:
        log.warning("connection %s: its database did not answer the sweep check", connection.name)
        return None


def clock_figures(stores: list[Store], connection: Connection, now: datetime) -> ClockFigures:
    """Last sweep, moved in the last hour, stalled or not, and the next move due."""
    with stores[0].engine.connect() as conn:
        health = read_health(conn, connection.name, now)
    if connection.paused:
        health = SweepHealth(health.last, health.moved_last_hour, None)
    coming, unread = _coming(stores, now)
    next_due = min((p.moment for p in coming if not p.set_aside), default=None)
    return ClockFigures(health, next_due, state_of(connection, health), tuple(unread))


def _coming(stores: list[Store], now: datetime) -> tuple[list[Pending], list[tuple[str, str]]]:
    """The next pending moves of the stores, read together; when that fails with an app's
    error, each app alone, so that one app's drifted table leaves the others' next move in
    view: the moves read, and (app, sentence) of each app that could not be read."""
    by = now + PENDING_HORIZON
    try:
        return pending_moves(stores, by=by, now=now, limit=NEXT_DUE_LOOK), []
    except (DBAPIError, LookupError) as error:
        if is_connections(error):
            raise
    coming: list[Pending] = []
    unread: list[tuple[str, str]] = []
    for store in stores:
        try:
            coming += pending_moves([store], by=by, now=now, limit=NEXT_DUE_LOOK)
        except (DBAPIError, LookupError) as error:
            if is_connections(error):
                raise
            unread.append((store.app.name, fault_words(error)))
    return coming, unread
