"""The apps a control plane keeps: listed with their tables and whether those agree with
the manifest (`adminium app list`), and an app forgotten (`adminium app remove`), its
tables kept unless asked to drop those Adminium made, never while the clock sweeps it."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from core.store.install import drop_made_tables
from core.store.schema import sample_marks, set_aside
from core.sweep.fence import Fence
from services.agreement import disagreeing, refresh_agreements, saved_app
from services.connections import get_connection, list_connections
from services.errors import ControlPlaneError, DatabaseRefused, first_line
from services.models import App
from services.storage import connection_engine

log = logging.getLogger(__name__)

REMOVE_DEADLINE = 60.0
"""Seconds `app remove` may hold the connection's sweep fence (a sweep waits that long at
most; it takes a few hundred milliseconds)."""


@dataclass(frozen=True)
class Listed:
    """One app as `app list` shows it."""

    connection: str
    app: str
    tables: tuple[str, ...]
    """Its tables, by name (a saved manifest keeps no order of them)."""
    agreement: str
    """`tables agree with the manifest`, `tables disagree with the manifest: N (…)`, or
    `tables not compared yet`."""


def list_apps(session: Session, connection_name: str | None, *, now: datetime) -> list[Listed]:
    """Each app of the connection (or of every one), its tables, and whether they agree with
    its manifest: compared again first where the tables or the manifest changed since the
    kept comparison (`services.agreement.refresh_agreements`; a database that does not
    answer keeps the last one). Raises NotFound."""
    if connection_name is not None:
        connections = [get_connection(session, connection_name)]
    else:
        connections = list_connections(session)
    found: list[Listed] = []
    for connection in connections:
        refresh_agreements(session, connection, now=now)
        for app in sorted(connection.apps, key=lambda a: a.name):
            found.append(
                Listed(
                    connection.name,
                    app.name,
                    tuple(sorted(app.model.tables)),
                    _agreement_words(app),
                )
            )
    return found


def _agreement_words(app: App) -> str:
    """What an app's kept comparison says."""
    if app.agreement is None:
        return "tables not compared yet (the database did not answer)"
    found = disagreeing([app])
    if found is None:
        return "tables agree with the manifest"
    return f"tables disagree with the manifest: {found.count} ({found.first})"


@dataclass(frozen=True)
class Removed:
    """What `remove_app` did: the app forgotten, its tables dropped and kept."""

    connection: str
    app: str
    dropped: tuple[str, ...]
    kept: tuple[str, ...]
    unreached: str | None = None
    """Why the database did not answer, when it did not: the app is forgotten all the same
    (no sweep runs there), its set-aside records there left as they are."""


def remove_app(
    session: Session,
    connection_name: str,
    app_name: str,
    *,
    drop_tables: bool = False,
    yes: bool = False,
) -> Removed:
    """Forget an app of the connection: its saved manifest, its users' roles in it, its
    kept comparison, its set-aside records and sample marks (a database that does not
    answer keeps those: the app is forgotten all the same). Its tables stay, unless
    `drop_tables` (with `yes`): then those Adminium made are dropped (a table of the
    venue's own never is). Done while holding the connection's sweep fence, so no sweep
    is mid-way on it: refused (CONTROL_PLANE_REFUSED) while one is. The database's part
    commits only once the control plane's has. Raises NotFound, DatabaseRefused."""
    connection = get_connection(session, connection_name)
    app = saved_app(session, connection, app_name)
    if drop_tables and not yes:
        raise ControlPlaneError(
            f"not removed: --drop-tables drops app {app_name}'s tables Adminium made and every"
            " row in them; run again with --yes to drop them",
            {"connection": connection_name, "app": app_name},
        )
    model = app.model
    engine = connection_engine(connection)
    fence = Fence(
        connection_name, deadline=REMOVE_DEADLINE, holder=f"app remove {connection_name}/{app_name}"
    )
    try:
        opened = _answering(engine)
    except sa.exc.OperationalError as error:
        if drop_tables:
            raise DatabaseRefused(
                f"app {app_name} not removed: connection {connection_name!r}'s database does "
                f"not answer, so its tables cannot be dropped: {first_line(error)}",
                {"connection": connection_name, "app": app_name},
            ) from None
        # No sweep runs on a database that does not answer: the app is forgotten here alone.
        session.execute(sa.delete(App).where(App.id == app.id))
        session.commit()
        log.info("app %s removed from connection %s (its database did not answer)", app_name,
                 connection_name)  # fmt: skip
        return Removed(
            connection_name, app_name, (), tuple(sorted(model.tables)), first_line(error)
        )
    try:
        with opened as conn:
            if not fence.acquire(conn):
                holder = fence.turned_away_by
                said = f" ({holder.sentence()})" if holder is not None else ""
                raise ControlPlaneError(
                    f"not removed: the clock is sweeping connection {connection_name}{said}; "
                    "run again once the sweep ends (a sweep takes seconds)",
                    {"connection": connection_name, "app": app_name},
                )
            try:
                with conn.begin():
                    dropped: list[str] = []
                    kept = list(model.tables)
                    if drop_tables:
                        dropped, kept = drop_made_tables(conn, model)
                    for table in (set_aside, sample_marks):
                        _forget(conn, table, app_name)
                    session.execute(sa.delete(App).where(App.id == app.id))
                    session.commit()
            finally:
                fence.release(conn)
    except SQLAlchemyError as error:
        session.rollback()
        raise DatabaseRefused(
            f"app {app_name} not removed from connection {connection_name!r}: {first_line(error)}",
            {"connection": connection_name, "app": app_name},
        ) from None
    log.info(
        "app %s removed from connection %s (tables dropped: %s)",
        app_name,
        connection_name,
        ", ".join(dropped) or "none",
    )
    return Removed(connection_name, app_name, tuple(sorted(dropped)), tuple(sorted(kept)))


def _answering(engine: sa.Engine) -> sa.Connection:
    """A connection that has answered a statement: a pooled one the server dropped since
    (its database dropped or restarted) is let go and a new one opened, whose failure
    (OperationalError) is then the database's own answer."""
    for attempt in (1, 2):
        conn = engine.connect()
        try:
            conn.exec_driver_sql("SELECT 1")
            conn.rollback()
            return conn
        except sa.exc.OperationalError as error:
            conn.close()
            if attempt == 2 or not error.connection_invalidated:
                raise
    raise AssertionError("unreachable")


def _forget(conn: sa.Connection, table: sa.Table, app_name: str) -> None:
    """Delete the app's rows of one of Adminium's tables (none there where a database
    predates that table, or its user may not write it: said in the log)."""
    try:
        with conn.begin_nested():
            conn.execute(sa.delete(table).where(table.c.app == app_name))
    except sa.exc.ProgrammingError as error:
        log.warning("app %s: %s not cleared: %s", app_name, table.name, first_line(error))
