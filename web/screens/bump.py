"""Bump and recall: a ticket moved on with one tap, and the last ones bumped brought back.

On the board (and on a wall opened as `?touch=1`) each card bumps to its table's first
forward move (undos aside) that the person's roles allow, through the write pipeline like
any move of a screen (the person's roles, CSRF, the state they saw). The answer is the
toast of any move, with the Undo the table lists. The screen keeps the last 10 tickets it
bumped (static/js/bump.js) and its recall list offers each its undo move back to the state
it was bumped from, where the table lists one. The plain wall is display-only: its cards
are no links and bump nothing (`card_view`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

from flask import g, render_template, request, url_for
from flask_babel import gettext

from core.basics.errors import AdminiumError, StateMoveNotListed
from core.manifest.model import MoveSpec, Table
from services.apps import app_store
from services.models import App
from web.context import clock
from web.errors import status_of
from web.screens import writing
from web.screens.access import person, require_user, screen_app, screen_blueprint
from web.screens.boards import board_table
from web.screens.labels import state_label
from web.screens.reading import open_moves
from web.screens.rows import row_key
from web.screens.words import error_refusal

bp = screen_blueprint("bump", __name__)

RECALL_SIZE = 10
"""How many of the tickets bumped on a screen its recall list keeps (static/js/bump.js)."""
BUMPED_HEADER = "Adminium-Bumped"
"""The answer's header naming what a bump moved (JSON: key, left, to, at), for the recall
list."""
VIEWS = ("", "wall", "touch")
"""How a board's cards are drawn: the board ("": links to the row, bumps), the plain wall
("wall": display-only, no links) and the touch wall ("touch": a tap bumps, no links)."""


def forward_move(spec: Table, state: str, roles: frozenset[str]) -> MoveSpec | None:
    """The first move the table lists from `state` that is no undo and these roles may make."""
    return next((m for m in open_moves(spec, state, roles) if not m.undo), None)


@bp.app_template_global()
def card_view() -> str:
    """How this render draws a board's cards (see VIEWS): a pushed fragment says so for its
    socket's screen (`g.card_view`, set by the live hub), a page by its address."""
    pushed = g.get("card_view")
    if pushed is not None:
        return str(pushed)
    asked = request.args.get("view", "")
    if request.endpoint == "boards.show_wall":
        asked = "touch" if request.args.get("touch") == "1" else "wall"
    return asked if asked in VIEWS else ""


@bp.app_template_global()
def bump_moves(app: App, table: str) -> str:
    """What a tap on a card does on this board, for the signed-in person: each state's
    forward move and its words, as JSON (`{"placed": {"to": "confirmed", "words": …}}`)."""
    _, roles = screen_app(app.connection.name, app.name)
    spec = app.model.tables[table]
    moves: dict[str, dict[str, str]] = {}
    for state in spec.states.moves if spec.states is not None else {}:
        found = forward_move(spec, state, roles)
        if found is not None:
            moves[state] = {"to": found.to, "words": state_label(found.to, spec)}
    return json.dumps(moves, sort_keys=True)


@bp.post("/apps/<connection>/<name>/<table>/<key>/bump")
def bump_row(connection: str, name: str, table: str, key: str) -> tuple[str, int, dict[str, str]]:
    """Move a ticket from the state the person saw (`seen`) by its first forward move; the
    answer is the move's toast (with the Undo the table lists), or the refusal's."""
    app, roles = screen_app(connection, name)
    board_table(app, table)
    store = app_store(app)
    parsed = row_key(store, table, key)
    spec = store.spec(table)
    seen = request.form.get("seen", "")
    named = writing.row_words(spec, table, key)
    move = forward_move(spec, seen, roles)
    if move is None:
        words = gettext(
            "Not bumped: %(row)s: no move on from %(state)s is yours to make.",
            row=named,
            state=state_label(seen, spec),
        )
        answer = writing.Answer(words, "refused", code=StateMoveNotListed.code)
        return writing.toast(answer), 409, {}
    actor = person(require_user(), roles)
    try:
        result = writing.move(store, table, parsed, actor, move.to, seen)
    except AdminiumError as error:
        with store.engine.connect() as conn:
            row = store.read_row(conn, table, parsed)
        refusal = error_refusal(error, app, table, move.to, row)
        return (
            writing.toast(writing.refused_answer(gettext("Not bumped"), named, refusal)),
            status_of(error),
            {},
        )
    answer = writing.moved_answer(app, spec, table, key, seen, result, roles)
    bumped = {"key": str(key), "left": seen, "to": move.to, "at": clock().isoformat()}
    return writing.toast(answer), 200, {BUMPED_HEADER: json.dumps(bumped)}


@dataclass(frozen=True)
class Recalled:
    """One ticket of a recall list: where it was bumped from and to, where it is now, and
    the undo back that the table lists (None: none, or it is back already)."""

    key: str
    left: str
    to: str
    state: str | None
    """Its state now (None: the row is gone)."""
    at: datetime | None
    undo: writing.Undo | None


@bp.get("/apps/<connection>/<name>/<table>/recall")
def show_recall(connection: str, name: str, table: str) -> str:
    """The recall list of the tickets a screen bumped (`key`, `left`, `to`, `at`, the newest
    first, as the screen keeps them): each as it is now, with its undo move back."""
    app, roles = screen_app(connection, name)
    board_table(app, table)
    store = app_store(app)
    spec = store.spec(table)
    state_column = spec.states.column if spec.states is not None else ""
    args = request.args
    found: list[Recalled] = []
    listed = zip(
        args.getlist("key"),
        args.getlist("left"),
        args.getlist("to"),
        args.getlist("at"),
        strict=False,
    )
    for key, left, to, at in list(listed)[:RECALL_SIZE]:
        try:
            parsed = row_key(store, table, key)
        except AdminiumError:
            continue
        with store.engine.connect() as conn:
            row = store.read_row(conn, table, parsed)
        state = None if row is None else str(row.get(state_column))
        undo = None
        if state is not None and state != left:
            undo = writing.undo_of(app, spec, table, key, left, state, roles)
        found.append(Recalled(key, left, to, state, _instant(at), undo))
    return render_template(
        "screens/_recall.html",
        recalled=found,
        spec=spec,
        zone=store.zone,
        now=clock(),
        table=table,
        board_url=url_for("boards.show_board", connection=connection, name=name, table=table),
    )


def _instant(text: str) -> datetime | None:
    """When a ticket was bumped, as the bump's answer said it (ISO, the web's clock)."""
    try:
        found = datetime.fromisoformat(text)
    except ValueError:
        return None
    return found if found.utcoffset() is not None else found.replace(tzinfo=UTC)
