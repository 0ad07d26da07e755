"""Whether a connection's minute sweep keeps time: its last sweep, what it did lately, stalls.

The sweep runs once a minute and records each run (`core.sweep_records`). A connection
whose latest record is older than two missed minutes has stalled: its worker or clock
process is gone, and no timed move is made until it comes back. The screens show this
(a banner, the connections card); the rule lives here once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from core.sweep_records import recent_sweeps, sweeps

SWEEP_EVERY = timedelta(minutes=1)
"""How often the sweep runs."""
MISSED_MINUTES = 2
"""How many sweeps may be missed before a connection counts as stalled."""
STALLED_AFTER = SWEEP_EVERY * MISSED_MINUTES + timedelta(seconds=30)
"""How old the last sweep may be: two missed minutes, and half a minute for the job's own
run (a sweep records the minute it started)."""
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
    """Minutes since the last sweep once two minutes were missed, else None (no sweep yet:
    None too, as nothing says when one was due)."""
    if last_at is None or now - last_at <= STALLED_AFTER:
        return None
    return int((now - last_at).total_seconds() // 60)


def read_health(conn: sa.Connection, connection: str, now: datetime) -> SweepHealth:
    """A connection's sweep health at `now`, from its sweep records."""
    found = recent_sweeps(conn, connection, limit=1)
    last = found[0] if found else None
    moved = conn.execute(
        sa.select(sa.func.coalesce(sa.func.sum(sweeps.c.moved), 0)).where(
            sweeps.c.connection == connection,
            sweeps.c.at > now - MOVED_WINDOW,
            sweeps.c.at <= now,
        )
    ).scalar_one()
    return SweepHealth(last, int(moved), stalled_minutes(last["at"] if last else None, now))
