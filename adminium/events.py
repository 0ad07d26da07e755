"""Publish committed writes' events on Redis for the live screens (DESIGN decision 8)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import redis

from core.events import RowEvent

log = logging.getLogger(__name__)

CHANNEL_PREFIX = "adminium:rows:"


def events_channel(connection: str) -> str:
    """The Redis channel a connection's row events go out on."""
    return f"{CHANNEL_PREFIX}{connection}"


def publish_events(
    client: redis.Redis, events: Iterable[RowEvent], extra: Mapping[str, Any] | None = None
) -> int:
    """Publish each event as JSON on its connection's channel; call only after the commit.

    `extra` joins every event's JSON: `{"set_aside": True}` for a row the sweep set aside,
    `{"removed": True}` for a sample row removed.
    """
    sent = 0
    with client.pipeline(transaction=False) as pipe:
        for event in events:
            body = {**event.as_dict(), **(extra or {})}
            pipe.publish(events_channel(event.connection), json.dumps(body, default=str))
            sent += 1
        if sent:
            pipe.execute()
    log.debug("published %s row events", sent)
    return sent


def publish_pause(client: redis.Redis, connection: str, paused: bool) -> None:
    """Tell a connection's open screens that it was paused or resumed."""
    client.publish(
        events_channel(connection), json.dumps({"connection": connection, "paused": paused})
    )


def send_quietly(
    client: redis.Redis | None, send: Callable[[redis.Redis], object], what: str
) -> None:
    """Send on `client` (if any). The write has committed, so a Redis failure is logged, not
    raised: open screens catch up when their socket reopens and they refetch."""
    if client is None:
        return
    try:
        send(client)
    except redis.RedisError as error:
        log.warning("%s not published: %s", what, error.__class__.__name__)


def send_to(url: str | None, send: Callable[[redis.Redis], object], what: str) -> None:
    """`send_quietly` on a client of its own for the Redis at `url` (nothing when unset)."""
    if not url:
        return
    client = redis.Redis.from_url(url)
    try:
        send_quietly(client, send, what)
    finally:
        client.close()
