"""What every web request shares: the adapter's clock, the publisher, the app asked for."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from flask import Flask, current_app

from services import apps
from services.events import Publisher
from services.models import App, db

_PUBLISHER = "adminium.publisher"


def init_app(app: Flask) -> None:
    """One publisher per web process, on the Redis named by REDIS_URL (none: nothing sent)."""
    app.extensions[_PUBLISHER] = Publisher.from_url(app.config.get("REDIS_URL") or None)


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
