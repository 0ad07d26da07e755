"""Due hints in Redis: each connection's next due moment, so the tick sweeps first the
connections with something due now (`core.sweep.next_due`).

A sweep leaves the connection's hint as it found it (the earliest moment after its `now`
something may fall due; none when nothing waits); a write through the pipeline makes it
earlier when the row it wrote falls due sooner. The tick puts the connections whose hint
falls in its minute (or before) first, in their fair order, then the rest in theirs:
every connection is still swept each minute, so a row written in plain SQL (no hint)
still moves within its minute. Hints are best effort: Redis failing loses an order,
never a sweep.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

import redis

from core.store.store import Store
from core.sweep.next_due import row_due
from core.writes.pipeline import WriteResult
from services.events import Publisher

log = logging.getLogger(__name__)

HINTS = "adminium:sweeps:next-due"
"""Sorted set: connection -> epoch seconds of its next due moment (a lower bound)."""


def leave_hint(client: redis.Redis, connection: str, moment: datetime | None) -> None:
    """After a sweep: the connection's next due moment, or no hint when nothing waits."""
    if moment is None:
        client.zrem(HINTS, connection)
    else:
        client.zadd(HINTS, {connection: moment.timestamp()})


def hint_writes(
    publisher: Publisher, store: Store, results: Iterable[WriteResult], now: datetime
) -> None:
    """After writes through the pipeline: the connection's hint made earlier when a row
    written falls due sooner (ZADD LT: a later moment leaves an earlier hint as it is)."""
    if publisher.client is None:
        return
    hint = writes_hint(store, results, now)
    if hint is None:
        return
    try:
        hint(publisher.client)
    except redis.RedisError as error:
        log.warning("due hint of connection %s not kept: %s", store.connection, error)


def writes_hint(
    store: Store, results: Iterable[WriteResult], now: datetime
) -> Callable[[Any], object] | None:
    """The hint `hint_writes` leaves, as the command that leaves it on a client or a
    pipeline (a person's write sends it in the pipeline of its events); None when no row
    written falls due by a timed move."""
    if not store.connection:
        return None
    moments = [
        moment
        for result in results
        if (moment := row_due(store, result.table, result.row, now)) is not None
    ]
    if not moments:
        return None
    connection, at = store.connection, min(moments).timestamp()
    return lambda client: client.zadd(HINTS, {connection: at}, lt=True)


def due_first(
    client: redis.Redis, names: Sequence[str], minute: datetime
) -> tuple[list[str], list[str]]:
    """The connections with a hint before the end of `minute`, and the rest, each in the
    order given."""
    if not names:
        return [], []
    end = (minute + timedelta(minutes=1)).timestamp()
    hints = client.zmscore(HINTS, list(names))
    due = [n for n, h in zip(names, hints, strict=True) if h is not None and h < end]
    first = set(due)
    return due, [n for n in names if n not in first]
