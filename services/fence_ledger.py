"""Sweeps turned away by their connection's fence, counted in Redis for the whole cluster.

A sweep that finds another sweep's lease running (`core.sweep.fence`) does nothing that minute;
its own record in the connection's database says so. Here each is counted per
connection, with the latest one's words (who held the fence, since when), for `/metrics`
(`adminium_sweeps_fenced_total`) and the connection's card ("Sweeps turned away").
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime

import redis

log = logging.getLogger(__name__)

FENCED = "adminium:sweeps:fenced"
"""Hash: connection -> sweeps turned away by its fence since the ledger began."""
LAST_FENCED = "adminium:sweeps:last-fenced"
"""Hash: connection -> JSON {"at", "why"} of the latest sweep turned away."""


@dataclass(frozen=True)
class TurnedAway:
    """A connection's sweeps turned away by its fence: how many, the latest, and why
    (`fence held by worker host:4242 since 12:01:03Z`)."""

    count: int
    at: datetime
    why: str


def count_fenced(client: redis.Redis, connection: str, at: datetime, why: str) -> None:
    """Count one sweep turned away at `at` (one round trip)."""
    pipe = client.pipeline(transaction=False)
    pipe.hincrby(FENCED, connection, 1)
    pipe.hset(LAST_FENCED, connection, json.dumps({"at": at.isoformat(), "why": why}))
    pipe.execute()


def turned_away(client: redis.Redis | None, connection: str) -> TurnedAway | None:
    """A connection's sweeps turned away (None when none, or no Redis is named)."""
    if client is None:
        return None
    try:
        count, last = client.hget(FENCED, connection), client.hget(LAST_FENCED, connection)
    except redis.RedisError as error:
        log.warning("fenced sweeps of connection %s not read: %s", connection, error)
        return None
    if not count or not last:
        return None
    body = json.loads(last)
    return TurnedAway(int(count), datetime.fromisoformat(body["at"]), body["why"])


def fenced_counts(client: redis.Redis) -> dict[str, float]:
    """Sweeps turned away, per connection."""
    found = client.hgetall(FENCED)
    return {_text(k): float(v) for k, v in found.items()}


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value
