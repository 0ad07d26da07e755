"""The page that says the web is up; signed in, also which database and Redis it uses."""

from __future__ import annotations

import psycopg
import redis
from flask import Blueprint, current_app, redirect, render_template, url_for
from flask_babel import gettext
from werkzeug.wrappers import Response

from services import redis_client
from services.agreement import disagreeing
from services.models import User
from services.urls import hide_password
from web.screens.access import all_connections, signed_in_user

bp = Blueprint("status", __name__)


def shown_url(url: str) -> str:
    """A configured URL as the page shows it: masked by the one masking function."""
    return hide_password(url) if url else gettext("(not set)")


def probe_database(url: str) -> str:
    """The server's version, or why it does not answer."""
    try:
        with psycopg.connect(url, connect_timeout=3) as conn:
            row = conn.execute("show server_version").fetchone()
        return f"PostgreSQL {row[0]}" if row else gettext("no answer")
    except psycopg.Error as error:
        return gettext("does not answer: %(error)s", error=error.__class__.__name__)


def probe_redis(url: str) -> str:
    """The server's version, or that it does not answer (the timed moves wait for it)."""
    try:
        with redis_client.connect(url, socket_connect_timeout=3, socket_timeout=3) as client:
            return f"Redis {client.info('server')['redis_version']}"
    except (redis.RedisError, ValueError) as error:
        return gettext(
            "Redis does not answer (%(error)s): no sweep is enqueued until it does",
            error=error.__class__.__name__,
        )


def tables_state(user: User | None) -> list[tuple[str, str]]:
    """What each connection the user sees says of its apps' tables, where it is not that
    they agree: how many disagreements the apps' last comparisons found and the first
    (the sweep compares again when the tables change), or the apps never compared yet."""
    if user is None:
        return []
    found = []
    for connection, apps in all_connections(user):
        disagree = disagreeing(apps)
        if disagree is not None:
            found.append((connection.name, disagree.words()))
        never = [app.name for app in apps if app.agreement is None]
        if never:
            words = gettext("not compared with the tables yet: %(apps)s", apps=", ".join(never))
            found.append((connection.name, words))
    return found


@bp.get("/")
def home() -> Response:
    """The screens for the signed-in; the sign-in page for everyone else."""
    if signed_in_user() is None:
        return redirect(url_for("auth.sign_in"))
    return redirect(url_for("connections.list_connections"))


@bp.get("/status")
def show() -> str:
    """Say the web is up; to a signed-in user, also which database and Redis it uses."""
    if signed_in_user() is None:
        # A stranger learns that the service answers: no URL, path or version.
        return render_template("status/show.html", details=False)
    database_url = current_app.config["DATABASE_URL"]
    redis_url = current_app.config["REDIS_URL"]
    return render_template(
        "status/show.html",
        details=True,
        tables=tables_state(signed_in_user()) if database_url else [],
        database=shown_url(database_url),
        database_state=probe_database(database_url) if database_url else gettext("not set"),
        redis=shown_url(redis_url),
        redis_state=probe_redis(redis_url) if redis_url else gettext("not set"),
    )
