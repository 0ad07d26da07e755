"""Adminium's own database and the venues' databases: migrations, engines, sessions.

Each operation takes a SQLAlchemy `Session` on Adminium's own database (`db.session`
inside Flask, `open_session(url)` outside it). Engines are one per database URL, and a
process keeps at most `WARM_ENGINES` of them, the least recently used one disposed to
make room: a worker sweeping thousands of venue databases holds the pools of the few it
used last and connects to the rest as it sweeps them, so the connections a process holds
open stay bounded whatever the number of venues (docs/operations.md, "Running at scale").
Databases reached through a pooler in transaction mode (PgBouncer) are bounded apart, by
`WARM_POOLED`: an idle client connection to PgBouncer holds no PostgreSQL session, so a
process keeps one open to each database it sweeps and a sweep does not connect again.
"""

from __future__ import annotations

import logging
import os
import resource
import select
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
from sqlalchemy.pool import NullPool, QueuePool
from sqlalchemy.util import LRUCache
from sqlalchemy.util import queue as sqla_queue

import services.control_version  # noqa: F401  (every control-plane write announced)
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
"""How many databases' pools keep their connections open in a process (ADMINIUM_WARM_ENGINES)."""


def _warm_pooled() -> int:
    """ADMINIUM_WARM_POOLED (default 2,000), at most half the files this process may open
    (each kept connection is a socket)."""
    asked = int(os.environ.get("ADMINIUM_WARM_POOLED", "2000"))
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return asked if soft == resource.RLIM_INFINITY else max(1, min(asked, soft // 2))


WARM_POOLED = _warm_pooled()
"""How many databases reached through a pooler keep their connection open in a process
(ADMINIUM_WARM_POOLED, bounded by the open-file limit): PgBouncer's `max_client_conn`
must hold every process's (docs/operations.md, "Through PgBouncer")."""
KEPT_ENGINES = 10_000
"""How many databases' engines a process keeps made (a cold one holds no connection: its
pool and what its first use learnt, a few KB), so that a database met again is not set up
again; past it, the least recently used is disposed."""
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


class VenuePool(QueuePool):
    """A QueuePool that can be let go cold: its idle connections closed, and one handed
    back while it is cold closed too, until it is used again; the pool itself stays, so a
    database met again costs its connect and nothing else. What every such pool does is
    listened for once, on the class (`_returned`, `_handed_out`), not set up per pool."""

    def __init__(self, creator: Any, **kw: Any) -> None:
        super().__init__(creator, **kw)
        self.cold = False
        self.server: _Server | None = None
        """What its engine shares with the server's others (set by `Engines`)."""

    @property
    def pooled(self) -> bool:
        """Whether a pooler answers for its database (known once its server connected)."""
        return self.server is not None and bool(self.server.pooled)

    def cool(self) -> None:
        """Close the idle connections; those in use close as they are given back."""
        self.cold = True
        while True:
            try:
                record = self._pool.get(False)
            except sqla_queue.Empty:
                return
            try:
                record.close()
            finally:
                self._dec_overflow()

    def dispose(self) -> None:
        """Close the idle connections, and each in use as it is given back: the engine
        disposed (`Engines.clear`, an engine let go) makes a new pool and drops this one, so
        a connection handed back here later would wait in it, open, until the garbage
        collector found it (psycopg's ResourceWarning). It stays cold: nothing gets from it
        again."""
        super().dispose()
        self.cold = True

    def _do_get(self) -> Any:
        self.cold = False
        return super()._do_get()

    def _do_return_conn(self, record: Any) -> None:
        if not self.cold:
            super()._do_return_conn(record)
            return
        try:
            record.close()
        finally:
            self._dec_overflow()


@event.listens_for(VenuePool, "checkin")
def _returned(dbapi_connection: Any, record: Any) -> None:
    record.info["adminium_idle_since"] = time.monotonic()


@event.listens_for(VenuePool, "checkout")
def _handed_out(dbapi_connection: Any, record: Any, proxy: Any) -> None:
    """A connection idle in the pool PING_IDLE or longer is pinged as it is handed out; a
    dead one is replaced (SQLAlchemy's pessimistic disconnect handling, asked only of
    connections that waited: those handed back within a second are used as they are)."""
    since = record.info.pop("adminium_idle_since", None)
    if since is None or time.monotonic() - since < PING_IDLE:
        return  # new, or handed back a moment ago
    if proxy._pool.pooled:
        # A client connection to a pooler is the pooler's, not a PostgreSQL session's: a
        # server session lost is the pooler's to replace; ours goes only with the pooler,
        # which then closes its socket. That shows on the socket at no round trip.
        if _closed_by_peer(dbapi_connection):
            raise DisconnectionError("a pooler's connection had gone away")
        return
    dialect = proxy._pool._dialect
    try:
        dialect.do_ping(dbapi_connection)
    except dialect.loaded_dbapi.Error:
        raise DisconnectionError("a pooled connection had gone away") from None


def _closed_by_peer(dbapi_connection: Any) -> bool:
    """Whether an idle connection's socket has something to read (nothing is asked of an
    idle connection: the peer closed it, or said why it will), or is gone."""
    try:
        readable, _, _ = select.select([dbapi_connection.fileno()], [], [], 0)
    except Exception:  # closed here already (psycopg raises), or no socket
        return True
    return bool(readable)


class _Server:
    """What the engines of one server share: its dialect (set up by the first engine's
    first connect), its compiled statements, and whether a pooler answers for it."""

    def __init__(self, compiled: LRUCache[Any, Any]) -> None:
        self.dialect: Any = None
        self.compiled = compiled
        self.pooled: bool | None = None

    def connected(self, dbapi_connection: Any) -> None:
        """psycopg prepares a statement once a connection ran it 5 times. Behind a pooler
        that gives a client's transactions to different server sessions (PgBouncer's
        transaction mode, before 1.21's max_prepared_statements), a prepared statement is
        missing from the next session or is another client's (`prepared statement "_pg3_0"
        already exists`): through a pooler, psycopg prepares nothing. A pooler is told by
        the backend the server announced at connect: PgBouncer announces a pid of its own,
        not the session's. Asked once per server per process (docs/operations.md, "Through
        PgBouncer")."""
        if self.pooled is None:
            with dbapi_connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                backend = cursor.fetchone()[0]
            dbapi_connection.rollback()
            self.pooled = backend != dbapi_connection.info.backend_pid
            if self.pooled:
                info = dbapi_connection.info
                log.info("a pooler answers for %s:%s: no prepared statements", info.host, info.port)
        if self.pooled:
            dbapi_connection.prepare_threshold = None


class Engines:
    """Engines by URL: at most `size` databases' pools holding connections, the least
    recently used one let go cold (its connections closed) to make room; the engines
    themselves kept, up to `kept`, so a database met again costs its connect alone. The
    databases a pooler answers for are bounded apart, by `pooled` (their connections hold
    no PostgreSQL session while idle); a server is known pooled from its first connect on.

    Engines on the same server share one dialect and its compiled statements: the first
    engine of a server connects as SQLAlchemy's do (reading the server's version and
    settings once); every later one, for another database of that server, is made on its
    dialect, so a database met for the first time costs its connect and no more (no
    dialect set-up, no statement compiled again)."""

    def __init__(self, size: int, kept: int = KEPT_ENGINES, pooled: int = WARM_POOLED) -> None:
        self._engines: LeastRecent[str, Engine] = LeastRecent(max(size, pooled, kept))
        self._warm: LeastRecent[str, Engine] = LeastRecent(size)
        self._pooled: LeastRecent[str, Engine] = LeastRecent(pooled)
        self._servers: dict[tuple[Any, ...], _Server] = {}

    def get(self, url: str) -> Engine:
        """The engine for a URL, its pool now among the warm (letting the coldest go cold)."""
        engine, gone = self._engines.get_or_make(url, lambda: self._make(url))
        for old in gone:
            old.dispose()
        pooled = isinstance(engine.pool, VenuePool) and engine.pool.pooled
        warm, other = (self._pooled, self._warm) if pooled else (self._warm, self._pooled)
        if warm.get(url) is None:
            other.forget(url)  # found pooled at its first connect: it moves over
            for cold in warm.put(url, engine):
                if isinstance(cold.pool, VenuePool):
                    # Its idle connections close now; one still checked out as it is given back.
                    cold.pool.cool()
                else:
                    cold.dispose()
        return engine

    def _make(self, url: str) -> Engine:
        target = make_url(sqlalchemy_url(url))
        key = _server_of(target)
        server = self._servers.get(key)
        if server is None or server.dialect is None:
            return self._first(target, key)
        dialect = server.dialect
        cargs, cparams = dialect.create_connect_args(target)
        on_connect = dialect.on_connect_url(target)

        def connect() -> Any:
            dbapi_connection = dialect.connect(*cargs, **cparams)
            if on_connect is not None:
                on_connect(dbapi_connection)
            server.connected(dbapi_connection)
            return dbapi_connection

        pool = VenuePool(connect, pool_size=POOL_SIZE, dialect=dialect)
        pool.server = server
        engine = Engine(pool, dialect, target, query_cache_size=0)
        engine._compiled_cache = server.compiled
        return engine

    def _first(self, target: URL, key: tuple[Any, ...]) -> Engine:
        """A server's first engine, made as SQLAlchemy makes one; its dialect, once its
        first connect has read the server's settings, serves the server's later ones."""
        server = self._servers.setdefault(key, _Server(LRUCache(COMPILED_STATEMENTS)))
        engine = create_engine(target, poolclass=VenuePool, pool_size=POOL_SIZE, query_cache_size=0)
        engine._compiled_cache = server.compiled
        engine.pool.server = server  # type: ignore[attr-defined]

        @event.listens_for(engine.pool, "connect")
        def _connected(dbapi_connection: Any, record: Any) -> None:
            server.connected(dbapi_connection)

        @event.listens_for(engine.pool, "first_connect")
        def _ready(dbapi_connection: Any, record: Any) -> None:
            # After SQLAlchemy's own first connect has read the server's settings.
            if server.dialect is None:
                server.dialect = engine.dialect

        return engine

    def __len__(self) -> int:
        """How many databases' pools are warm (may hold connections), pooled ones included."""
        return len(self._warm) + len(self._pooled)

    def clear(self) -> None:
        """Dispose of every engine (tests, and a process that forks)."""
        self._warm.take_all()
        self._pooled.take_all()
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
    with Session(autocommit(engine_for(url)), expire_on_commit=False) as session:
        yield session


def autocommit(engine: Engine) -> Engine:
    """The engine's autocommitting twin (same pool, made once): each statement its own
    transaction, with no BEGIN and ROLLBACK round trips around it (reads alone)."""
    reading = _AUTOCOMMIT.get(engine)
    if reading is None:
        reading = _AUTOCOMMIT[engine] = engine.execution_options(isolation_level="AUTOCOMMIT")
    return reading


_AUTOCOMMIT: weakref.WeakKeyDictionary[Engine, Engine] = weakref.WeakKeyDictionary()
"""Each warm engine's autocommitting twin (same pool), made once."""


def connection_engine(connection: Connection) -> Engine:
    """The engine for a connection's own database."""
    return engine_for(connection.url)
