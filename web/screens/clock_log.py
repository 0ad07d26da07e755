"""The clock's log of a connection: the minutes of the last day, each sweep's moves,
set-aside rows, give-backs and faults, the minutes a stall skipped shown as gaps; filtered
by app. Linked from the connection's card and the app bar."""

from __future__ import annotations

from typing import Any

from flask import render_template, request

from core.sweep.minutes import read_clock_log, what_words, when_words
from services.apps import app_store
from web.context import clock
from web.language import speech
from web.screens.access import is_htmx, screen_blueprint, screen_connection
from web.screens.clock_health import clock_state

bp = screen_blueprint("clock_log", __name__)


def clock_log_context(name: str) -> dict[str, Any]:
    """What the clock's log and its partial render: the lines of the app asked for (`app`),
    or of every app the user sees (the whole record's counts when that is every app)."""
    connection, apps = screen_connection(name)
    swept = [a for a in apps if a.has_minute_work]
    picked = request.args.get("app", "").strip()
    chosen = next((a for a in swept if a.name == picked), None)
    every = {a.name for a in connection.apps if a.has_minute_work} <= {a.name for a in apps}
    names = [chosen.name] if chosen else (None if every else [a.name for a in swept])
    now = clock()
    log = None
    zone = None
    if swept:
        store = app_store(swept[0])
        zone = store.zone
        with store.engine.connect() as conn:
            log = read_clock_log(conn, connection.name, now=now, apps=names)
    return {
        "connection": connection,
        "apps": swept,
        "chosen": chosen,
        "log": log,
        "zone": zone,
        "now": now,
        "health_state": clock_state(connection),
        "when_words": lambda line, now, zone: when_words(line, now, zone, speech()),
        "what_words": lambda line: what_words(line, speech()),
    }


@bp.get("/connections/<name>/clock-state")
def show_clock_state(name: str) -> str:
    """The header's clock state of a connection as it reads now: a screen asks for it again
    whenever its socket opens (a change pushed while it was closed, or a push that raced
    Redis coming back, is not left in the header)."""
    connection, _ = screen_connection(name)
    return render_template(
        "screens/_clock_state.html", connection=connection, state=clock_state(connection, True)
    )


@bp.get("/connections/<name>/clock")
def show_clock_log(name: str) -> str:
    """The clock's log page (htmx asks for its list alone)."""
    template = "screens/_clock_log.html" if is_htmx() else "screens/clock_log.html"
    return render_template(template, **clock_log_context(name))
