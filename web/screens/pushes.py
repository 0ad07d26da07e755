"""What the live socket pushes for a row event: the screens' own partials as out-of-band swaps.

Each function renders, for one kind of open screen, the htmx out-of-band fragment that
brings it up to date with the changed row; an empty string when the screen does not
show that row. They run inside an app and request context (see `web.live`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from flask import render_template

from core.store.store import Store
from core.sweep.hold_reads import GiveBackAside, set_aside_give_backs
from core.sweep.pending import (
    PENDING_HORIZON,
    Pending,
    keys_set_aside,
    rules_of,
    set_aside_rows,
    waiting_on,
)
from services.apps import app_store
from services.connections import get_connection
from services.models import App, db
from web.context import clock, lookup_app
from web.language import speech
from web.screens.connections import read_connection
from web.screens.reading import (
    Card,
    editable_columns,
    filter_fault,
    make_card,
    matches,
    open_moves,
    state_counts,
    states_of,
    visible,
)
from web.screens.rows import row_context


def _app(event: Mapping[str, Any]) -> App | None:
    return lookup_app(str(event["connection"]), str(event["app"]))


def push_board(event: Mapping[str, Any], q: str, state: str) -> str:
    """A board: the card leaves its column and enters its new one; the counts change."""
    app = _app(event)
    if app is None:
        return ""
    store = app_store(app)
    table, key = str(event["table"]), event["key"]
    if filter_fault(store.spec(table), q, state) is not None:
        return ""  # the board itself refused these filters: no such board is open
    now = clock()
    card = matches(store, table, key, q, state, now)
    aside = keys_set_aside(set_aside_rows([store], table=table, key=str(key))) if card else {}
    found = state_counts(store, table, q, now)
    counts = {s: found.get(s, 0) for s in states_of(store.spec(table)) if not state or s == state}
    return render_template(
        "live/board.html",
        app=app,
        connection=app.connection,
        zone=store.zone,
        table=table,
        dom_id=f"row-{table}-{key}",
        card=card,
        aside_keys=aside,
        counts=counts,
        now=now,
    )


def push_boards(events: Sequence[Mapping[str, Any]], q: str, state: str) -> str:
    """A board, for a burst of its table's events at once (as `push_board` for each, in one
    read): each card leaves its column and enters its new one, the counts said once, as
    they stand. The app, its store, the settings and hours, the set-aside rows and the
    counts are read once for the burst, and the cards in one query."""
    first = events[0]
    app = _app(first)
    if app is None:
        return ""
    store = app_store(app)
    table = str(first["table"])
    spec = store.spec(table)
    if filter_fault(spec, q, state) is not None:
        return ""
    # Each key once, where its last event puts it (a later card goes on top).
    keys = list(reversed(dict.fromkeys(str(e["key"]) for e in reversed(events))))
    now = clock()
    cards = _cards(store, table, keys, q, state, now)
    aside = keys_set_aside(set_aside_rows([store], table=table)) if any(cards.values()) else {}
    found = state_counts(store, table, q, now)
    counts = {s: found.get(s, 0) for s in states_of(spec) if not state or s == state}
    return "".join(
        render_template(
            "live/board.html",
            app=app,
            connection=app.connection,
            zone=store.zone,
            table=table,
            dom_id=f"row-{table}-{key}",
            card=cards.get(key),
            aside_keys=aside,
            counts=counts if number == len(keys) - 1 else {},
            now=now,
        )
        for number, key in enumerate(keys)
    )


def _cards(
    store: Store, table: str, keys: Sequence[str], q: str, state: str, now: datetime
) -> dict[str, Card]:
    """The cards of those rows that are on a board with this search and filter, by key (as
    text), in one query on one connection."""
    spec = store.spec(table)
    assert spec.states is not None
    t = store.table(table)
    wanted = [k for k in (store.coerce_key(table, key) for key in keys) if k is not None]
    if not wanted:
        return {}
    query = sa.select(t).where(t.c[spec.key].in_(wanted), visible(store, table, now, q, state))
    with store.engine.connect() as conn:
        rows = [dict(row) for row in conn.execute(query).mappings()]
        tables = store.read_clock_tables(conn) if rows else {}
    return {str(row[spec.key]): make_card(store, table, row, tables) for row in rows}


def push_row(event: Mapping[str, Any], roles: frozenset[str]) -> str:
    """A row page: its partial, re-rendered (or, once removed, saying so)."""
    app = _app(event)
    if app is None:
        return ""
    if event.get("removed"):
        return render_template("live/row_removed.html", event=event)
    context = row_context(app, str(event["table"]), str(event["key"]), roles)
    return render_template("live/row.html", **context)


def push_pending(event: Mapping[str, Any]) -> str:
    """The pending list: the row's line re-rendered, or gone once nothing waits on it."""
    app = _app(event)
    if app is None:
        return ""
    store = app_store(app)
    table = str(event["table"])
    dom_id = f"pending-{table}-{event['key']}"
    now = clock()
    with store.engine.connect() as conn:
        row = store.read_row(conn, table, store.coerce_key(table, event["key"]))
        tables = store.read_clock_tables(conn)
    rules = rules_of(store, table)
    waiting = waiting_on(rules, row, tables, speech()) if row is not None else None
    move = None
    if waiting is not None and waiting.reading.at <= now + PENDING_HORIZON:
        move = Pending(waiting.rule, event["key"], waiting.reading.at, None, False, waiting.words)
    return render_template(
        "live/pending.html",
        dom_id=dom_id,
        move=move,
        connection=app.connection,
        zone=store.zone,
        now=now,
    )


def push_set_aside(event: Mapping[str, Any], roles: Mapping[str, frozenset[str]]) -> str:
    """The set-aside list: the row re-rendered, gone once fixed, added at the end once set
    aside; so too its give-backs the ledger's cap refused (and those giving back to it)."""
    app = _app(event)
    if app is None:
        return ""
    store = app_store(app)
    table, key = str(event["table"]), str(event["key"])
    now = clock()
    found = set_aside_rows([store], table=table, key=key)
    give_backs = set_aside_give_backs([store], table, key)
    return _push_give_backs(app, store, table, key, give_backs, event, now) + render_template(
        "live/set_aside.html",
        dom_id=f"aside-{table}-{key}",
        aside=found[0] if found else None,
        added=bool(event.get("set_aside")),
        connection=app.connection,
        zone=store.zone,
        roles=roles,
        open_moves=open_moves,
        editable_columns=editable_columns,
        error=None,
        now=now,
    )


def _push_give_backs(
    app: App,
    store: Store,
    table: str,
    key: str,
    give_backs: list[GiveBackAside],
    event: Mapping[str, Any],
    now: datetime,
) -> str:
    """The row's give-back items: added at the end once set aside, else drawn again in
    place; those no longer set aside (given back, taken, moved) gone."""
    row = f"{app.name}/{table}/{key}"
    kept = "".join(f":not([id={_css_string(a.dom_id)}])" for a in give_backs)
    return render_template(
        "screens/_holds_aside_push.html",
        give_backs=give_backs,
        gone=f"#set-aside-list > li.give-back[data-row={_css_string(row)}]{kept}",
        added=bool(event.get("set_aside")),
        connection=app.connection,
        zone=store.zone,
        now=now,
    )


def _css_string(text: str) -> str:
    """`text` as a quoted CSS string (an attribute selector's value)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def push_connection(
    name: str, may_pause: bool, apps: frozenset[str], removable: frozenset[str] = frozenset()
) -> str:
    """A connection's card: paused or not, last sweep, rows set aside, sample buttons.

    `apps` and `removable` name apps as `connection/app`: an app of the same name on
    another connection the user sees is no reason to show this one's.
    """
    connection = get_connection(db.session, name)
    shown = [a for a in connection.apps if f"{name}/{a.name}" in apps]
    mine = frozenset(a.name for a in shown if f"{name}/{a.name}" in removable)
    view = read_connection(connection, shown, may_pause, mine)
    return render_template("live/connection.html", view=view, now=clock())


def push_stalled(name: str, stalled: int | None) -> str:
    """Any screen of a connection: the stalled banner (empty once sweeps run again)."""
    connection = get_connection(db.session, name)
    return render_template("live/stalled.html", connection=connection, stalled=stalled)


def push_paused(name: str) -> str:
    """Any screen of a connection: the paused banner."""
    connection = get_connection(db.session, name)
    return render_template("live/paused.html", connection=connection)
