"""The connections screen: zone, paused or not, the last sweep, rows set aside now."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from flask import render_template, request
from sqlalchemy.exc import DBAPIError
from werkzeug.wrappers import Response

from core.basics.errors import AdminiumError
from core.sweep.faults import adminium_missing
from core.sweep.hold_reads import set_aside_count
from services.agreement import Disagreeing, disagreeing
from services.apps import app_store
from services.connections import set_paused
from services.drafts import draft_app, manifest_text
from services.errors import first_line
from services.fence_ledger import TurnedAway, turned_away
from services.models import App, Connection, db
from services.sweep_ledger import Missed, missed
from web.context import clock, publisher
from web.errors import Forbidden
from web.language import speech
from web.screens.access import (
    all_connections,
    is_htmx,
    may_pause,
    require_user,
    screen_blueprint,
    screen_connection,
)
from web.screens.clock_health import ClockFigures, clock_figures
from web.screens.samples import removable_apps
from web.screens.writing import Answer, toast

log = logging.getLogger(__name__)

bp = screen_blueprint("connections", __name__)


@dataclass(frozen=True)
class ConnectionView:
    """A connection as its card shows it."""

    connection: Connection
    apps: list[App]
    clock: ClockFigures | None
    set_aside: int | None
    may_pause: bool
    trouble: str | None = None
    removable: frozenset[str] = frozenset()
    """The apps whose sample data the user may remove (a button each)."""
    missed: Missed | None = None
    """Minute sweeps that never ran (dropped): how many, the latest and why."""
    turned_away: TurnedAway | None = None
    """Minute sweeps the fence turned away: how many, the latest, who held it since when."""
    missing: bool = False
    """The trouble is that the database lacks Adminium's own tables (said as a sentence)."""
    disagree: Disagreeing | None = None
    """The apps' last comparisons with their tables: how many disagreements, the first."""

    @property
    def dom_id(self) -> str:
        """The card's stable id."""
        return f"connection-{self.connection.name}"

    @property
    def sweep(self) -> dict[str, Any] | None:
        """The last sweep's record, if any."""
        return self.clock.health.last if self.clock else None


def read_connection(
    connection: Connection,
    apps: list[App],
    may_pause: bool,
    removable: frozenset[str] = frozenset(),
) -> ConnectionView:
    """The card of one connection: its sweep's health, the next move due, rows set aside now."""
    stores = [app_store(a) for a in apps if a.has_minute_work]
    disagree = disagreeing(apps)
    try:
        figures = clock_figures(stores, connection, clock()) if stores else None
        aside = set_aside_count(stores) if stores else 0
    except DBAPIError as error:
        missing = adminium_missing(connection.name, error)
        if missing is None:
            log.warning("connection %s: its database did not answer", connection.name)
        trouble = missing or first_line(error)
        return ConnectionView(
            connection,
            apps,
            None,
            None,
            may_pause,
            trouble,
            removable,
            missing=missing is not None,
            disagree=disagree,
        )
    dropped = missed(publisher().client, connection.name)
    fenced = turned_away(publisher().client, connection.name)
    return ConnectionView(
        connection,
        apps,
        figures,
        aside,
        may_pause,
        None,
        removable,
        dropped,
        fenced,
        disagree=disagree,
    )


def connection_card(name: str) -> ConnectionView:
    """The card of a connection the signed-in user sees."""
    connection, apps = screen_connection(name)
    user = require_user()
    return read_connection(
        connection, apps, may_pause(user, connection), removable_apps(user, apps)
    )


@bp.get("/connections")
def list_connections() -> str:
    """Every connection with an app the user sees."""
    user = require_user()
    views = [
        read_connection(c, apps, may_pause(user, c), removable_apps(user, apps))
        for c, apps in all_connections(user)
    ]
    if is_htmx():
        return render_template("screens/_connections.html", views=views, now=clock())
    return render_template("screens/connections.html", views=views, now=clock())


@bp.get("/connections/<name>")
def show_connection(name: str) -> str:
    """One connection's card (what a screen refetches)."""
    return render_template("screens/_connection.html", view=connection_card(name), now=clock())


def _pause(name: str, paused: bool) -> str:
    """Pause or resume a connection, tell its open screens, answer the card."""
    connection, _ = screen_connection(name)
    if not may_pause(require_user(), connection):
        raise Forbidden(
            "pausing stops every app of the connection: it needs a role in each of them",
            {"connection": name},
        )
    set_paused(db.session, name, paused, publisher())
    say = speech()
    words = (
        say(
            "%(name)s paused by you: no timed move is made on its apps until it is resumed.",
            name=name,
        )
        if paused
        else say(
            "%(name)s resumed by you: every row already due moves at the next sweep.", name=name
        )
    )
    card = render_template("screens/_connection.html", view=connection_card(name), now=clock())
    return card + toast(Answer(words))


@bp.post("/connections/<name>/pause")
def pause_connection(name: str) -> str | Response:
    """Pause the connection: its sweep is skipped until it is resumed."""
    return _pause(name, True)


@bp.post("/connections/<name>/resume")
def resume_connection(name: str) -> str | Response:
    """Resume the connection: every row already due moves at the next sweep."""
    return _pause(name, False)


@bp.get("/connections/<name>/draft")
def draft_from_database(name: str) -> str:
    """A manifest drafted from the connection's tables (`adminium app draft`), the JSON to
    copy, and what is still to write; for a user who may pause it (a role in each app)."""
    connection, _ = screen_connection(name)
    if not may_pause(require_user(), connection):
        raise Forbidden(
            "drafting reads every table of the connection: it needs a role in each of its apps",
            {"connection": name},
        )
    schema = request.args.get("schema", "").strip() or "public"
    drafted, refused = None, None
    try:
        drafted = draft_app(db.session, name, schema=schema)
    except AdminiumError as error:
        refused = error.message
    text = manifest_text(drafted.manifest) if drafted else ""
    return render_template(
        "screens/draft.html",
        connection=connection,
        schema=schema,
        drafted=drafted,
        text=text,
        refused=refused,
    )
