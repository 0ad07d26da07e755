"""Whether a connection's minute sweep keeps time: its last sweep, what it did lately, stalls.

The sweep runs once a minute and records each run as it starts (`core.sweep.records`). A
connection whose latest record started more than two minutes ago has stalled: the sweep
due a minute after it did not come, nor in the minute the queue may take, so its worker or
clock process is gone (or Redis), and no timed move is made until it comes back. The
screens show this (a banner, the connections card); the rule lives here once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from core.store.schema import RUNNING, sweeps
from core.sweep.records import STOPPED, WENT_AWAY, moves_since_start, recent_sweeps

SWEEP_EVERY = timedelta(minutes=1)
"""How often the sweep runs."""
STALLED_AFTER = SWEEP_EVERY + timedelta(minutes=1)
"""How long ago the last sweep may have started: the next minute's sweep, and a minute for
its wait in the queue (at thousands of connections one may start late in its minute after
starting early in the one before). So a stall is said a minute after the first sweep that
did not come (the live screens check every 15 s); it was two and a half minutes after the
last one, 153-162 s after a worker was killed."""
ENDED_BY = timedelta(seconds=60)
"""A sweep stops moving at its 50 s deadline and its job is stopped at 58 s: a record still
running this long after it started belongs to a sweep that went away."""
MOVED_WINDOW = timedelta(hours=1)
"""How far back the connections card counts moved rows."""


@dataclass(frozen=True)
class SweepHealth:
    """A connection's sweep at a glance: its last record, moved lately, stalled or not."""

    last: dict[str, Any] | None
    moved_last_hour: int
    stalled_minutes: int | None
    """Whole minutes since the last sweep when it has stalled; None while it keeps time."""


def stalled_minutes(last_at: datetime | None, now: datetime) -> int | None:
    """Minutes since the last sweep started once the next one is a minute late, else None
    (no sweep yet: None too, as nothing says when one was due)."""
    if last_at is None or now - last_at <= STALLED_AFTER:
        return None
    return int((now - last_at).total_seconds() // 60)


def read_health(conn: sa.Connection, connection: str, now: datetime) -> SweepHealth:
    """A connection's sweep health at `now`, from its sweep records: the moves of a sweep
    still running (or gone before it ended) counted from the audit."""
    found = recent_sweeps(conn, connection, limit=1)
    last = found[0] if found else None
    window = (
        sweeps.c.connection == connection,
        sweeps.c.at > now - MOVED_WINDOW,
        sweeps.c.at <= now,
    )
    ended = sa.select(sa.func.coalesce(sa.func.sum(sweeps.c.moved), 0)).where(
        *window, sweeps.c.outcome != RUNNING
    )
    running = sa.select(sa.func.coalesce(sa.func.sum(moves_since_start()), 0)).where(
        *window, sweeps.c.outcome == RUNNING
    )
    moved = conn.execute(sa.select(ended.scalar_subquery() + running.scalar_subquery()))
    if last is not None and last["outcome"] == RUNNING:
        so_far = sa.select(moves_since_start()).where(sweeps.c.id == last["id"])
        last = {**last, "moved": int(conn.execute(so_far).scalar_one())}
        if now - last["at"] > ENDED_BY:
            last.update(outcome=STOPPED, error=WENT_AWAY)
    return SweepHealth(
        last, int(moved.scalar_one()), stalled_minutes(last["at"] if last else None, now)
    )
