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
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import URL, Engine, create_engine, event, make_url
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool, Pool, QueuePool
from sqlalchemy.util import LRUCache

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
PING_IDLE = 1.0
"""Seconds a pooled connection may sit idle and still be handed out without a ping."""
COMPILED_STATEMENTS = 5000
"""Compiled statements one server's engines share (every app's few, warm for each of its
databases)."""


def _server_of(url: URL) -> tuple[Any, ...]:
    """What one dialect may serve: the same server, user and options, any database."""
    return (
        url.drivername,
        url.host,
        url.port,
        url.username,
        url.password,
        *sorted(url.query.items()),
    )


def _ping_when_idle(pool: Pool, dialect: Any) -> None:
    """A connection idle in the pool PING_IDLE or longer is pinged as it is handed out; a
    dead one is replaced (SQLAlchemy's pessimistic disconnect handling, asked only of
    connections that waited: those handed back within a second are used as they are)."""

    @event.listens_for(pool, "checkin")
    def _returned(dbapi_connection: Any, record: Any) -> None:
        record.info["adminium_idle_since"] = time.monotonic()

    @event.listens_for(pool, "checkout")
    def _handed_out(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        since = record.info.pop("adminium_idle_since", None)
        if since is None or time.monotonic() - since < PING_IDLE:
            return  # new, or handed back a moment ago
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error:
            raise DisconnectionError("a pooled connection had gone away") from None


def _unprepared_behind_a_pooler(pool: Pool, verdicts: dict[Any, bool], server: Any) -> None:
    """psycopg prepares a statement once a connection ran it 5 times. Behind a pooler that
    gives a client's transactions to different server sessions (PgBouncer's transaction
    mode, before 1.21's max_prepared_statements), a prepared statement is missing from the
    next session or is another client's (`prepared statement "_pg3_0" already exists`):
    through a pooler, psycopg prepares nothing. A pooler is told by the backend the server
    announced at connect: PgBouncer announces a pid of its own, not the session's. Asked
    once per server per process (docs/operations.md, "Through PgBouncer")."""

    @event.listens_for(pool, "connect")
    def _connected(dbapi_connection: Any, record: Any) -> None:
        pooled = verdicts.get(server)
        if pooled is None:
            with dbapi_connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                backend = cursor.fetchone()[0]
            dbapi_connection.rollback()
            pooled = verdicts[server] = backend != dbapi_connection.info.backend_pid
            if pooled:
                log.info("a pooler answers for %s: no prepared statements", server[1:3])
        if pooled:
            dbapi_connection.prepare_threshold = None


class Engines:
    """At most `size` engines by URL, the least recently used disposed to make room.

    Engines on the same server share one dialect and its compiled statements: the first
    engine of a server connects as SQLAlchemy's do (reading the server's version and
    settings once); every later one, for another database of that server, is made on its
    dialect, so a database met for the first time costs its connect and no more (no
    dialect set-up, no statement compiled again)."""

    def __init__(self, size: int) -> None:
        self._engines: LeastRecent[str, Engine] = LeastRecent(size)
        self._servers: dict[tuple[Any, ...], tuple[Any, Any]] = {}
        self._pooled: dict[Any, bool] = {}
        """By server: whether a pooler answers for it (`_unprepared_behind_a_pooler`)."""

    def get(self, url: str) -> Engine:
        """The engine for a URL: the warm one, or a new one (disposing the coldest)."""
        engine, cold = self._engines.get_or_make(url, lambda: self._make(url))
        for gone in cold:
            # Its idle connections close now; one still checked out closes when given back.
            gone.dispose()
        return engine

    def _make(self, url: str) -> Engine:
        target = make_url(sqlalchemy_url(url))
        server = _server_of(target)
        known = self._servers.get(server)
        if known is None:
            engine = create_engine(target, pool_size=POOL_SIZE, query_cache_size=0)
            engine._compiled_cache = LRUCache(COMPILED_STATEMENTS)
            _ping_when_idle(engine.pool, engine.dialect)
            _unprepared_behind_a_pooler(engine.pool, self._pooled, server)

            @event.listens_for(engine.pool, "first_connect")
            def _ready(dbapi_connection: Any, record: Any) -> None:
                # After SQLAlchemy's own first connect has read the server's settings.
                self._servers.setdefault(server, (engine.dialect, engine._compiled_cache))

            return engine
        dialect, compiled = known
        cargs, cparams = dialect.create_connect_args(target)
        pool = QueuePool(
            lambda: dialect.connect(*cargs, **cparams), pool_size=POOL_SIZE, dialect=dialect
        )
        on_connect = dialect.on_connect_url(target)
        if on_connect is not None:
            event.listen(pool, "connect", lambda conn, record: on_connect(conn))
        _ping_when_idle(pool, dialect)
        _unprepared_behind_a_pooler(pool, self._pooled, server)
        engine = Engine(pool, dialect, target, query_cache_size=0)
        engine._compiled_cache = compiled
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


@contextmanager
def reading_session(url: str) -> Iterator[Session]:
    """A session on the control plane for reads alone, each statement autocommitted: no
    BEGIN and ROLLBACK round trips around them (the sweep job's one read of its
    connection and apps)."""
    engine = engine_for(url)
    reading = _AUTOCOMMIT.get(engine)
    if reading is None:
        reading = _AUTOCOMMIT[engine] = engine.execution_options(isolation_level="AUTOCOMMIT")
    with Session(reading, expire_on_commit=False) as session:
        yield session


_AUTOCOMMIT: weakref.WeakKeyDictionary[Engine, Engine] = weakref.WeakKeyDictionary()
"""Each warm engine's autocommitting twin (same pool), made once."""


def connection_engine(connection: Connection) -> Engine:
    """The engine for a connection's own database."""
    return engine_for(connection.url)
