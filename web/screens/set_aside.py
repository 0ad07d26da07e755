"""Set-aside rows with the spec's three fixes in place: move by hand, fix the field and try
again now, or give a new moment; several rows at once (select, then try again or move).
A fixed row leaves the list; the header's badge counts the rows still aside."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from flask import render_template, request, url_for
from sqlalchemy.exc import DBAPIError

from core.errors import AdminiumError
from core.fixes import NewMoment, fix_fields, new_moment
from core.hold_reads import set_aside_count, set_aside_give_backs
from core.manifest.model import Column, Table
from core.pending import Aside, rules_of, set_aside_rows, waiting_on
from core.store import Store
from services.apps import app_store, swept_stores
from services.models import Connection
from services.sweeps import retry_set_aside
from web.context import clock, publisher
from web.errors import status_of
from web.screens import writing
from web.screens.access import (
    all_connections,
    is_htmx,
    person,
    require_user,
    roles_of,
    screen_app,
    screen_blueprint,
    screen_connection,
)
from web.screens.labels import column_label, label, state_label
from web.screens.reading import editable_columns, open_moves
from web.screens.rows import row_key
from web.screens.times import full, wall
from web.screens.times import value as shown_value

log = logging.getLogger(__name__)

bp = screen_blueprint("set_aside", __name__)

BULK_LIMIT = 100
"""How many rows one "several at once" answer takes."""


@dataclass(frozen=True)
class AsideFix:
    """What an item's fixes show: the table, the fields (the refused one first) with their
    values now, the column that gives a new moment (or why there is none), and, by state a
    move by hand leads to, why the clock would refuse the row again there."""

    spec: Table
    state: str
    fields: list[Column]
    refused_field: str | None
    moment: NewMoment
    again: dict[str, str]


@bp.app_template_global()
def aside_fix(aside: Aside, error: AdminiumError | None = None) -> AsideFix:
    """The fixes of one set-aside item (a template global: the list, a fix's answer and a
    push all render `_aside.html`)."""
    rule = aside.rule
    spec = rule.store.spec(rule.table)
    moment = new_moment(rule.timed.at, spec, aside.row, aside.fallback, rule.timed)
    named = error.details.get("column") if error is not None else None
    shown = editable_columns(spec)
    fields, first = fix_fields(rule.table, spec, shown, aside.message, named, rule.timed)
    state = str(aside.row[rule.state_column])
    again = {m.to: refused_again(aside, m.to) for m in open_moves(spec, state, None)}
    return AsideFix(spec, state, fields, first, moment, {k: v for k, v in again.items() if v})


def refused_again(aside: Aside, to: str) -> str:
    """Why a move by hand to `to` would not last, when it would not: in `to`, another timed
    rule is already due and moves the row to the state the database refused for it, so the
    next minute's sweep sets it aside again. Empty when nothing says so."""
    rule = aside.rule
    store = rule.store
    moved = {**aside.row, rule.state_column: to}
    with store.engine.connect() as conn:
        tables = store.read_clock_tables(conn)
    waiting = waiting_on(rules_of(store, rule.table), moved, tables)
    if waiting is None or waiting.reading.at > clock() or waiting.rule.timed.to != rule.timed.to:
        return ""
    spec = store.spec(rule.table)
    other = waiting.rule
    return (
        f"Moved to {state_label(to, spec)}, it is due at once under rule {other.number}"
        f" ({state_label(other.timed.from_, spec)} → {state_label(other.timed.to, spec)}"
        f" at {full(waiting.reading.at, store.zone)}): the next minute's sweep moves it to"
        f" {state_label(other.timed.to, spec)}, which was refused for this row, and sets it"
        " aside again. Fix what refused it first."
    )


INPUTS = {
    "timestamptz": ("datetime-local", ""),
    "date": ("date", ""),
    "integer": ("number", "1"),
    "serial": ("number", "1"),
    "numeric": ("number", "any"),
}
"""The input a field's type takes (its type, and step for a number); text otherwise."""


@bp.app_template_filter("input_kind")
def input_kind(column: Column) -> tuple[str, str]:
    """The input a field takes: (`type`, `step`)."""
    return INPUTS.get(column.type, ("text", ""))


@bp.app_template_filter("input_value")
def input_value(raw: object, zone: ZoneInfo, kind: str = "text") -> str:
    """A value as a form's input holds it: a date `2026-07-10`, a time on the venue's clock
    `2026-07-10T21:00` (what `datetime-local` reads), else its text; empty for none."""
    if raw is None:
        return ""
    if isinstance(raw, datetime):
        local = raw.astimezone(zone) if raw.utcoffset() is not None else raw
        return local.date().isoformat() if kind == "date" else local.strftime("%Y-%m-%dT%H:%M")
    if hasattr(raw, "isoformat"):
        return str(raw.isoformat())
    return str(raw)


def _stores(connection: Connection, apps: list[Any]) -> list[Store]:
    names = {a.name for a in apps}
    return [s for s in swept_stores(connection) if s.app.name in names]


def set_aside_context(name: str) -> dict[str, Any]:
    """What the set-aside page and its partial render."""
    connection, apps = screen_connection(name)
    user = require_user()
    stores = _stores(connection, apps)
    return {
        "connection": connection,
        "zone": stores[0].zone if stores else None,
        "asides": set_aside_rows(stores),
        "give_backs": set_aside_give_backs(stores),
        "roles": {a.name: roles_of(user, a) for a in apps},
        "targets": move_targets(stores),
        "open_moves": open_moves,
        "now": clock(),
    }


def move_targets(stores: list[Store]) -> list[str]:
    """The states a set-aside row may be moved to by hand (each rule's `from`'s listed moves
    but undos), for "Move to …" on several rows at once."""
    found: list[str] = []
    for store in stores:
        for spec in store.app.tables.values():
            if spec.states is None:
                continue
            for timed in spec.states.timed or ():
                for move in open_moves(spec, timed.from_, None):
                    if not move.undo and move.to not in found:
                        found.append(move.to)
    return found


@bp.get("/connections/<name>/set-aside")
def list_set_aside(name: str) -> str:
    """The set-aside rows page."""
    template = "screens/_set_aside.html" if is_htmx() else "screens/set_aside.html"
    return render_template(template, **set_aside_context(name))


@bp.get("/connections/<name>/set-aside/list")
def show_set_aside_list(name: str) -> str:
    """The list alone: what a reopened socket refetches."""
    return render_template("screens/_set_aside.html", **set_aside_context(name))


@bp.get("/connections/<name>/set-aside/count")
def show_set_aside_count(name: str) -> str:
    """The header's badge alone: how many rows are set aside now (refetched after a push)."""
    connection, apps = screen_connection(name)
    count = set_aside_count(_stores(connection, apps))
    return render_template("screens/_aside_badge.html", connection=connection, aside_count=count)


@bp.app_template_global()
def aside_count_of(connection: Connection) -> int:
    """How many items of a connection's apps the signed-in user sees are set aside now."""
    _, apps = screen_connection(connection.name)
    return set_aside_count(_stores(connection, apps))


@dataclass(frozen=True)
class AsideTotal:
    """The badge of the connections screen: items set aside over every connection the user
    sees, and where it leads (the one connection's list that has any, else the screen)."""

    count: int
    href: str


@bp.app_template_global()
def aside_total() -> AsideTotal:
    """The set-aside items of every connection the signed-in user sees; a connection whose
    database does not answer counts none (its card says why)."""
    counts: dict[str, int] = {}
    for connection, apps in all_connections(require_user()):
        try:
            counts[connection.name] = set_aside_count(_stores(connection, apps))
        except DBAPIError:
            log.warning(
                "set-aside count of connection %s: its database did not answer", connection.name
            )
    having = [name for name, count in counts.items() if count]
    href = (
        url_for("set_aside.list_set_aside", name=having[0])
        if len(having) == 1
        else url_for("connections.list_connections")
    )
    return AsideTotal(sum(counts.values()), href)


@bp.get("/set-aside/count")
def show_set_aside_total() -> str:
    """The connections screen's badge alone (refetched after a push)."""
    return render_template("screens/_aside_badge.html", total=aside_total())


def _item(
    name: str,
    app_name: str,
    table: str,
    key: str,
    error: AdminiumError | None,
    answer: writing.Answer | None = None,
    oob: bool = False,
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
        if error is not None:
            said = f"{said} {error.message}."
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
                f"Saved: {named}: {column_label(column, spec)} is now {now_is}."
            )
        else:
            retry_set_aside(store, table, key, now=clock(), publisher=publisher())
            answer = _retried(app, store, table, key, parsed, left, roles)
    except writing.NothingToChange as same:
        answer = writing.Answer(same.words, "refused")
    except AdminiumError as refused:
        # The item says why (its refusal, or the fix's own): the answer only that it was not.
        error = refused
        what = "Tried again now: refused again" if action == "retry" else "Not done"
        answer = writing.Answer(f"{what}: {named} ({refused.code}).", "refused")
    html = _item(name, app_name, table, key, error, answer)
    return html, status_of(error) if error is not None else 200


def _retried(
    app: Any, store: Store, table: str, key: str, parsed: Any, left: str, roles: frozenset[str]
) -> writing.Answer:
    """What "Try again now" did, when the clock did not refuse it again."""
    spec = store.spec(table)
    named = writing.row_words(spec, table, key)
    if set_aside_rows([store], table=table, key=key):
        return writing.Answer(
            f"{named} is still set aside: another writer held it; the sweep tries again"
            " at the next minute.",
            "warn",
        )
    with store.engine.connect() as conn:
        row = store.read_row(conn, table, parsed)
    state_column = spec.states.column if spec.states else ""
    now = str(row.get(state_column)) if row is not None else left
    if row is None or now == left:
        return writing.Answer(f"{named} is no longer set aside.")
    words = f"{named} moved to {state_label(now, spec)} by its timed move."
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
    said = (
        f"{moved} of {len(lines)} moved to {to_title}."
        if action == "move"
        else f"Tried again: {moved} of {len(lines)} moved."
    )
    kind = "" if moved == len(lines) else "warn"
    return answer + "".join(items) + (writing.toast(writing.Answer(said, kind)) if lines else "")


def _bulk_one(name: str, app_name: str, table: str, key: str, action: str, to: str) -> BulkLine:
    """One picked row through its fix: moved, or refused and why."""
    try:
        app, roles = screen_app(name, app_name)
        store = app_store(app)
        parsed = row_key(store, table, key)
        found = set_aside_rows([store], table=table, key=key)
        if not found:
            return BulkLine(app_name, table, key, False, "no longer set aside")
        if action == "move":
            # The state the person saw: a set-aside row is in its rule's `from`.
            seen = found[0].rule.timed.from_
            writing.move(store, table, parsed, person(require_user(), roles), to, seen)
            title = state_label(to, store.spec(table))
            return BulkLine(app_name, table, key, True, f"moved to {title}", to_title=title)
        retry_set_aside(store, table, key, now=clock(), publisher=publisher())
    except AdminiumError as refused:
        return BulkLine(app_name, table, key, False, refused.message, refused.code)
    if set_aside_rows([store], table=table, key=key):
        return BulkLine(app_name, table, key, False, "another writer held it: tried next minute")
    return BulkLine(app_name, table, key, True, "moved by its timed move")
