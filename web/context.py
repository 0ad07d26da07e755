"""What every web request shares: the adapter's clock, the publisher, the app asked for."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from flask import Flask, current_app

from services import apps
from services.control_cache import CachedApp, ControlCache
from services.control_version import ANNOUNCER
from services.events import Publisher
from services.models import App, db

_PUBLISHER = "adminium.publisher"
_CACHE = "adminium.control_cache"


def init_app(app: Flask) -> None:
    """One publisher per web process, on the Redis named by REDIS_URL (none: nothing sent),
    which also announces this process's control-plane writes; and one cache of the control
    plane (`services.control_cache`), listening on the same Redis."""
    publisher = Publisher.from_url(app.config.get("REDIS_URL") or None)
    app.extensions[_PUBLISHER] = publisher
    if publisher.client is not None:
        ANNOUNCER.publish_on(publisher.client)
    database = app.config.get("DATABASE_URL") or ""
    redis_url = app.config.get("REDIS_URL")
    app.extensions[_CACHE] = ControlCache(database, redis_url) if database else None


def control_cache() -> ControlCache | None:
    """The web process's cache of the control plane (None without a DATABASE_URL)."""
    found: ControlCache | None = current_app.extensions.get(_CACHE)
    return found


def clock() -> datetime:
    """The adapter's `now`, UTC aware: the real clock, or the one a test's config gives."""
    read: Callable[[], datetime] | None = current_app.config.get("CLOCK")
    now = read() if read is not None else datetime.now(UTC)
    if now.utcoffset() is None:
        raise ValueError("the CLOCK config must give aware times")
    return now.astimezone(UTC)


def publisher() -> Publisher:
    """The web process's publisher of live events."""
    found: Publisher = current_app.extensions[_PUBLISHER]
    return found


def lookup_app(connection: str, name: str) -> App | None:
    """The app of that name on that connection, or None."""
    return apps.lookup_app(db.session, connection, name)


def cached_app(connection: str, name: str) -> CachedApp | None:
    """The app of that name on that connection with its store, as the process's cache of
    the control plane holds it (read and kept when it holds nothing), or None."""
    cache = control_cache()
    if cache is None:
        return None
    return cache.app(db.session, connection, name)
