"""The set-aside list of a connection, and the badges that count what is still aside (the
connection's header, and the connections screen's over every connection the user sees)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from flask import render_template, url_for
from sqlalchemy.exc import DBAPIError

from core.store.store import Store
from core.sweep.hold_reads import set_aside_count, set_aside_give_backs
from core.sweep.pending import set_aside_rows
from services.apps import swept_stores
from services.models import Connection
from web.context import clock
from web.screens.access import (
    all_connections,
    is_htmx,
    require_user,
    roles_of,
    screen_connection,
)
from web.screens.reading import open_moves
from web.screens.set_aside.items import bp

log = logging.getLogger(__name__)


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
