"""The board: an app table's rows grouped by state, a column per state, with active search."""

from __future__ import annotations

from flask import jsonify, render_template, request
from werkzeug.wrappers import Response

from core.basics.errors import echo
from core.sweep.pending import keys_set_aside, set_aside_rows
from services.apps import app_store
from services.models import App, Connection
from web.context import clock
from web.errors import NotFound
from web.screens.access import all_connections, is_htmx, require_user, screen_app, screen_blueprint
from web.screens.clock_health import ClockState, clock_state
from web.screens.reading import read_board

bp = screen_blueprint("boards", __name__)


def board_table(app: App, table: str) -> None:
    """Refuse a table the app lacks, or one that keeps no states."""
    spec = app.model.tables.get(table)
    if spec is None or spec.states is None:
        raise NotFound(f"no board {echo(table)!r} in app {app.name!r}", {"table": echo(table)})


def _board_context(connection: str, name: str, table: str, wall: bool = False) -> dict[str, object]:
    """What the board page and its partial render."""
    app, _ = screen_app(connection, name)
    board_table(app, table)
    store = app_store(app)
    q = request.args.get("q", "").strip()
    state = request.args.get("state", "").strip()
    now = clock()
    asides = set_aside_rows([store], table=table)
    return {
        "app": app,
        "connection": app.connection,
        "zone": store.zone,
        "board": read_board(store, table, q, state, now),
        "aside_keys": keys_set_aside(asides),
        "aside_whys": {(a.rule.table, a.key): a.message for a in asides},
        "health_state": clock_state(app.connection),
        "q": q,
        "state": state,
        "now": now,
        "wall": wall or request.args.get("wall") == "1",
    }


@bp.get("/apps/<connection>/<name>/<table>")
def show_board(connection: str, name: str, table: str) -> str:
    """The board page; htmx's active search gets the board partial alone."""
    context = _board_context(connection, name, table)
    if is_htmx():
        return render_template("screens/_board.html", **context)
    return render_template("screens/board.html", **context)


@bp.get("/apps/<connection>/<name>/<table>/wall")
def show_wall(connection: str, name: str, table: str) -> str:
    """The board for a wall: no controls, large type, every column in view; live all shift."""
    return render_template("screens/wall.html", **_board_context(connection, name, table, True))


@bp.get("/apps/<connection>/<name>/<table>/columns")
def show_columns(connection: str, name: str, table: str) -> str:
    """The board's columns alone: what an open board refetches when its socket (re)opens
    (and each minute, so times left and urgency stay true)."""
    return render_template("screens/_columns.html", **_board_context(connection, name, table))


@bp.app_template_global()
def clock_state_of(connection: Connection, fresh: bool = False) -> ClockState:
    """A connection's one clock state (the header's and the wall's words)."""
    return clock_state(connection, fresh)


SEVERITY = {"running": 0, "paused": 1, "stalled": 2, "redis": 3}
"""Which clock state the header of a screen of many connections says: the worst."""


@bp.app_template_global()
def worst_clock_state() -> tuple[Connection, ClockState] | None:
    """The connection, of those the signed-in user sees, whose clock is worst off, and its
    state (what the header of /connections says); None when the user sees none."""
    states = [(c, clock_state(c)) for c, _ in all_connections(require_user())]
    return max(states, key=lambda found: SEVERITY.get(found[1].kind, 0), default=None)


@bp.get("/clock")
def server_clock() -> Response:
    """The server's "now" (the web's clock), to the microsecond: what a screen's clock sets
    itself by, the request's round trip taken into account."""
    answer = jsonify({"now": clock().isoformat()})
    answer.headers["Cache-Control"] = "no-store"
    return answer
