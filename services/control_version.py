"""The control plane's version, raised by every write and announced to every web process.

Every write of the control plane's tables raises `adminium_control.control_version` in its
own transaction (a trigger: migration 0004), whoever writes. After a session of this process
commits a write of them, it is announced at once: to this process's caches
(`services.control_cache`), and on Redis (the channel CHANNEL, as the live events go out),
where every web process's cache listens. A cache that hears it forgets what it held; one
that could not hear (its Redis subscription lost) holds nothing meanwhile, and every cache
also reads the version itself every few seconds, for a writer that announced nothing (a
console command run without REDIS_URL).
"""

from __future__ import annotations

import logging
import os
import threading
import uuid
import weakref
from typing import Any

import redis
from sqlalchemy import Connection, event, text
from sqlalchemy.orm import ORMExecuteState, Session

from services.models import SCHEMA
from services.redis_client import connect_optional

log = logging.getLogger(__name__)

CHANNEL = "adminium:control"
"""Where a control-plane write is announced (the body: the process that wrote)."""
CHECK_SECONDS = float(os.environ.get("ADMINIUM_CONTROL_CHECK_SECONDS", "10"))
"""How often a cache reads the control plane's version itself, for a write nobody announced
(a console command run without REDIS_URL, SQL typed by hand): ADMINIUM_CONTROL_CHECK_SECONDS."""
TOKEN = "adminium:control:token"
"""A value no announcement repeats, set on Redis by each one before it is published: a
reader that saw the same token before and after has seen no announced write in between
(a sweep job reads it in the pipeline its worker sends as it starts the job, `ask_token`)."""
_WRITTEN = "adminium_control_written"
"""A session's mark (in `Session.info`) that it flushed a write of the control plane."""
_VERSION = text(f"SELECT version FROM {SCHEMA}.control_version")


def read_version(conn: Connection) -> int:
    """The control plane's version now (0 where the migration has not run yet)."""
    found = conn.execute(_VERSION).scalar()
    return int(found or 0)


class Announcer:
    """Tells this process's caches and the other processes (on Redis) that the control plane
    changed. Caches register themselves; a web process registers its Redis client (both held
    weakly); a process that registered none (the console) announces on REDIS_URL's Redis,
    when it is set."""

    def __init__(self) -> None:
        self._heard: weakref.WeakSet[Any] = weakref.WeakSet()
        self._clients: weakref.WeakSet[redis.Redis] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._own: redis.Redis | None = None
        self._own_tried = False

    def hear(self, cache: Any) -> None:
        """Call `cache.changed()` on every announcement of this process (held weakly)."""
        self._heard.add(cache)

    def publish_on(self, client: redis.Redis) -> None:
        """Announce on this Redis too (a web process's publisher's client)."""
        with self._lock:
            self._clients.add(client)

    def announce(self) -> None:
        """The control plane changed: this process's caches forget, then the others are told."""
        for cache in list(self._heard):
            cache.changed()
        for client in self._targets():
            try:
                pipe = client.pipeline(transaction=False)
                pipe.set(TOKEN, uuid.uuid4().hex)
                pipe.publish(CHANNEL, str(os.getpid()))
                pipe.execute()
            except redis.RedisError as error:
                log.warning("control-plane change not announced: %s", error.__class__.__name__)

    def _targets(self) -> list[redis.Redis]:
        with self._lock:
            if self._clients:
                return list(self._clients)
            if not self._own_tried:
                self._own_tried = True
                self._own = connect_optional(os.environ.get("REDIS_URL") or None)
            return [self._own] if self._own is not None else []


ANNOUNCER = Announcer()
"""This process's one announcer."""


def ask_token(pipe: Any) -> None:
    """In a Redis pipeline: the announcements' token (`TOKEN`), one set first when Redis has
    none (a Redis started afresh); its reply is the pipeline's last (`token_of`)."""
    pipe.set(TOKEN, uuid.uuid4().hex, nx=True)
    pipe.get(TOKEN)


def token_of(replies: list[Any]) -> str | None:
    """The token `ask_token` read, from its pipeline's replies (None: Redis refused it)."""
    found = replies[-1] if replies else None
    if isinstance(found, bytes):
        return found.decode()
    return found if isinstance(found, str) else None


@event.listens_for(Session, "after_flush")
def _flushed(session: Session, context: Any) -> None:
    if session.new or session.dirty or session.deleted:
        session.info[_WRITTEN] = True


@event.listens_for(Session, "do_orm_execute")
def _executed(state: ORMExecuteState) -> None:
    if state.is_insert or state.is_update or state.is_delete:
        state.session.info[_WRITTEN] = True


@event.listens_for(Session, "after_commit")
def _committed(session: Session) -> None:
    if session.info.pop(_WRITTEN, False):
        ANNOUNCER.announce()


@event.listens_for(Session, "after_rollback")
def _rolled_back(session: Session) -> None:
    session.info.pop(_WRITTEN, None)
