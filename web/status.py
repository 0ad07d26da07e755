"""The page that says the web is up and which database and Redis it uses."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import psycopg
import redis
from flask import Blueprint, current_app, render_template

bp = Blueprint("status", __name__)


def safe_url(url: str) -> str:
    """A URL with its password hidden."""
    if not url:
        return "(not set)"
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def probe_database(url: str) -> str:
    """The server's version, or why it does not answer."""
    try:
        with psycopg.connect(url, connect_timeout=3) as conn:
            row = conn.execute("show server_version").fetchone()
        return f"PostgreSQL {row[0]}" if row else "no answer"
    except psycopg.Error as error:
        return f"does not answer: {error.__class__.__name__}"


def probe_redis(url: str) -> str:
    """The server's version, or why it does not answer."""
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=3)
        return f"Redis {client.info('server')['redis_version']}"
    except redis.RedisError as error:
        return f"does not answer: {error.__class__.__name__}"


@bp.get("/")
@bp.get("/status")
def show() -> str:
    """Say the web is up, and which database and Redis it uses."""
    database_url = current_app.config["DATABASE_URL"]
    redis_url = current_app.config["REDIS_URL"]
    return render_template(
        "status/show.html",
        database=safe_url(database_url),
        database_state=probe_database(database_url) if database_url else "not set",
        redis=safe_url(redis_url),
        redis_state=probe_redis(redis_url) if redis_url else "not set",
    )
