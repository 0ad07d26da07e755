"""Pending timed moves across a connection, next due first: row, rule, moment and how it was
read, time left; above them the next 24 hours as a timeline of moves per hour, by rule."""

from __future__ import annotations

from datetime import timedelta

from flask import render_template

from core.sweep.hold_reads import waiting_holds
from core.sweep.pending import (
    PENDING_HORIZON,
    pending_moves,
    rows_without_moment,
    unreadable_moments,
)
from services.apps import swept_stores
from web.context import clock
from web.language import speech
from web.screens import timeline
from web.screens.access import is_htmx, screen_blueprint, screen_connection
from web.screens.clock_health import clock_state

bp = screen_blueprint("pending", __name__)


def pending_context(name: str) -> dict[str, object]:
    """What the pending page and its partial render."""
    connection, apps = screen_connection(name)
    stores = [s for s in swept_stores(connection) if s.app.name in {a.name for a in apps}]
    now = clock()
    zone = stores[0].zone if stores else None
    chart = None
    if zone is not None:
        by = timeline.hour_start(now, zone) + timedelta(hours=timeline.HOURS)
        counted = pending_moves(stores, by=by, now=now, limit=timeline.LIMIT + 1)
        capped = len(counted) > timeline.LIMIT
        chart = timeline.timeline(counted[: timeline.LIMIT], now, zone, capped)
    return {
        "connection": connection,
        "zone": zone,
        "moves": pending_moves(stores, by=now + PENDING_HORIZON, now=now, say=speech()),
        "no_time": rows_without_moment(stores, say=speech()),
        "unreadable": unreadable_moments(stores),
        "holds": waiting_holds(stores),
        "horizon_days": PENDING_HORIZON.days,
        "timeline": chart,
        "now": now,
        "health_state": clock_state(connection),
        "app_models": {a.name: a.model for a in apps},
    }


@bp.get("/connections/<name>/pending")
def list_pending(name: str) -> str:
    """The pending timed moves page."""
    template = "screens/_pending.html" if is_htmx() else "screens/pending.html"
    return render_template(template, **pending_context(name))


@bp.get("/connections/<name>/pending/list")
def show_pending_list(name: str) -> str:
    """The list alone: what a reopened socket refetches."""
    return render_template("screens/_pending.html", **pending_context(name))
