"""The one publisher of live events: what committed writes tell the screens (DESIGN 8).

Every operation publishes through a `Publisher` after its commit. Publishing is best
effort: the write has committed, so a Redis failure is logged, not raised; open screens
catch up when their socket reopens and they refetch.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import redis

from core.basics.events import RowEvent
from services.redis_client import connect_optional

log = logging.getLogger(__name__)

CHANNEL_PREFIX = "adminium:rows:"
SESSIONS_CHANNEL = f"{CHANNEL_PREFIX}:sessions"
"""Where sign-outs go out (no connection's name starts with `:`), so every web process
closes the user's open screens."""


def events_channel(connection: str) -> str:
    """The Redis channel a connection's row events go out on."""
    return f"{CHANNEL_PREFIX}{connection}"


class Publisher:
    """Publishes on one Redis client (none: publishes nothing), after the commit."""

    def __init__(self, client: redis.Redis | None = None, *, owned: bool = False) -> None:
        self.client = client
        self._owned = owned

    @classmethod
    def from_url(cls, url: str | None) -> Publisher:
        """A publisher with a client of its own for the Redis at `url`, one server or a
        primary behind Sentinel (`services.redis_client`; nothing when unset)."""
        return cls(connect_optional(url), owned=True)

    def close(self) -> None:
        """Close the client when this publisher made it."""
        if self._owned and self.client is not None:
            self.client.close()

    def __enter__(self) -> Publisher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def rows(
        self,
        events: Iterable[RowEvent],
        extra: Mapping[str, Any] | None = None,
        what: str = "",
        *,
        also: Callable[[Any], object] | None = None,
    ) -> None:
        """Each event as JSON on its connection's channel; `extra` joins every event's JSON:
        `{"set_aside": True}` for a row the sweep set aside, `{"removed": True}` for a
        sample row removed. `also` adds its commands to the same pipeline (a write's due
        hint): one round trip to Redis."""
        events = list(events)
        if events or also is not None:
            self._send(lambda c: _publish_rows(c, events, extra, also), what or "row events")

    def pause(self, connection: str, paused: bool) -> None:
        """Tell a connection's open screens that it was paused or resumed."""
        body = json.dumps({"connection": connection, "paused": paused})
        self._send(lambda c: c.publish(events_channel(connection), body), f"pause of {connection}")

    def signed_out(self, user: int, why: str = "signed out") -> None:
        """Tell every web process that a user signed out (or got a new password, a role
        change, or was removed: `why`): their open screens close."""
        body = json.dumps({"signed_out": user, "why": why})
        self._send(lambda c: c.publish(SESSIONS_CHANNEL, body), f"{why} of user {user}")

    def _send(self, send: Callable[[redis.Redis], object], what: str) -> None:
        if self.client is None:
            return
        try:
            send(self.client)
        except redis.RedisError as error:
            log.warning("%s not published: %s", what, error.__class__.__name__)


NO_PUBLISHER = Publisher(None)
"""Publishes nothing: for a dry run, or where no Redis is named."""


def _publish_rows(
    client: redis.Redis,
    events: list[RowEvent],
    extra: Mapping[str, Any] | None,
    also: Callable[[Any], object] | None = None,
) -> None:
    with client.pipeline(transaction=False) as pipe:
        for event in events:
            body = {**event.as_dict(), **(extra or {})}
            pipe.publish(events_channel(event.connection), json.dumps(body, default=str))
        if also is not None:
            also(pipe)
        pipe.execute()
    log.debug("published %s row events", len(events))
