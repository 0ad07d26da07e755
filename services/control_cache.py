"""What a request needs of the control plane, kept in each web process between requests: a
token's user and roles, an app with its parsed manifest and its store, its connection.

Each entry is kept with the control plane's version as it stood before the entry was read
(`services.control_version`); it serves while that version holds. The version moves when
this process commits a write of the control plane, when another process announces one on
Redis (this cache's listener hears it), when the subscription is lost or made again (what
was said meanwhile is unknown), and when the version read from the database every
CHECK_SECONDS has moved (a write nobody announced). While the listener is not subscribed,
nothing is kept: every request reads the control plane as it did before this cache. So a
new role, a role taken away, a new password or token, a removed user, an app saved again
or a connection paused serve from the next request on, in every process.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import redis
from sqlalchemy import select
from sqlalchemy.orm import Session

from core.basics.values import text_fault
from core.manifest.model import App as AppManifest
from core.manifest.model import load_app
from core.store.store import Store
from services import redis_client
from services.control_version import ANNOUNCER, CHANNEL, CHECK_SECONDS, read_version
from services.models import ADMIN, DEFAULT_ZONE, App, Connection, User
from services.recent import LeastRecent
from services.storage import autocommit, engine_for
from services.urls import hide_password
from services.users import hash_token

log = logging.getLogger(__name__)

USERS, APPS = 10_000, 5_000
"""How many users (by token) and apps a process keeps."""
RETRY_SECONDS = (0.5, 1.0, 2.0, 5.0)
"""How long the listener waits before subscribing again after Redis failed."""


@dataclass(frozen=True)
class CachedConnection:
    """A connection as a request reads it (never shown with its password)."""

    id: int
    name: str
    url: str
    zone: str | None
    paused: bool

    @property
    def safe_url(self) -> str:
        return hide_password(self.url)

    @property
    def zone_name(self) -> str:
        return self.zone or DEFAULT_ZONE


@dataclass(frozen=True)
class CachedApp:
    """An app as a request reads it: its manifest parsed once, its store built once."""

    id: int
    name: str
    updated_at: datetime
    connection: CachedConnection
    model: AppManifest
    store: Store = field(repr=False)


@dataclass(frozen=True)
class CachedUser:
    """A user as a request reads them: roles as (app id or None for every app, role)."""

    id: int
    email: str
    session_version: int
    roles: frozenset[tuple[int | None, str]]

    def roles_in(self, app: App | CachedApp) -> set[str]:
        """The roles this user holds in `app`; `admin` when admin of all apps."""
        return {role for app_id, role in self.roles if app_id is None or app_id == app.id}

    def acting_roles(self, app: App | CachedApp) -> frozenset[str]:
        """The roles this user writes with in `app`: an admin holds every role of every app."""
        roles = self.roles_in(app)
        return frozenset(roles | set(app.model.roles) if ADMIN in roles else roles)


def cached_user(user: User) -> CachedUser:
    """What the cache keeps of a user."""
    roles = frozenset((r.app_id, r.role) for r in user.roles)
    return CachedUser(user.id, user.email, user.session_version, roles)


class ControlCache:
    """One web process's cache of the control plane (see the module)."""

    def __init__(self, control_url: str, redis_url: str | None) -> None:
        self.control_url = control_url
        self.redis_url = redis_url or None
        self._generation = 0
        self._subscribed = False
        self._version: int | None = None
        self._checked = float("-inf")
        self._lock = threading.Lock()
        self._users: LeastRecent[str, tuple[tuple[int, int], CachedUser]] = LeastRecent(USERS)
        self._apps: LeastRecent[tuple[str, str], tuple[tuple[int, int], CachedApp]] = LeastRecent(
            APPS
        )
        self._listener: threading.Thread | None = None
        self._stopping = threading.Event()
        ANNOUNCER.hear(self)

    # --- what a request asks ----------------------------------------------------

    def user_by_token(self, session: Session, token: str) -> CachedUser | None:
        """The user an API token belongs to (None: no user holds it)."""
        digest = hash_token(token)
        return self._kept(
            self._users,
            digest,
            lambda: self._read_user(session, digest),
        )

    def app(self, session: Session, connection: str, name: str) -> CachedApp | None:
        """The app of that name on that connection, with its store (None: there is none)."""
        if text_fault(connection) or text_fault(name):
            return None  # no name holds a NUL (the database would refuse to compare one)
        found = self._kept(
            self._apps, (connection, name), lambda: _read_app(session, connection, name)
        )
        return found if found is None else self._on_warm_engine(found)

    def changed(self) -> None:
        """The control plane changed (this process wrote, or another one said so)."""
        with self._lock:
            self._generation += 1

    # --- keeping ----------------------------------------------------------------

    def _kept(self, entries: LeastRecent[Any, Any], key: Any, read: Callable[[], Any]) -> Any:
        tag = self._tag()
        if tag is not None:
            held = entries.get(key)
            if held is not None and held[0] == tag:
                return held[1]
        found = read()
        if tag is not None and found is not None:
            entries.put(key, (tag, found))
        return found

    def _tag(self) -> tuple[int, int] | None:
        """What an entry read now is kept under; None when nothing may be kept (the listener
        is not subscribed)."""
        self.start()
        if not self._subscribed:
            return None
        if time.monotonic() - self._checked >= CHECK_SECONDS:
            with autocommit(engine_for(self.control_url)).connect() as conn:
                version = read_version(conn)
            with self._lock:
                self._version, self._checked = version, time.monotonic()
        with self._lock:
            return (self._generation, self._version or 0) if self._subscribed else None

    def _read_user(self, session: Session, digest: str) -> CachedUser | None:
        user = session.scalar(select(User).where(User.token_hash == digest))
        return cached_user(user) if user is not None else None

    def _on_warm_engine(self, app: CachedApp) -> CachedApp:
        """The app with its store on the connection's engine as the engines now hold it
        (touching it keeps its pool among the warm ones)."""
        engine = engine_for(app.connection.url)
        if app.store.engine is engine:
            return app
        store = app.store.on_engine(engine)
        return CachedApp(app.id, app.name, app.updated_at, app.connection, app.model, store)

    # --- hearing ----------------------------------------------------------------

    def start(self) -> None:
        """Listen for announcements (from the first request on), when Redis is named."""
        if self.redis_url is None or self._stopping.is_set():
            return
        if self._listener is not None and self._listener.is_alive():
            return
        with self._lock:
            if self._listener is None or not self._listener.is_alive():
                self._listener = threading.Thread(
                    target=_listen, args=(weakref.ref(self),), name="control-cache", daemon=True
                )
                self._listener.start()

    def stop(self) -> None:
        """Stop listening (the thread ends within a second)."""
        self._stopping.set()
        self._set_subscribed(False)

    def _set_subscribed(self, subscribed: bool) -> None:
        with self._lock:
            self._subscribed = subscribed
            self._generation += 1  # what was said while it was not is unknown


def _read_app(session: Session, connection: str, name: str) -> CachedApp | None:
    row = session.execute(
        select(App, Connection)
        .join(App.connection)
        .where(Connection.name == connection, App.name == name)
    ).first()
    if row is None:
        return None
    app, conn = row
    held = CachedConnection(conn.id, conn.name, conn.url, conn.zone, conn.paused)
    model = load_app(app.manifest)
    store = Store(engine_for(conn.url), model, ZoneInfo(held.zone_name), connection=conn.name)
    return CachedApp(app.id, app.name, app.updated_at, held, model, store)


def _listen(ref: weakref.ref[ControlCache]) -> None:
    """The listener's thread: subscribe, count each announcement, subscribe again after a
    failure; ends once its cache is stopped or gone."""
    failures = 0
    while True:
        cache = ref()
        if cache is None or cache._stopping.is_set():
            return
        url = cache.redis_url
        del cache
        try:
            _listen_once(ref, str(url))
            return
        except redis.RedisError as error:
            cache = ref()
            if cache is not None:
                if cache._subscribed or not failures:
                    log.warning("control-plane cache: Redis failed (%s): keeping nothing", error)
                cache._set_subscribed(False)
            del cache
            time.sleep(RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)])
            failures += 1


def _listen_once(ref: weakref.ref[ControlCache], url: str) -> None:
    client = redis_client.connect(url)
    pubsub = client.pubsub()
    try:
        pubsub.subscribe(CHANNEL)
        while True:
            message = pubsub.get_message(timeout=1.0)
            cache = ref()
            if cache is None or cache._stopping.is_set():
                return
            if message is not None:
                if message["type"] == "subscribe":
                    cache._set_subscribed(True)
                elif message["type"] == "message":
                    cache.changed()
            del cache
    finally:
        pubsub.close()
        client.close()
