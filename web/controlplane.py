"""Control-plane services: connections, apps, users. The CLI, the screens and the jobs call these.

Each service takes a SQLAlchemy `Session` on Adminium's own database (`db.session` inside
Flask, `open_session(url)` outside it), does its one change and commits. A refusal is an
`AdminiumError` with a code below; nothing is written. A connection's URL is never
logged or returned as is: only `Connection.safe_url`.
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import psycopg
from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool
from werkzeug.security import check_password_hash, generate_password_hash

from core.errors import AdminiumError
from core.manifest.check import check_manifest
from core.manifest.model import App as AppManifest
from core.manifest.model import load_app
from core.store import Store, install_app
from web.models import (
    ADMIN,
    SCHEMA,
    App,
    Connection,
    User,
    UserRole,
    hide_password,
    parse_url,
    sqlalchemy_url,
)

log = logging.getLogger(__name__)

MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"
CONNECTION_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
_UPGRADING = threading.Lock()


class ControlPlaneError(AdminiumError):
    """A control-plane change refused; nothing was written."""

    code = "CONTROL_PLANE_REFUSED"
    status = 400


class NotFound(ControlPlaneError):
    """No connection, app or user of that name."""

    code = "NOT_FOUND"
    status = 404


class AlreadyExists(ControlPlaneError):
    """A connection, app or user of that name is already there."""

    code = "ALREADY_EXISTS"
    status = 409


class InvalidValue(ControlPlaneError):
    """A name, URL, zone, email or role that cannot be used."""

    code = "INVALID_VALUE"
    status = 400


class ManifestRefused(ControlPlaneError):
    """The manifest check refused the app; `details.refusals` holds its sentences."""

    code = "MANIFEST_REFUSED"
    status = 400


class DatabaseRefused(ControlPlaneError):
    """A connection's database did not answer, or refused what was asked of it."""

    code = "DATABASE_REFUSED"
    status = 502


def first_line(error: SQLAlchemyError) -> str:
    """What the database said, without the SQL or the parameters SQLAlchemy adds."""
    cause = getattr(error, "orig", None) or error
    return str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__


@dataclass(frozen=True)
class NewUser:
    """A user just added or given a role; `token` is shown once, and only when new."""

    user: User
    token: str | None


# --- storage --------------------------------------------------------------------


def upgrade_control_plane(url: str) -> None:
    """Bring Adminium's own database to the newest migration (`alembic upgrade head`)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["database_url"] = url
    heads = set(ScriptDirectory.from_config(config).get_heads())
    if control_plane_revisions(url) == heads:
        log.debug("control plane already at %s in %s", heads, hide_password(url))
        return
    # Alembic's context is one global per process; processes wait on env.py's advisory lock.
    with _UPGRADING:
        command.upgrade(config, "head")
    log.info("control plane at the newest migration in %s", hide_password(url))


def control_plane_revisions(url: str) -> set[str]:
    """The migrations the control-plane database is at (none when empty)."""
    engine = create_engine(sqlalchemy_url(url), poolclass=NullPool)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"version_table_schema": SCHEMA})
            return set(context.get_current_heads())
    finally:
        engine.dispose()


@cache
def engine_for(url: str) -> Engine:
    """One pooled engine per database URL (the control plane's, or a connection's)."""
    return create_engine(sqlalchemy_url(url), pool_pre_ping=True)


@contextmanager
def open_session(url: str) -> Iterator[Session]:
    """A session on the control plane outside Flask (CLI, jobs)."""
    with Session(engine_for(url), expire_on_commit=False) as session:
        yield session


def connection_engine(connection: Connection) -> Engine:
    """The engine for a connection's own database."""
    return engine_for(connection.url)


# --- connections ----------------------------------------------------------------


@cache
def iana_zones() -> frozenset[str]:
    """The IANA zone names tzdata ships (no `localtime`, which is the server's zone)."""
    return frozenset(resources.files("tzdata").joinpath("zones").read_text().split())


def check_zone(zone: str | None) -> str | None:
    """The zone if it is an IANA name zoneinfo can read; None (UTC) when empty."""
    if not zone:
        return None
    if zone in iana_zones():
        try:
            ZoneInfo(zone)
            return zone
        except (ZoneInfoNotFoundError, ValueError):
            pass
    raise InvalidValue(
        f"{zone!r} is no IANA time zone: name one such as Europe/London, or none for UTC",
        {"field": "zone", "value": zone},
    )


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


def add_connection(session: Session, name: str, url: str, zone: str | None = None) -> Connection:
    """Add a connection to a venue's database, in the venue's zone (None = UTC)."""
    if not CONNECTION_NAME.match(name):
        raise InvalidValue(
            f"{name!r} is no connection name: use lower-case letters, digits, - and _",
            {"field": "name", "value": name},
        )
    connection = Connection(name=name, url=check_url(url), zone=check_zone(zone), paused=False)
    if session.scalar(select(Connection.id).where(Connection.name == name)) is not None:
        raise AlreadyExists(f"a connection named {name!r} is already there", {"name": name})
    session.add(connection)
    session.commit()
    log.info("connection %s added: %s, zone %s", name, connection.safe_url, connection.zone_name)
    return connection


def list_connections(session: Session) -> list[Connection]:
    """Every connection, by name."""
    return list(session.scalars(select(Connection).order_by(Connection.name)))


def get_connection(session: Session, name: str) -> Connection:
    """The connection of that name."""
    connection = session.scalar(select(Connection).where(Connection.name == name))
    if connection is None:
        raise NotFound(f"no connection named {name!r}", {"connection": name})
    return connection


def set_paused(session: Session, name: str, paused: bool) -> Connection:
    """Pause a connection (the sweep skips it) or resume it (every row already due moves)."""
    connection = get_connection(session, name)
    connection.paused = paused
    session.commit()
    log.info("connection %s %s", name, "paused" if paused else "resumed")
    return connection


def connections_to_sweep(session: Session) -> list[Connection]:
    """Connections not paused whose apps list a timed move: the minute sweep's work."""
    running = select(Connection).where(Connection.paused.is_(False)).order_by(Connection.name)
    return [c for c in session.scalars(running) if any(a.has_timed_moves for a in c.apps)]


# --- apps -----------------------------------------------------------------------


def add_app(
    session: Session,
    connection_name: str,
    manifest: dict[str, Any],
    *,
    replace: bool = False,
    create_tables: bool = False,
) -> App:
    """Save an app on a connection once the manifest check passes; refuse with its sentences.

    With `create_tables`, the app's tables, its timed moves' indexes and Adminium's schema
    are made in the connection's database first; the app is saved only if that works.
    """
    connection = get_connection(session, connection_name)
    refusals = check_manifest(manifest)
    if refusals:
        raise ManifestRefused(
            "the manifest check refused the app: "
            + "; ".join(f"{r.where}: {r.sentence}" for r in refusals),
            {"refusals": [{"where": r.where, "sentence": r.sentence} for r in refusals]},
        )
    name = str(manifest["name"])
    refuse_shared_tables(connection, load_app(manifest))
    app = session.scalar(select(App).where(App.connection == connection, App.name == name))
    if app is not None and not replace:
        raise AlreadyExists(
            f"connection {connection_name!r} already has an app named {name!r}",
            {"connection": connection_name, "app": name},
        )
    if app is None:
        app = App(connection=connection, name=name, manifest=manifest)
        session.add(app)
    else:
        app.manifest = manifest
    if create_tables:
        try:
            install_app(connection_engine(connection), app.model)
        except SQLAlchemyError as error:
            session.rollback()
            raise DatabaseRefused(
                f"could not make the app's tables in {connection.safe_url}: {first_line(error)}",
                {"connection": connection_name},
            ) from None
        log.info("app %s: tables made on connection %s", name, connection_name)
    session.commit()
    log.info("app %s saved on connection %s", name, connection_name)
    return app


def refuse_shared_tables(connection: Connection, new: AppManifest) -> None:
    """Two apps of one connection never keep a table of the same name in the same schema."""
    for other in connection.apps:
        if other.name == new.name or other.model.schema_name != new.schema_name:
            continue
        shared = sorted(set(other.model.tables) & set(new.tables))
        if shared:
            raise AlreadyExists(
                f"app {other.name!r} of this connection already keeps {', '.join(shared)} in "
                f"schema {new.schema_name!r}: give app {new.name!r} a schema of its own "
                f'("schema": "{new.name}")',
                {"app": other.name, "tables": shared, "schema": new.schema_name},
            )


def app_store(app: App) -> Store:
    """The pipeline's view of an app: its tables on the connection's database, its zone."""
    connection = app.connection
    return Store(
        connection_engine(connection),
        app.model,
        ZoneInfo(connection.zone_name),
        connection=connection.name,
    )


def find_table(session: Session, connection_name: str, table: str) -> App:
    """The app of a connection that has `table`; `app.table` when several have one."""
    connection = get_connection(session, connection_name)
    app_name, _, table = table.rpartition(".")
    apps = [a for a in connection.apps if table in a.model.tables and app_name in ("", a.name)]
    if not apps:
        raise NotFound(
            f"no app of connection {connection_name!r} has a table {table!r}",
            {"connection": connection_name, "table": table},
        )
    if len(apps) > 1:
        raise InvalidValue(
            f"several apps have a table {table!r}: write app.{table}", {"table": table}
        )
    return apps[0]


def find_app(session: Session, ref: str) -> App:
    """An app by `connection/app`, or by its name alone when only one connection has it."""
    connection_name, _, name = ref.rpartition("/")
    query = select(App).where(App.name == name)
    if connection_name:
        query = query.join(App.connection).where(Connection.name == connection_name)
    apps = list(session.scalars(query))
    if not apps:
        raise NotFound(f"no app named {ref!r}", {"app": ref})
    if len(apps) > 1:
        raise InvalidValue(
            f"several connections have an app named {name!r}: write connection/{name}",
            {"app": ref},
        )
    return apps[0]


# --- users ----------------------------------------------------------------------


def hash_token(token: str) -> str:
    """What is stored of an API token: its SHA-256 (the token itself is shown once)."""
    return hashlib.sha256(token.encode()).hexdigest()


def add_user(
    session: Session,
    email: str,
    role: str,
    app: str | None = None,
    password: str | None = None,
) -> NewUser:
    """Add a user (or a role to one): `admin` of every app, or a role of the app's `roles`."""
    email = email.strip().lower()
    if not EMAIL.match(email):
        raise InvalidValue(f"{email!r} is no email address", {"field": "email"})
    target = find_app(session, app) if app else None
    if target is None and role != ADMIN:
        raise InvalidValue(
            f"the role {role!r} belongs to an app: name it with --app", {"role": role}
        )
    if target is not None and role != ADMIN and role not in target.model.roles:
        raise InvalidValue(
            f"app {target.name!r} has no role {role!r}; its roles: "
            + (", ".join(target.model.roles) or "none"),
            {"role": role, "app": target.name},
        )
    user = session.scalar(select(User).where(User.email == email))
    token = None
    if user is None:
        token = secrets.token_urlsafe(32)
        user = User(email=email, token_hash=hash_token(token))
        session.add(user)
    if password is not None:
        user.password_hash = generate_password_hash(password)
    app_id = target.id if target else None
    if not any(r.role == role and r.app_id == app_id for r in user.roles):
        user.roles.append(UserRole(app=target, role=role))
    session.commit()
    log.info("user %s holds %s in %s", user.id, role, target.name if target else "every app")
    return NewUser(user=user, token=token)


def renew_token(session: Session, email: str) -> str:
    """Give a user a new API token (the old one opens nothing); shown once."""
    user = session.scalar(select(User).where(User.email == email.strip().lower()))
    if user is None:
        raise NotFound(f"no user {email!r}", {"email": email})
    token = secrets.token_urlsafe(32)
    user.token_hash = hash_token(token)
    session.commit()
    return token


def user_by_token(session: Session, token: str) -> User | None:
    """The user an API token belongs to."""
    return session.scalar(select(User).where(User.token_hash == hash_token(token)))


def user_by_password(session: Session, email: str, password: str) -> User | None:
    """The user when the email and password match."""
    user = session.scalar(select(User).where(User.email == email.strip().lower()))
    if user is None or not user.password_hash:
        return None
    return user if check_password_hash(user.password_hash, password) else None
