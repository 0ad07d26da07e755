"""The page that says the web is up; signed in, also which database and Redis it uses."""

from __future__ import annotations

import psycopg
import redis
from flask import Blueprint, current_app, redirect, render_template, url_for
from werkzeug.wrappers import Response

from services import redis_client
from services.urls import hide_password
from web.screens.access import signed_in_user

bp = Blueprint("status", __name__)


def shown_url(url: str) -> str:
    """A configured URL as the page shows it: masked by the one masking function."""
    return hide_password(url) if url else "(not set)"


def probe_database(url: str) -> str:
    """The server's version, or why it does not answer."""
    try:
        with psycopg.connect(url, connect_timeout=3) as conn:
            row = conn.execute("show server_version").fetchone()
        return f"PostgreSQL {row[0]}" if row else "no answer"
    except psycopg.Error as error:
        return f"does not answer: {error.__class__.__name__}"


def probe_redis(url: str) -> str:
    """The server's version, or that it does not answer (the timed moves wait for it)."""
    try:
        with redis_client.connect(url, socket_connect_timeout=3, socket_timeout=3) as client:
            return f"Redis {client.info('server')['redis_version']}"
    except (redis.RedisError, ValueError) as error:
        return (
            f"Redis does not answer ({error.__class__.__name__}):"
            " no sweep is enqueued until it does"
        )


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
        database=shown_url(database_url),
        database_state=probe_database(database_url) if database_url else "not set",
        redis=shown_url(redis_url),
        redis_state=probe_redis(redis_url) if redis_url else "not set",
    )
