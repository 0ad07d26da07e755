"""Pending timed moves across a connection, next due first: row, rule, moment, time left."""

from __future__ import annotations

from flask import render_template

from web.api import clock
from web.controlplane import app_store
from web.screens.access import is_htmx, screen_blueprint, screen_connection
from web.screens.timed import PENDING_HORIZON, pending_moves

bp = screen_blueprint("pending", __name__)


def pending_context(name: str) -> dict[str, object]:
    """What the pending page and its partial render."""
    connection, apps = screen_connection(name)
    stores = [app_store(a) for a in apps if a.has_timed_moves]
    now = clock()
    return {
        "connection": connection,
        "zone": stores[0].zone if stores else None,
        "moves": pending_moves(stores, now),
        "horizon_days": PENDING_HORIZON.days,
        "now": now,
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
