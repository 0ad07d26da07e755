"""The minute sweeps' ledger in Redis: which ran, which were dropped and why, in what order.

The tick marks each sweep it enqueues as waiting for its minute; the sweep's job clears
the mark as it starts and dates the connection's last service. At the next tick, a mark
still there belongs to a sweep that never started in its minute (its wait in the queue
ran out): it is counted and logged as dropped, and its connection, served longest ago,
goes first in the new minute. Every figure here is cluster-wide, read by `/metrics` and
the connections screen at the moment they ask, whichever process wrote it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import redis
from rq import Queue, Worker

log = logging.getLogger(__name__)

QUEUE = "adminium"
"""The queue the clock and the sweeps use (the Procfile's worker listens on it)."""
PREFIX = "adminium:sweeps:"
WAITING = PREFIX + "waiting"
"""Hash: connection -> the minute (epoch seconds) of its enqueued sweep not started yet."""
SERVED = PREFIX + "served"
"""Sorted set: connection -> the minute its last sweep started in (the fair order)."""
DROPPED = PREFIX + "dropped"
"""Hash: connection -> sweeps dropped since the ledger began."""
LAST_DROP = PREFIX + "last-drop"
"""Hash: connection -> JSON {"minute", "why"} of its latest dropped sweep."""
COUNTS = {"run": PREFIX + "run", "moved": PREFIX + "moved", "set_aside": PREFIX + "set-aside"}
"""Hashes: connection -> sweeps run, rows moved, rows set aside."""
LAG = PREFIX + "lag"
"""Hash: connection -> seconds from its minute's start to its latest sweep's start."""
DURATION = PREFIX + "duration"
"""Hash: connection -> seconds its latest sweep took."""
HISTOGRAMS = {"duration": PREFIX + "duration-buckets", "lag": PREFIX + "lag-buckets"}
"""Hashes, cluster-wide: the count of observations in each bucket ("le" of the smallest
bound at or above the value, "+Inf" past the last) and "sum"; a read adds them up into
Prometheus' cumulative buckets (a sweep writes one bucket, not one per bound)."""
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
"""The histograms' upper bounds in seconds (sweep duration, and lag to its start)."""

# Take every waiting mark older than ARGV[1] at once, so that of two clocks' ticks of one
# minute only one counts a dropped sweep.
_TAKE_OLDER = """
local taken = {}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  if tonumber(all[i + 1]) < tonumber(ARGV[1]) then
    redis.call('HDEL', KEYS[1], all[i])
    table.insert(taken, all[i])
    table.insert(taken, all[i + 1])
  end
end
return taken
"""
# Clear a waiting mark only if it is this minute's (a later tick may have renewed it).
_START = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
"""


class DropReason(StrEnum):
    """Why a minute's sweep of a connection never ran."""

    expired = "not started within its minute: its wait in the queue ran out"


@dataclass(frozen=True)
class Drop:
    """A minute's sweep of a connection that never ran, and why."""

    connection: str
    minute: datetime
    why: str


@dataclass(frozen=True)
class Missed:
    """A connection's dropped sweeps as its card shows them: how many, the latest, why."""

    count: int
    minute: datetime
    why: str


def _epoch(minute: datetime) -> int:
    return int(minute.timestamp())


def _minute(epoch: str | bytes | float) -> datetime:
    return datetime.fromtimestamp(float(epoch), UTC)


def fair_order(client: redis.Redis, names: Sequence[str]) -> list[str]:
    """The connections served longest ago first (never served: first of all), then by name."""
    if not names:
        return []
    scores = client.zmscore(SERVED, list(names))
    served = {n: (-1.0 if s is None else float(s)) for n, s in zip(names, scores, strict=True)}
    return sorted(names, key=lambda n: (served[n], n))


def mark_waiting(pipe: Any, names: Iterable[str], minute: datetime) -> None:
    """In the tick's pipeline: these connections' sweeps of `minute` wait in the queue."""
    marks = dict.fromkeys(names, _epoch(minute))
    if marks:
        pipe.hset(WAITING, mapping=marks)


def take_dropped(client: redis.Redis, minute: datetime) -> list[Drop]:
    """The sweeps of minutes before `minute` that never started; each taken once."""
    found = client.eval(_TAKE_OLDER, 1, WAITING, _epoch(minute))
    pairs = [(found[i], found[i + 1]) for i in range(0, len(found), 2)]
    return [Drop(_text(name), _minute(_text(at)), DropReason.expired.value) for name, at in pairs]


def count_drops(client: redis.Redis, drops: Sequence[Drop]) -> None:
    """Count and log each dropped sweep (connection, minute, why)."""
    if not drops:
        return
    pipe = client.pipeline(transaction=False)
    for drop in drops:
        log.warning(
            "sweep of connection %s for %s dropped: %s",
            drop.connection,
            f"{drop.minute:%Y-%m-%d %H:%M}Z",
            drop.why,
        )
        pipe.hincrby(DROPPED, drop.connection, 1)
        body = {"minute": drop.minute.isoformat(), "why": drop.why}
        pipe.hset(LAST_DROP, drop.connection, json.dumps(body))
    pipe.execute()


def mark_started(client: redis.Redis, connection: str, minute: datetime, started: datetime) -> None:
    """A sweep of `minute` starts: no longer waiting; its connection was served this minute
    (one round trip)."""
    pipe = client.pipeline(transaction=False)
    count_started(pipe, connection, minute, started)
    pipe.execute()


def count_started(pipe: Any, connection: str, minute: datetime, started: datetime) -> None:
    """In a pipeline (the worker's own as it starts the job, `jobs.worker.SweepWorker`): a
    sweep of `minute` starts, as `mark_started` writes it."""
    lag = max(0.0, (started - minute).total_seconds())
    pipe.eval(_START, 2, WAITING, SERVED, connection, str(_epoch(minute)))
    pipe.hset(LAG, connection, round(lag, 3))
    _observe(pipe, "lag", lag)


def mark_finished(
    client: redis.Redis, connection: str, *, seconds: float, moved: int, set_aside: int
) -> None:
    """A sweep ended: counted, with the rows it moved and set aside and how long it took
    (one round trip)."""
    pipe = client.pipeline(transaction=False)
    count_finished(pipe, connection, seconds=seconds, moved=moved, set_aside=set_aside)
    pipe.execute()


def count_finished(
    pipe: Any, connection: str, *, seconds: float, moved: int, set_aside: int
) -> None:
    """In a pipeline (sent with what else the sweep's end writes): a sweep ended, counted
    with the rows it moved and set aside and how long it took."""
    pipe.hincrby(COUNTS["run"], connection, 1)
    if moved:
        pipe.hincrby(COUNTS["moved"], connection, moved)
    if set_aside:
        pipe.hincrby(COUNTS["set_aside"], connection, set_aside)
    pipe.hset(DURATION, connection, round(seconds, 4))
    _observe(pipe, "duration", seconds)


def _observe(pipe: Any, histogram: str, value: float) -> None:
    key = HISTOGRAMS[histogram]
    bucket = next((str(bound) for bound in BUCKETS if value <= bound), "+Inf")
    pipe.hincrby(key, bucket, 1)
    pipe.hincrbyfloat(key, "sum", value)


def missed(client: redis.Redis | None, connection: str) -> Missed | None:
    """A connection's dropped sweeps (None when none, or no Redis is named)."""
    if client is None:
        return None
    try:
        count, last = client.hget(DROPPED, connection), client.hget(LAST_DROP, connection)
    except redis.RedisError as error:
        log.warning("dropped sweeps of connection %s not read: %s", connection, error)
        return None
    if not count or not last:
        return None
    body = json.loads(last)
    return Missed(int(count), datetime.fromisoformat(body["minute"]), body["why"])


def figures(client: redis.Redis) -> dict[str, dict[str, float]]:
    """Every per-connection figure by name: run, moved, set_aside, dropped, lag, duration."""
    keys = {**COUNTS, "dropped": DROPPED, "lag": LAG, "duration": DURATION}
    pipe = client.pipeline(transaction=False)
    for key in keys.values():
        pipe.hgetall(key)
    return {
        name: {_text(k): float(v) for k, v in found.items()}
        for name, found in zip(keys, pipe.execute(), strict=True)
    }


def histogram(client: redis.Redis, name: str) -> tuple[list[tuple[str, float]], float]:
    """A histogram's cumulative buckets (le, count), "+Inf" last, and its sum."""
    found: Mapping[Any, Any] = client.hgetall(HISTOGRAMS[name])
    values = {_text(k): float(v) for k, v in found.items()}
    cumulative, buckets = 0.0, []
    for bound in [*(str(b) for b in BUCKETS), "+Inf"]:
        cumulative += values.get(bound, 0.0)
        buckets.append((bound, cumulative))
    return buckets, values.get("sum", 0.0)


def queue_figures(client: redis.Redis) -> tuple[int, int]:
    """(jobs waiting in the queue, workers listening to it), cluster-wide."""
    queue = Queue(QUEUE, connection=client)
    return queue.count, Worker.count(connection=client, queue=queue)


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value
