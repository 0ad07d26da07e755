"""Adminium's own database and the venues' databases: migrations, engines, sessions.

Each operation takes a SQLAlchemy `Session` on Adminium's own database (`db.session`
inside Flask, `open_session(url)` outside it). Engines are one per database URL.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from services.models import SCHEMA, Connection
from services.urls import hide_password, sqlalchemy_url

log = logging.getLogger(__name__)

MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"
_UPGRADING = threading.Lock()


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
    """A session on the control plane outside Flask (console, jobs)."""
    with Session(engine_for(url), expire_on_commit=False) as session:
        yield session


def connection_engine(connection: Connection) -> Engine:
    """The engine for a connection's own database."""
    return engine_for(connection.url)
