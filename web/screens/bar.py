"""The bar of an app's screens, on every screen of a connection: Board, Wall, Pending, Set
aside, the clock's log, Outbox, Deliveries, Webhooks (those the app has and the user may
open), the one open marked current."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import Flask, request, url_for
from flask_babel import gettext as _
from jinja2 import pass_context
from jinja2.runtime import Context

from services.models import App, Connection
from web.language import speech
from web.screens.access import may_pause, require_user, screen_connection


@dataclass(frozen=True)
class BarLink:
    """One screen of the bar: its words, where it leads, and whether it is the one open."""

    words: str
    href: str
    current: bool


def _state_tables(app: App) -> list[str]:
    return [name for name, table in app.model.tables.items() if table.states]


@pass_context
def app_bar(context: Context) -> list[BarLink]:
    """The bar for the screen being drawn (none off a connection's screens). Board and Wall
    lead to the table on screen, else the app's first table with states. On an app's screen
    the bar is that app's alone; on the connection's lists (pending, set aside, deliveries)
    each app's Board, Wall and Outbox carry its title."""
    connection = context.get("connection")
    if not isinstance(connection, Connection):
        return []
    _, apps = screen_connection(connection.name)
    here = request.endpoint or ""
    shown_app = context.get("app")
    shown_table = _shown_table(context)
    # On one app's screen the bar is that app's; on the connection's lists, every app's.
    focus = [a for a in apps if on_app(shown_app, a)] or apps
    return [
        *_board_links(connection.name, focus, shown_app, shown_table, here),
        *_list_links(connection.name, here),
        *_outbox_links(connection.name, focus, shown_app, here),
        *_webhook_links(connection, apps, here),
    ]


def _titled(words: str, app: App, among: list[App]) -> str:
    """A link's words, with the app's title when the bar has the link for more than one."""
    return words if len(among) < 2 else f"{words} · {app.model.title or app.name}"


def _board_links(
    name: str, focus: list[App], shown_app: object, shown_table: str | None, here: str
) -> list[BarLink]:
    """Board, then Wall, of each app with states: at the table on screen, else its first."""
    boards = [a for a in focus if _state_tables(a)]
    links: list[BarLink] = []
    say = speech()
    for endpoint, words in (("boards.show_board", say("Board")), ("boards.show_wall", say("Wall"))):
        for app in boards:
            tables = _state_tables(app)
            on = on_app(shown_app, app)
            table = shown_table if on and shown_table in tables else tables[0]
            href = url_for(endpoint, connection=name, name=app.name, table=table)
            links.append(BarLink(_titled(words, app, boards), href, here == endpoint and on))
    return links


def _list_links(name: str, here: str) -> list[BarLink]:
    """The connection's lists every bar has: Pending, Set aside and the clock's log."""
    return [
        BarLink(
            _("Pending"),
            url_for("pending.list_pending", name=name),
            here.startswith("pending."),
        ),
        BarLink(
            _("Set aside"),
            url_for("set_aside.list_set_aside", name=name),
            here.startswith("set_aside."),
        ),
        BarLink(
            _("Clock's log"),
            url_for("clock_log.show_clock_log", name=name),
            here.startswith("clock_log."),
        ),
    ]


def _outbox_links(name: str, focus: list[App], shown_app: object, here: str) -> list[BarLink]:
    """The Outbox of each app whose outbox has producers."""
    mailing = [a for a in focus if a.model.outbox and a.model.outbox.producers]
    links: list[BarLink] = []
    for app in mailing:
        href = url_for("outbox.show_outbox", connection=name, name=app.name)
        current = here.startswith("outbox.") and on_app(shown_app, app)
        links.append(BarLink(_titled(_("Outbox"), app, mailing), href, current))
    return links


def _webhook_links(connection: Connection, apps: list[App], here: str) -> list[BarLink]:
    """Deliveries when an app has automations; Webhooks besides for who may pause."""
    if not any(a.model.automations for a in apps):
        return []
    name = connection.name
    links = [
        BarLink(
            _("Deliveries"),
            url_for("webhooks.show_deliveries", name=name),
            here == "webhooks.show_deliveries",
        )
    ]
    if may_pause(require_user(), connection):
        links.append(
            BarLink(
                _("Webhooks"),
                url_for("webhooks.show_webhooks", name=name),
                here in ("webhooks.show_webhooks", "webhooks.show_calls"),
            )
        )
    return links


def on_app(shown: object, app: App) -> bool:
    """Whether the screen drawn is one of `app`'s."""
    return isinstance(shown, App) and shown.id == app.id


def _shown_table(context: Context) -> str | None:
    """The table on screen: a board's, or a row page's."""
    table = context.get("table")
    if isinstance(table, str):
        return table
    board: Any = context.get("board")
    if isinstance(getattr(board, "table", None), str):
        return str(board.table)
    view: Any = context.get("view")
    card = getattr(view, "card", None)
    return getattr(card, "table", None)


def init_app(app: Flask) -> None:
    """Make the bar a template global."""
    app.add_template_global(app_bar, "app_bar")
