"""The row page: fields, the moves open to the user, the timed move it waits on, set aside or
not, and its audit history. Moves and edits go through the write pipeline."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask import render_template, request
from flask_babel import gettext as _

from core.basics.errors import AdminiumError, echo
from core.manifest.model import MoveSpec, Table, Timed
from core.preview.preview import Preview
from core.store.refused_log import RefusedAttempt, row_refusals
from core.store.store import Store
from core.sweep.hold_reads import row_postings
from core.sweep.pending import rules_of, set_aside_rows, waiting_for_no_time
from services.apps import app_store
from services.models import App, db
from services.preview import ValueChange, preview_values
from web.api import parse_key
from web.context import clock
from web.errors import NotFound, status_of
from web.language import speech
from web.screens import writing
from web.screens.access import person, require_user, screen_app, screen_blueprint
from web.screens.labels import column_label, state_label, table_label
from web.screens.reading import editable_columns, read_row_view, states_of
from web.screens.times import value as shown_value
from web.screens.words import error_refusal

bp = screen_blueprint("rows", __name__)


def row_key(store: Store, table: str, raw: str) -> Any:
    """A key from the URL as its column's type; 404 when no row could have it."""
    if table not in store.app.tables:
        raise NotFound(f"no table {echo(table)!r}", {"table": echo(table)})
    key = parse_key(store.spec(table), raw)
    if key is None:
        raise NotFound(f"no row {echo(raw)!r} in {table}", {"table": table, "key": echo(raw)})
    return key


@bp.app_template_global()
def is_undo(spec: Table, state_from: str | None, state_to: str | None) -> bool:
    """Whether a move in a row's history was an undo (the table lists it so)."""
    if spec.states is None or state_from is None:
        return False
    listed = spec.states.moves.get(state_from, [])
    return any(isinstance(m, MoveSpec) and m.undo and m.to == state_to for m in listed)


def row_context(
    app: App,
    table: str,
    raw: str,
    roles: frozenset[str],
    error: AdminiumError | None = None,
    seen: str | None = None,
) -> dict[str, Any]:
    """What the row page and its partial render (after a refused move, the state the person
    saw, so a row that moved since says what it is now)."""
    store = app_store(app)
    key = row_key(store, table, raw)
    view = read_row_view(store, table, key, roles)
    if view is None:
        raise NotFound(f"no row {echo(raw)!r} in {table}", {"table": table, "key": echo(raw)})
    spec = store.spec(table)
    now = clock()
    no_time = None
    if view.card.waiting is None and spec.states is not None:
        with store.engine.connect() as conn:
            tables = store.read_clock_tables(conn)
        no_time = waiting_for_no_time(rules_of(store, table), view.row, tables, speech())
    with store.engine.connect() as conn:
        refusals = row_refusals(conn, app.name, table, str(view.card.key))
    return {
        "history": history_lines(view.history, refusals, spec),
        "no_time": no_time,
        "app": app,
        "connection": app.connection,
        "zone": store.zone,
        "view": view,
        "spec": spec,
        "states": list(states_of(spec)) if spec.states is not None else [],
        "editable": editable_columns(spec),
        "asides": set_aside_rows([store], table=table, key=str(view.card.key)),
        "postings": row_postings(store, table, str(view.card.key)) if spec.postings else None,
        "error": error,
        "seen": seen,
        "now": now,
        "clock_table": table in store.clock_tables(),
    }


@dataclass(frozen=True)
class HistoryLine:
    """One line of a row's history, the newest first: an audit entry (a change) or a refused
    attempt of the clock (it changed nothing, and says why)."""

    at: datetime
    entry: dict[str, Any] | None = None
    refused: RefusedAttempt | None = None
    timed: Timed | None = None
    """The timed rule a refused attempt tried (None for a hold's give-back)."""


def history_lines(
    entries: Sequence[dict[str, Any]], refusals: Sequence[RefusedAttempt], spec: Table
) -> list[HistoryLine]:
    """A row's audit entries and the clock's refused attempts, one history, the newest
    first (at one instant, the refusal after the change it followed)."""
    rules = list(spec.states.timed or []) if spec.states is not None else []
    lines = [HistoryLine(e["at"], entry=e) for e in entries]
    lines += [
        HistoryLine(r.at, refused=r, timed=rules[r.rule - 1] if 0 < r.rule <= len(rules) else None)
        for r in refusals
    ]
    return sorted(lines, key=lambda line: (line.at, line.refused is not None), reverse=True)


@bp.get("/apps/<connection>/<name>/<table>/<key>")
def show_row(connection: str, name: str, table: str, key: str) -> str:
    """The row page."""
    app, roles = screen_app(connection, name)
    return render_template("screens/row.html", **row_context(app, table, key, roles))


@bp.get("/apps/<connection>/<name>/<table>/<key>/detail")
def show_detail(connection: str, name: str, table: str, key: str) -> str:
    """The row page's partial alone (what htmx and a reopened socket fetch)."""
    app, roles = screen_app(connection, name)
    return render_template("screens/_row.html", **row_context(app, table, key, roles))


def _write_then_detail(
    connection: str, name: str, table: str, key: str, action: str
) -> tuple[str, int]:
    """Make a screen's write, then answer the row's partial (with the refusal, if any) and a
    toast of what was done; a toast's Undo (`answer=toast`) is answered by a toast alone. A
    refusal answers with its own status (docs/errors.md); htmx swaps it in all the same."""
    app, roles = screen_app(connection, name)
    store = app_store(app)
    parsed = row_key(store, table, key)
    actor = person(require_user(), roles)
    spec = store.spec(table)
    named = writing.row_words(spec, table, key)
    error = None
    answer: writing.Answer
    try:
        if action == "move":
            left = request.form.get("seen") or ""
            result = writing.move(store, table, parsed, actor, request.form["to"], left or None)
            answer = writing.moved_answer(app, spec, table, key, left, result, roles)
        else:
            column = request.form["column"]
            ahead = _edit_preview(app, store, table, parsed, column)
            if ahead is not None and ahead.due_at_once and request.form.get("confirmed") != "1":
                # Saving makes rows due at once: asked once more, with what would move.
                context = row_context(app, table, key, roles)
                words = _(
                    "Not saved yet: %(what)s Save again to confirm.",
                    what=_preview_words(ahead, store),
                )
                html = render_template(
                    "screens/_row.html",
                    **context,
                    said=words,
                    said_kind="refused",
                    preview=ahead,
                    confirm={"column": column, "value": request.form.get("value", "")},
                )
                return html, 200
            result = writing.edit(
                store, table, parsed, actor, column, request.form.get("value", "")
            )
            now_is = shown_value(result.row.get(column), store.zone)
            answer = writing.Answer(
                _(
                    "Saved: %(row)s: %(field)s is now %(value)s.",
                    row=named,
                    field=column_label(column, spec),
                    value=now_is,
                )
            )
    except writing.NothingToChange as same:
        answer = writing.Answer(same.words, "refused")
    except AdminiumError as refused:
        error = refused
    status = status_of(error) if error is not None else 200
    seen = request.form.get("seen") if action == "move" else None
    context = row_context(app, table, key, roles, error, seen)
    if error is not None:
        to = request.form.get("to") if action == "move" else None
        context["staff"] = error_refusal(error, app, table, to, context["view"].row)
        answer = writing.refused_answer(writing.not_done(), named, context["staff"])
    if request.form.get("answer") == "toast":
        return writing.toast(answer), status
    said = answer.words if error is None else ""
    html = render_template("screens/_row.html", **context, said=said, said_kind=answer.kind)
    return html + writing.toast(answer), status


@bp.post("/apps/<connection>/<name>/<table>/<key>/move")
def move_row(connection: str, name: str, table: str, key: str) -> tuple[str, int]:
    """Move the row by a listed move (an undo names the state the person saw)."""
    return _write_then_detail(connection, name, table, key, "move")


@bp.post("/apps/<connection>/<name>/<table>/<key>/edit")
def edit_row(connection: str, name: str, table: str, key: str) -> tuple[str, int]:
    """Change one field of the row."""
    return _write_then_detail(connection, name, table, key, "edit")


def _edit_preview(app: App, store: Store, table: str, key: Any, column: str) -> Preview | None:
    """What saving the form's value in a row of a table moments read would change (None
    for another table, or a value the column does not take: the save says why)."""
    if table not in store.clock_tables():
        return None
    found = next((c for c in store.spec(table).columns if c.ref == column), None)
    if found is None:
        return None
    try:
        value = writing.form_value(found, request.form.get("value", ""), store)
        change = ValueChange(f"{app.name}.{table}", column, value, key)
        return preview_values(db.session, app.connection.name, [change], now=clock())
    except AdminiumError:
        return None
    finally:
        db.session.rollback()


def _preview_words(preview: Preview, store: Store) -> str:
    """`Saving makes 3 orders move to Cancelled at the next minute; 1 moment earlier.`"""
    say = speech()
    parts: list[str] = []
    groups: dict[tuple[str, str], int] = {}
    for change in preview.due_at_once:
        groups[(change.table, change.what)] = groups.get((change.table, change.what), 0) + 1
    for (table, what), count in sorted(groups.items()):
        spec = store.app.tables.get(table)
        name = table_label(spec, table) if spec is not None else table
        if what.startswith("hold"):
            parts.append(
                say(
                    "%(count)s %(table)s given back their hold at the next minute",
                    count=count,
                    table=name,
                )
            )
        else:
            to = what.split(" → ")[-1]
            parts.append(
                say(
                    "%(count)s %(table)s moved to %(state)s at the next minute",
                    count=count,
                    table=name,
                    state=state_label(to, spec),
                )
            )
    counts = preview.counts()
    if counts.get("sent-at-once"):
        parts.append(
            say.plural(
                "%(num)d reminder sent at the next minute",
                "%(num)d reminders sent at the next minute",
                counts["sent-at-once"],
            )
        )
    if counts.get("earlier"):
        parts.append(
            say.plural("%(num)d moment earlier", "%(num)d moments earlier", counts["earlier"])
        )
    if counts.get("later"):
        parts.append(say.plural("%(num)d moment later", "%(num)d moments later", counts["later"]))
    if counts.get("no-longer-due"):
        parts.append(say("%(count)s no longer due", count=counts["no-longer-due"]))
    if not parts:
        return say("Saving changes no timed move, hold or reminder.")
    return say("Saving makes %(what)s.", what="; ".join(parts))


@bp.post("/apps/<connection>/<name>/<table>/<key>/preview")
def preview_edit(connection: str, name: str, table: str, key: str) -> str:
    """What saving the edit form's value would change, before Save (nothing is saved)."""
    app, _ = screen_app(connection, name)
    store = app_store(app)
    parsed = row_key(store, table, key)
    found = _edit_preview(app, store, table, parsed, request.form.get("column", ""))
    if found is None:
        return ""
    return render_template(
        "screens/_preview.html",
        preview=found,
        words=_preview_words(found, store),
        connection=app.connection,
        zone=store.zone,
        now=found.now,
    )
