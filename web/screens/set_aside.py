"""Set-aside rows with the spec's three fixes in place: move by hand, fix the field and try
again now, or give a new moment. A fixed row leaves the list."""

from __future__ import annotations

import logging
from typing import Any

from flask import render_template, request

from core.actors import Actor
from core.errors import AdminiumError, RowNotDue
from core.sweep_records import SET_ASIDE_FOR, SetAside, drop_set_aside, write_set_aside
from core.writes import write_row
from web.api import clock, publish
from web.controlplane import app_store
from web.screens import writing
from web.screens.access import (
    is_htmx,
    person,
    require_user,
    roles_of,
    screen_app,
    screen_blueprint,
    screen_connection,
)
from web.screens.reading import editable_columns, open_moves
from web.screens.rows import row_key
from web.screens.timed import Aside, set_aside_rows

log = logging.getLogger(__name__)

bp = screen_blueprint("set_aside", __name__)


def set_aside_context(name: str) -> dict[str, Any]:
    """What the set-aside page and its partial render."""
    connection, apps = screen_connection(name)
    user = require_user()
    stores = [app_store(a) for a in apps if a.has_timed_moves]
    roles = {a.name: roles_of(user, a) for a in apps}
    return {
        "connection": connection,
        "zone": stores[0].zone if stores else None,
        "asides": set_aside_rows(stores),
        "roles": roles,
        "open_moves": open_moves,
        "editable_columns": editable_columns,
        "now": clock(),
    }


@bp.get("/connections/<name>/set-aside")
def list_set_aside(name: str) -> str:
    """The set-aside rows page."""
    template = "screens/_set_aside.html" if is_htmx() else "screens/set_aside.html"
    return render_template(template, **set_aside_context(name))


@bp.get("/connections/<name>/set-aside/list")
def show_set_aside_list(name: str) -> str:
    """The list alone: what a reopened socket refetches."""
    return render_template("screens/_set_aside.html", **set_aside_context(name))


def _item(name: str, app_name: str, table: str, key: str, error: AdminiumError | None) -> str:
    """The row's list item after a fix: empty (it leaves the list) once it is no longer aside."""
    app, roles = screen_app(name, app_name)
    store = app_store(app)
    found = set_aside_rows([store], table=table, key=key)
    if not found:
        return ""
    return render_template(
        "screens/_aside.html",
        aside=found[0],
        connection=app.connection,
        zone=store.zone,
        roles={app.name: roles},
        open_moves=open_moves,
        editable_columns=editable_columns,
        error=error,
        now=clock(),
    )


@bp.post("/connections/<name>/set-aside/<app_name>/<table>/<key>/<action>")
def fix_row(name: str, app_name: str, table: str, key: str, action: str) -> str:
    """A fix: `move` by hand, `edit` a field (or the moment's column), or `retry` now."""
    app, roles = screen_app(name, app_name)
    store = app_store(app)
    parsed = row_key(store, table, key)
    error = None
    try:
        if action == "move":
            actor = person(require_user(), roles)
            writing.move(store, table, parsed, actor, request.form["to"], request.form.get("seen"))
        elif action == "edit":
            actor = person(require_user(), roles)
            writing.edit(
                store, table, parsed, actor, request.form["column"], request.form.get("value", "")
            )
        else:
            retry(store, table, key)
    except AdminiumError as refused:
        error = refused
    return _item(name, app_name, table, key, error)


def retry(store: Any, table: str, key: str) -> None:
    """Try a set-aside row's timed move now, as the clock would; refused again: a new hour."""
    for aside in set_aside_rows([store], table=table, key=key):
        _retry_one(store, aside)


def _retry_one(store: Any, aside: Aside) -> None:
    """One rule's timed move tried now; the record dropped once moved, renewed when refused."""
    rule = aside.rule
    now = clock()
    parsed = store.coerce_key(rule.table, aside.key)
    try:
        result = write_row(
            store, rule.table, parsed, actor=Actor.clock(), now=now, timed=rule.timed
        )
    except RowNotDue:
        return
    except AdminiumError as error:
        record = SetAside(
            rule.app,
            rule.table,
            aside.key,
            rule.number,
            error.code,
            aside.moment,
            now + SET_ASIDE_FOR,
        )
        with store.engine.begin() as conn:
            write_set_aside(conn, record, message=error.message, at=now)
        log.info(
            "set-aside row %s.%s key=%s rule=%s refused again: %s",
            rule.app,
            rule.table,
            aside.key,
            rule.number,
            error.code,
        )
        raise
    with store.engine.begin() as conn:
        drop_set_aside(conn, rule.app, rule.table, aside.key, rule.number)
    publish(result)
