"""Connections: the venues' databases, their zone, paused or not."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime

import psycopg
from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from core.agreement.privileges import Missing, missing_privileges
from core.basics.values import text_fault
from core.manifest.model import App as AppManifest
from core.manifest.model import load_app
from core.sweep.minute_work import has_minute_work
from core.time.clock import UnknownZone, known_zone
from services.errors import AlreadyExists, InvalidValue, NotFound, first_line
from services.events import Publisher
from services.languages import check_locale
from services.models import App, Connection
from services.storage import connection_engine
from services.urls import parse_url

log = logging.getLogger(__name__)

CONNECTION_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


def check_zone(zone: str | None) -> str | None:
    """The zone if it is an IANA name tzdata ships; None (UTC) when empty."""
    if not zone:
        return None
    try:
        known_zone(zone)
    except UnknownZone:
        raise InvalidValue(
            f"{zone!r} is no IANA time zone: name one such as Europe/London, or none for UTC",
            {"field": "zone", "value": zone},
        ) from None
    return zone


def check_url(url: str) -> str:
    """The URL if libpq can read it as a PostgreSQL connection."""
    try:
        parse_url(url)
    except (psycopg.ProgrammingError, ValueError):
        raise InvalidValue(
            "the URL is no PostgreSQL URL: write postgresql://user:password@host:5432/database",
            {"field": "url"},
        ) from None
    return url


def add_connection(
    session: Session,
    name: str,
    url: str,
    zone: str | None = None,
    *,
    force: bool = False,
    locale: str | None = None,
) -> Connection:
    """Add a connection to a venue's database, in the venue's zone (None = UTC); a database
    another connection already uses is refused unless `force`."""
    if not CONNECTION_NAME.match(name):
        raise InvalidValue(
            f"{name!r} is no connection name: use lower-case letters, digits, - and _",
            {"field": "name", "value": name},
        )
    connection = Connection(
        name=name,
        url=check_url(url),
        zone=check_zone(zone),
        paused=False,
        locale=check_locale(locale),
    )
    if session.scalar(select(Connection.id).where(Connection.name == name)) is not None:
        raise AlreadyExists(f"a connection named {name!r} is already there", {"name": name})
    refusal = pooling_refusal(url)
    if refusal is not None:
        raise InvalidValue(refusal, {"field": "url"})
    sharing = [c.name for c in list_connections(session) if same_database(c.url, url)]
    if sharing and not force:
        raise AlreadyExists(
            f"connection {sharing[0]!r} already uses this database: two connections on one "
            "database sweep the same rows under separate fences; add it anyway with --force",
            {"name": name, "database_of": sharing},
        )
    session.add(connection)
    session.commit()
    if sharing:
        log.warning("connection %s added on the database of %s", name, ", ".join(sharing))
    log.info("connection %s added: %s, zone %s", name, connection.safe_url, connection.zone_name)
    return connection


STATEMENT_POOLING = (
    "the database at this URL is reached through a pooler in statement mode (PgBouncer's"
    " pool_mode = statement), which refuses a transaction of more than one statement, and"
    " every move is one: put this database in pool_mode = transaction (or session)"
)


def pooling_refusal(url: str) -> str | None:
    """Why the database at `url` cannot take Adminium's writes as a pooler in front of it
    pools them (PgBouncer's statement mode), else None: a transaction of two statements is
    tried, and rolled back. Transaction and session pooling are safe (the sweep's fence is
    a lease row, docs/operations.md "Through PgBouncer"). A database that does not answer
    is not judged: the connection is added, and its sweeps say so."""
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            conn.execute("SELECT 1")
            conn.execute("SELECT 1")
            conn.rollback()
    except psycopg.Error as error:
        if "statement pooling mode" in str(error):
            return STATEMENT_POOLING
        log.info("connection URL not tried: %s", str(error).strip().splitlines()[:1])
    return None


#: Host names that all mean this machine.
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def database_of(url: str) -> tuple[str, int, str]:
    """Which database a URL reaches: (host or socket folder, port, database name), with
    libpq's defaults (port 5432, the database named as the user) filled in."""
    parsed = parse_url(url)
    host = (parsed.host or str(parsed.query.get("host") or "")).lower().rstrip("/")
    host = "localhost" if host in LOCAL_HOSTS else host
    port = parsed.port or int(str(parsed.query.get("port") or 5432))
    return host, port, parsed.database or parsed.username or ""


def same_database(url: str, other: str) -> bool:
    """Whether two URLs reach the same database, however each is written."""
    try:
        return database_of(url) == database_of(other)
    except (psycopg.ProgrammingError, ValueError):
        return False


def list_connections(session: Session) -> list[Connection]:
    """Every connection, by name."""
    return list(session.scalars(select(Connection).order_by(Connection.name)))


def get_connection(session: Session, name: str) -> Connection:
    """The connection of that name."""
    query = select(Connection).where(Connection.name == name)
    # No name holds a NUL (the database would refuse to compare one).
    connection = None if text_fault(name) else session.scalar(query)
    if connection is None:
        raise NotFound(f"no connection named {name!r}", {"connection": name})
    return connection


def set_paused(session: Session, name: str, paused: bool, publisher: Publisher) -> Connection:
    """Pause a connection (the sweep skips it) or resume it (every row already due moves);
    its open screens are told after the commit."""
    connection = get_connection(session, name)
    connection.paused = paused
    session.commit()
    publisher.pause(name, paused)
    log.info("connection %s %s", name, "paused" if paused else "resumed")
    return connection


def set_locale(session: Session, name: str, locale: str | None) -> Connection:
    """A connection's language, spoken to its users who chose none of their own (None or
    "": none, so each browser's speaks)."""
    connection = get_connection(session, name)
    connection.locale = check_locale(locale)
    session.commit()
    log.info("connection %s: locale %s", name, connection.locale or "none")
    return connection


@dataclass(frozen=True)
class Access:
    """What a connection's database user may do of what Adminium needs (`check_access`):
    the user and database, each thing missing with its GRANT, or why it was not read."""

    user: str = ""
    database: str = ""
    missing: tuple[Missing, ...] = ()
    unread: str | None = None


def check_access(session: Session, name: str) -> Access:
    """Try what Adminium needs of a connection's database user (`core.agreement.privileges`:
    Adminium's schema made or used, each app's tables read, written and numbered), reading
    only; a database that does not answer says so (`unread`)."""
    connection = get_connection(session, name)
    return access_of(connection_engine(connection), [app.model for app in connection.apps])


def access_of(engine: Engine, apps: list[AppManifest]) -> Access:
    """What the user of `engine`'s database lacks for these apps."""
    try:
        with engine.connect() as conn:
            who, missing = missing_privileges(conn, apps)
            conn.rollback()
    except SQLAlchemyError as error:
        return Access(unread=f"the database does not answer: {first_line(error)}")
    return Access(who.user, who.database, tuple(missing))


_VERDICTS: dict[int, tuple[datetime, bool]] = {}
"""This process's verdicts of the minute-work rule: app id -> (the row's `updated_at` it was
read at, whether the minute job has work for the app). Every save of an app moves its
`updated_at`, so a verdict is asked again only of an app saved since."""


def connections_with_minute_work(session: Session) -> list[str]:
    """Every connection with an app the minute job has work for (timed moves, holds,
    reminders), paused ones too: the minute's sweeps, by name.

    A paused connection's sweep is enqueued like any other and reads the flag as it starts,
    so a connection resumed during the minute is swept in that minute.

    One query of names, app ids and their `updated_at`; only the manifests of apps saved
    since this process last asked are read and parsed (at 10,000 connections, parsing every
    manifest each minute took the tick ~2 s; docs/operations.md, "Running at scale").
    """
    query = (
        select(Connection.name, App.id, App.updated_at)
        .join(App, App.connection_id == Connection.id)
        .order_by(Connection.name)
    )
    rows = session.execute(query).all()
    stale = [app_id for _, app_id, at in rows if _VERDICTS.get(app_id, (None,))[0] != at]
    for start in range(0, len(stale), 5000):
        saved = select(App.id, App.updated_at, App.manifest).where(
            App.id.in_(stale[start : start + 5000])
        )
        for app_id, at, manifest in session.execute(saved):
            _VERDICTS[app_id] = (at, has_minute_work(load_app(manifest)))
    for gone in _VERDICTS.keys() - {app_id for _, app_id, _ in rows}:
        del _VERDICTS[gone]
    names = (name for name, app_id, _ in rows if _VERDICTS.get(app_id, (None, False))[1])
    return list(dict.fromkeys(names))
