"""Database URLs: read one (URL or libpq conninfo), hand it to SQLAlchemy, show it safely.

`hide_password` is the one way a URL is shown on a screen, in a log or on the console.
"""

from __future__ import annotations

import psycopg

from core.store import engine_url

parse_url = engine_url
"""A PostgreSQL URL or libpq conninfo string read into its parts (to check it, to show it)."""


def sqlalchemy_url(url: str) -> str:
    """A plain `postgresql://` URL or conninfo string as SQLAlchemy's psycopg 3 URL."""
    return parse_url(url).render_as_string(hide_password=False)


def hide_password(url: str) -> str:
    """A connection URL as it may be shown: `postgresql://user:***@host:port/db`."""
    try:
        parsed = parse_url(url)
    except (psycopg.ProgrammingError, ValueError):
        return "(unreadable URL)"
    # libpq's other secret (the client key's passphrase) is left out altogether.
    shown = parsed.set(drivername="postgresql").difference_update_query(["sslpassword"])
    return shown.render_as_string(hide_password=True)
