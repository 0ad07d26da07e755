"""The Outbox screen of an app: its emails queued, sent, failed and dropped, newest first,
each readable as its reader gets it, with why it was not sent. Staff with a role in the app
see it and may send a failed email again; a manager (`manager` or `admin` in the app) may
also drop one that has not gone (failed, or waiting for a retry), so it is never sent. It
is pushed live on the app's outbox events. The row page's list of the emails a row queued
and the reminders it waits for is `row_mail` here too."""

from __future__ import annotations

from typing import Any

from flask import abort, render_template

from core.basics.errors import WriteConflict
from services.apps import app_store
from services.models import App
from services.outbox import app_emails, drop_now, email, row_mail, send_again_now
from services.sending import DropAnswer
from services.smtp import SmtpConfig, build_message
from web.context import clock, lookup_app, publisher
from web.errors import Forbidden, NotFound
from web.screens.access import is_htmx, is_manager, require_user, screen_app, screen_blueprint

bp = screen_blueprint("outbox", __name__)

SHOWN = 200
"""The newest emails the screen lists."""


def outbox_context(connection: str, name: str) -> dict[str, Any]:
    """What the Outbox page and its list render, for the signed-in user."""
    app, roles = screen_app(connection, name)
    return _listing(app, roles)


def _listing(app: App, roles: frozenset[str]) -> dict[str, Any]:
    """An app's Outbox list: the app, its connection and zone, its newest emails, and
    whether the one who looks may drop them (a manager)."""
    store = app_store(app)
    return {
        "app": app,
        "connection": app.connection,
        "zone": store.zone,
        "emails": app_emails(store.engine, app.name, limit=SHOWN),
        "may_drop": is_manager(roles),
        "now": clock(),
    }


@bp.get("/connections/<connection>/apps/<name>/outbox")
def show_outbox(connection: str, name: str) -> str:
    """The Outbox page (its list alone to htmx)."""
    template = "screens/_outbox.html" if is_htmx() else "screens/outbox.html"
    return render_template(template, **outbox_context(connection, name))


@bp.get("/connections/<connection>/apps/<name>/outbox/list")
def show_outbox_list(connection: str, name: str) -> str:
    """The list alone: what a reopened socket refetches."""
    return render_template("screens/_outbox.html", **outbox_context(connection, name))


@bp.get("/connections/<connection>/apps/<name>/outbox/<int:mail>")
def show_email(connection: str, name: str, mail: int) -> str:
    """One email as its reader gets it: headers and text."""
    app, _ = screen_app(connection, name)
    store = app_store(app)
    found = email(store.engine, app.name, mail)
    if found is None:
        abort(404)
    message = build_message(app.connection.name, found, SmtpConfig.from_env().mail_from)
    return render_template(
        "screens/outbox_email.html",
        app=app,
        connection=app.connection,
        zone=store.zone,
        mail=found,
        headers=[
            (k, v)
            for k, v in message.items()
            if k not in ("Content-Type", "MIME-Version", "Content-Transfer-Encoding")
        ],
        now=clock(),
    )


@bp.post("/connections/<connection>/apps/<name>/outbox/<int:mail>/send-again")
def send_email_again(connection: str, name: str, mail: int) -> str:
    """Send a failed email again; the list as it is now."""
    app, _ = screen_app(connection, name)
    send_again_now(
        app_store(app), mail, now=clock(), publisher=publisher(), actor=require_user().email
    )
    return render_template("screens/_outbox.html", **outbox_context(connection, name))


@bp.post("/connections/<connection>/apps/<name>/outbox/<int:mail>/drop")
def drop_email(connection: str, name: str, mail: int) -> str:
    """Drop an email that has not gone (a manager): never sent; the list as it is now."""
    app, roles = screen_app(connection, name)
    if not is_manager(roles):
        raise Forbidden(
            "dropping an email needs the manager or admin role in the app",
            {"connection": connection, "app": name},
        )
    answer = drop_now(
        app_store(app), mail, now=clock(), publisher=publisher(), actor=require_user().email
    )
    refuse_drop(answer, "email", mail)
    return render_template("screens/_outbox.html", **_listing(app, roles))


def refuse_drop(answer: DropAnswer, noun: str, number: int) -> None:
    """A Drop that found nothing of that id (404), or one being tried this moment (409)."""
    if answer is DropAnswer.missing:
        raise NotFound(f"no {noun} {number} here", {noun: number})
    if answer is DropAnswer.busy:
        raise WriteConflict(
            f"{noun} {number} is being sent this moment: look again in a few seconds",
            {noun: number},
        )


def push_outbox(event: Any, roles: frozenset[str]) -> str:
    """What the live socket pushes to an Outbox screen when its app's emails change: the list,
    as the roles the socket's user held in the app when it opened see it."""
    app = lookup_app(str(event["connection"]), str(event["outbox"]))
    if app is None:
        return ""
    return render_template("screens/_outbox.html", **_listing(app, roles))


def mail_of_row(app: Any, table: str, row: Any, now: Any) -> Any:
    """The emails a row queued and the reminders it waits for (the row page's section)."""
    return row_mail(app_store(app), table, row, now)


@bp.app_context_processor
def _outbox_globals() -> dict[str, Any]:
    return {"mail_of_row": mail_of_row}
