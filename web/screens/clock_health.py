"""The clock's health as the screens show it: the stalled banner's minutes, a card's figures.

The rule (two missed minutes) is `core.sweep_health`'s; this reads it for a connection of
the control plane, on the web's clock. A paused connection is never stalled: its paused
banner already says why nothing moves.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.exc import DBAPIError

from core.pending import PENDING_HORIZON, pending_moves
from core.store import Store
from core.sweep_health import SweepHealth, read_health
from services.apps import swept_stores
from services.models import Connection
from web.context import clock

log = logging.getLogger(__name__)

NEXT_DUE_LOOK = 20
"""How many pending moves the card reads to find the next one not set aside."""


@dataclass(frozen=True)
class ClockFigures:
    """A connection card's sweep figures: health, and when the next timed move is due."""

    health: SweepHealth
    next_due: datetime | None


def stall_of(connection: Connection) -> int | None:
    """Minutes since the connection's last sweep once it has stalled, else None."""
    if connection.paused:
        return None
    stores = swept_stores(connection)
    if not stores:
        return None
    try:
        with stores[0].engine.connect() as conn:
            return read_health(conn, connection.name, clock()).stalled_minutes
    except DBAPIError:
        log.warning("connection %s: its database did not answer the sweep check", connection.name)
        return None


def clock_figures(stores: list[Store], connection: Connection, now: datetime) -> ClockFigures:
    """Last sweep, moved in the last hour, stalled or not, and the next move due."""
    with stores[0].engine.connect() as conn:
        health = read_health(conn, connection.name, now)
    if connection.paused:
        health = SweepHealth(health.last, health.moved_last_hour, None)
    coming = pending_moves(stores, by=now + PENDING_HORIZON, now=now, limit=NEXT_DUE_LOOK)
    next_due = next((p.moment for p in coming if not p.set_aside), None)
    return ClockFigures(health, next_due)
