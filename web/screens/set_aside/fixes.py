"""The fixes of set-aside rows: one row's (move by hand, fix a field, try again now) and
several rows' at once, each answered with the item (or the line standing in its place) and
a toast."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from flask import render_template, request
from flask_babel import gettext as _

from core.basics.errors import AdminiumError
from core.store.store import Store
from core.sweep.pending import set_aside_rows
from services.apps import app_store
from services.sweeps import retry_set_aside
from web.context import clock, publisher
from web.errors import status_of
from web.language import speech
from web.screens import writing
from web.screens.access import (
    person,
    require_user,
    screen_app,
    screen_connection,
)
from web.screens.labels import column_label, label, state_label
from web.screens.reading import open_moves
from web.screens.rows import row_key
from web.screens.set_aside.items import bp, refused_again
from web.screens.times import value as shown_value
from web.screens.times import wall
from web.screens.words import error_refusal

log = logging.getLogger(__name__)

BULK_LIMIT = 100
"""How many rows one "several at once" answer takes."""


def _item(
    name: str,
    app_name: str,
    table: str,
    key: str,
    error: AdminiumError | None,
    answer: writing.Answer | None = None,
    oob: bool = False,
    error_to: str | None = None,
) -> str:
    """The row's list item after a fix, with what the fix did said in it (`.said`, kept when
    a push draws the item again); once it is no longer aside, a line saying what became of it
    stands in its place (a bulk answer: the item is deleted). A toast says it too."""
    app, roles = screen_app(name, app_name)
    store = app_store(app)
    found = set_aside_rows([store], table=table, key=key)
    aside = found[0] if found else None
    said = toast = ""
    if answer is not None:
        toast = writing.toast(answer)
        said = answer.words
        if aside is not None and answer.kind == "":
            said += (
                " It stays set aside until it moves: try again now, or the sweep tries at"
                f" {wall(aside.until, store.zone)}."
            )
    if aside is None:
        if error is not None and answer is None:
            said = error_refusal(error, store, table, error_to).sentence
        if oob:
            return f'<li id="aside-{table}-{key}" hx-swap-oob="delete"></li>'
        done = render_template("screens/_aside_done.html", table=table, key=key, said=said)
        return done + toast
    return (
        render_template(
            "screens/_aside.html",
            aside=aside,
            connection=app.connection,
            zone=store.zone,
            roles={app.name: roles},
            open_moves=open_moves,
            error=error,
            error_to=error_to,
            said=said,
            said_kind=answer.kind if answer else "",
            oob=oob,
            now=clock(),
        )
        + toast
    )


@bp.post("/connections/<name>/set-aside/<app_name>/<table>/<key>/<action>")
def fix_row(name: str, app_name: str, table: str, key: str, action: str) -> tuple[str, int]:
    """A fix: `move` by hand, `edit` a field (or the moment's column), or `retry` now. The
    answer is the item (or the line standing in its place) and a toast; a refusal answers
    with its own status (docs/errors.md: 403, 409, 422) and htmx swaps it in all the same."""
    app, roles = screen_app(name, app_name)
    store = app_store(app)
    parsed = row_key(store, table, key)
    spec = store.spec(table)
    named = writing.row_words(spec, table, key)
    before = set_aside_rows([store], table=table, key=key)
    left = str(before[0].row[before[0].rule.state_column]) if before else ""
    error = None
    answer: writing.Answer
    try:
        if action == "move":
            actor = person(require_user(), roles)
            to = request.form["to"]
            result = writing.move(store, table, parsed, actor, to, request.form.get("seen"))
            answer = writing.moved_answer(app, spec, table, key, left, result, roles)
            again = refused_again(before[0], to) if before else ""
            if again:
                answer = writing.Answer(f"{answer.words} {again}", "warn", answer.undo)
        elif action == "edit":
            actor = person(require_user(), roles)
            column = request.form["column"]
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
        else:
            retry_set_aside(store, table, key, now=clock(), publisher=publisher())
            answer = _retried(app, store, table, key, parsed, left, roles)
    except writing.NothingToChange as same:
        answer = writing.Answer(same.words, "refused")
    except AdminiumError as refused:
        # The item says why, and so does the toast: plain words, what to do, the code apart.
        error = refused
        what = _("Tried again now, refused again") if action == "retry" else writing.not_done()
        to = request.form.get("to") if action == "move" else None
        if to is None and before:
            to = before[0].rule.timed.to
        row = before[0].row if before else None
        staff = error_refusal(refused, store, table, to, row)
        answer = writing.refused_answer(what, named, staff)
    error_to = request.form.get("to") if action == "move" else None
    html = _item(name, app_name, table, key, error, answer, error_to=error_to)
    return html, status_of(error) if error is not None else 200


def _retried(
    app: Any, store: Store, table: str, key: str, parsed: Any, left: str, roles: frozenset[str]
) -> writing.Answer:
    """What "Try again now" did, when the clock did not refuse it again."""
    spec = store.spec(table)
    named = writing.row_words(spec, table, key)
    if set_aside_rows([store], table=table, key=key):
        return writing.Answer(
            _(
                "%(row)s is still set aside: another writer held it; the sweep tries again"
                " at the next minute.",
                row=named,
            ),
            "warn",
        )
    with store.engine.connect() as conn:
        row = store.read_row(conn, table, parsed)
    state_column = spec.states.column if spec.states else ""
    now = str(row.get(state_column)) if row is not None else left
    if row is None or now == left:
        return writing.Answer(_("%(row)s is no longer set aside.", row=named))
    words = _(
        "%(row)s moved to %(state)s by its timed move.", row=named, state=state_label(now, spec)
    )
    return writing.Answer(words, undo=writing.undo_of(app, spec, table, key, left, now, roles))


@dataclass(frozen=True)
class BulkLine:
    """One row of a "several at once" answer: what became of it, and why when refused."""

    app: str
    table: str
    key: str
    moved: bool
    words: str
    code: str = ""
    to_title: str = ""
    """The state moved to, as its table titles it."""


@bp.post("/connections/<name>/set-aside/bulk")
def fix_rows(name: str) -> str:
    """Several rows at once: `retry` each now, or `move` each to one state, each through the
    same operation as one row's fix; one answer lists what moved and what was refused."""
    screen_connection(name)
    action = request.form.get("action", "")
    to = request.form.get("to", "")
    picked = list(dict.fromkeys(request.form.getlist("rows")))[:BULK_LIMIT]
    lines: list[BulkLine] = []
    items: list[str] = []
    for ref in picked:
        app_name, _, rest = ref.partition("/")
        table, _, key = rest.partition("/")
        lines.append(_bulk_one(name, app_name, table, key, action, to))
        items.append(_item(name, app_name, table, key, None, oob=True))
    log.info(
        "set-aside rows of %s: %s %s of %s moved",
        name,
        action,
        sum(x.moved for x in lines),
        len(lines),
    )
    titles = [line.to_title for line in lines if line.to_title]
    to_title = titles[0] if titles else label(to)
    answer = render_template(
        "screens/_bulk_answer.html",
        lines=lines,
        action=action,
        to=to_title,
        asked=len(picked),
    )
    moved = sum(x.moved for x in lines)
    say = speech()
    said = (
        say(
            "%(moved)s of %(total)s moved to %(state)s.",
            moved=moved,
            total=len(lines),
            state=to_title,
        )
        if action == "move"
        else say("Tried again: %(moved)s of %(total)s moved.", moved=moved, total=len(lines))
    )
    kind = "" if moved == len(lines) else "warn"
    return answer + "".join(items) + (writing.toast(writing.Answer(said, kind)) if lines else "")


def _bulk_one(name: str, app_name: str, table: str, key: str, action: str, to: str) -> BulkLine:
    """One picked row through its fix: moved, or refused and why."""
    store: Store | None = None
    found: list[Any] = []
    try:
        app, roles = screen_app(name, app_name)
        store = app_store(app)
        parsed = row_key(store, table, key)
        found = set_aside_rows([store], table=table, key=key)
        if not found:
            return BulkLine(app_name, table, key, False, _("no longer set aside"))
        if action == "move":
            # The state the person saw: a set-aside row is in its rule's `from`.
            seen = found[0].rule.timed.from_
            writing.move(store, table, parsed, person(require_user(), roles), to, seen)
            title = state_label(to, store.spec(table))
            said = _("moved to %(state)s", state=title)
            return BulkLine(app_name, table, key, True, said, to_title=title)
        retry_set_aside(store, table, key, now=clock(), publisher=publisher())
    except AdminiumError as refused:
        aside = found[0] if found else None
        if store is None:
            return BulkLine(app_name, table, key, False, refused.message, refused.code)
        why = error_refusal(
            refused,
            store,
            table,
            to if action == "move" else (aside.rule.timed.to if aside else None),
            aside.row if aside else None,
        )
        return BulkLine(app_name, table, key, False, why.sentence, refused.code)
    if set_aside_rows([store], table=table, key=key):
        held = _("another writer held it: tried next minute")
        return BulkLine(app_name, table, key, False, held)
    return BulkLine(app_name, table, key, True, _("moved by its timed move"))
