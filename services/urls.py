"""Database and Redis URLs: read one (URL or libpq conninfo), hand it on, show it safely.

`hide_password` is the one way a URL is shown on a screen, in a log or on the console.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

import psycopg

from core.store.store import engine_url

parse_url = engine_url
"""A PostgreSQL URL or libpq conninfo string read into its parts (to check it, to show it)."""

REDIS_SCHEMES = ("redis", "rediss", "unix", "redis+sentinel")
"""The URL schemes of REDIS_URL: redis-py's (`unix://` is a socket path) and the sentinels'
(`services.redis_client`)."""

SMTP_SCHEMES = ("smtp", "smtps")
"""The schemes of SMTP_URL, shown as a Redis URL is (user part and `?password=` hidden)."""

WEB_SCHEMES = ("http", "https")
"""The schemes of a webhook's URL: shown with every query value hidden (names kept), since
a receiver's maker may put a credential under any name (`client_secret`, `auth`, `code`,
`X-Amz-Signature`...), and its user part hidden (a lone user name is often a token)."""

SECRET_QUERY_KEYS = frozenset(
    {
        "password",
        "sentinel_password",
        "token",
        "access_token",
        "secret",
        "key",
        "api_key",
        "apikey",
        "sig",
        "signature",
    }
)
"""Query names whose values are hidden: what a URL's maker puts a credential in."""

HIDDEN = "***"


def sqlalchemy_url(url: str) -> str:
    """A plain `postgresql://` URL or conninfo string as SQLAlchemy's psycopg 3 URL."""
    return parse_url(url).render_as_string(hide_password=False)


def hide_password(url: str) -> str:
    """A PostgreSQL, Redis, SMTP or web URL as it may be shown:
    `postgresql://user:***@host:port/db`, `https://host/hook?token=***&screen=***`."""
    if url.split("://", 1)[0].lower() in (*REDIS_SCHEMES, *SMTP_SCHEMES, *WEB_SCHEMES):
        return _hide_redis_password(url)
    try:
        parsed = parse_url(url)
    except (psycopg.ProgrammingError, ValueError):
        return "(unreadable URL)"
    # libpq's other secret (the client key's passphrase) is left out altogether.
    shown = parsed.set(drivername="postgresql").difference_update_query(["sslpassword"])
    # Query values read as written (a socket folder `host=/run/pg`, not `%2Frun%2Fpg`).
    base, mark, query = shown.render_as_string(hide_password=True).partition("?")
    return base + mark + unquote(query)


def _hide_redis_password(url: str) -> str:
    """A Redis, SMTP or web URL with the password of its user part and its query's secrets
    (`?password=`, `?token=`...; a web URL's every query value) hidden."""
    try:
        parts = urlsplit(url)
        password = parts.password
        if parts.scheme.lower() != "redis+sentinel":  # its HOST:PORT,HOST:PORT... is no port
            parts.port  # noqa: B018  (reading it checks it)
    except ValueError:
        return "(unreadable URL)"
    web = parts.scheme.lower() in WEB_SCHEMES
    netloc = parts.netloc
    if password is not None:
        user = parts.netloc.rpartition("@")[0].partition(":")[0]
        netloc = f"{user}:{HIDDEN}@{parts.netloc.rpartition('@')[2]}"
    elif web and "@" in netloc:
        netloc = f"{HIDDEN}@{parts.netloc.rpartition('@')[2]}"
    query = [
        (key, HIDDEN if web or key.lower() in SECRET_QUERY_KEYS else value)
        for key, value in parse_qsl(parts.query, keep_blank_values=True)
    ]
    # Built by hand: urlunsplit drops the empty host of `unix:///path`.
    shown = f"{parts.scheme}://{netloc}{parts.path}"
    return f"{shown}?{urlencode(query, safe='*')}" if query else shown
