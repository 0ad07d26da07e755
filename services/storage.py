"""Adminium's own database and the venues' databases: migrations, engines, sessions.

Each operation takes a SQLAlchemy `Session` on Adminium's own database (`db.session`
inside Flask, `open_session(url)` outside it). Engines are one per database URL, and a
process keeps at most `WARM_ENGINES` of them, the least recently used one disposed to
make room: a worker sweeping thousands of venue databases holds the pools of the few it
used last and connects to the rest as it sweeps them, so the connections a process holds
open stay bounded whatever the number of venues (docs/operations.md, "Running at scale").
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from services.models import SCHEMA, Connection
from services.recent import LeastRecent
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


WARM_ENGINES = int(os.environ.get("ADMINIUM_WARM_ENGINES", "8"))
"""How many database URLs' engines (and pools) a process keeps (ADMINIUM_WARM_ENGINES)."""
POOL_SIZE = 5
"""Connections an engine's pool keeps open once used (more may open while busy)."""


class Engines:
    """At most `size` engines by URL, the least recently used disposed to make room."""

    def __init__(self, size: int) -> None:
        self._engines: LeastRecent[str, Engine] = LeastRecent(size)

    def get(self, url: str) -> Engine:
        """The engine for a URL: the warm one, or a new one (disposing the coldest)."""
        engine, cold = self._engines.get_or_make(
            url,
            lambda: create_engine(sqlalchemy_url(url), pool_pre_ping=True, pool_size=POOL_SIZE),
        )
        for gone in cold:
            # Its idle connections close now; one still checked out closes when given back.
            gone.dispose()
        return engine

    def __len__(self) -> int:
        return len(self._engines)

    def clear(self) -> None:
        """Dispose of every engine (tests, and a process that forks)."""
        for engine in self._engines.take_all():
            engine.dispose()


ENGINES = Engines(WARM_ENGINES)
"""This process's warm engines."""


def engine_for(url: str) -> Engine:
    """The pooled engine of a database URL (the control plane's, or a connection's)."""
    return ENGINES.get(url)


@contextmanager
def open_session(url: str) -> Iterator[Session]:
    """A session on the control plane outside Flask (console, jobs)."""
    with Session(engine_for(url), expire_on_commit=False) as session:
        yield session


def connection_engine(connection: Connection) -> Engine:
    """The engine for a connection's own database."""
    return engine_for(connection.url)
