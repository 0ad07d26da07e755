"""Set-aside rows with the spec's three fixes in place: move by hand, fix the field and try
again now, or give a new moment. A fixed row leaves the list."""

from __future__ import annotations

import logging
from typing import Any

from flask import render_template, request

from core.errors import AdminiumError
from core.pending import set_aside_rows
from services.apps import app_store, timed_stores
from services.sweeps import retry_set_aside
from web.context import clock, publisher
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

log = logging.getLogger(__name__)

bp = screen_blueprint("set_aside", __name__)


def set_aside_context(name: str) -> dict[str, Any]:
    """What the set-aside page and its partial render."""
    connection, apps = screen_connection(name)
    user = require_user()
    stores = [s for s in timed_stores(connection) if s.app.name in {a.name for a in apps}]
    roles = {a.name: roles_of(user, a) for a in apps}
    now = clock()
    return {
        "connection": connection,
        "zone": stores[0].zone if stores else None,
        "asides": set_aside_rows(stores),
        "roles": roles,
        "open_moves": open_moves,
        "editable_columns": editable_columns,
        "now": now,
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
    now = clock()
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
        now=now,
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
            retry_set_aside(store, table, key, now=clock(), publisher=publisher())
    except AdminiumError as refused:
        error = refused
    return _item(name, app_name, table, key, error)
