"""Each minute's sweep of a connection, recorded in the connection's database.

The table joins `core.audit.adminium_metadata`, so `install_app` makes it with the audit
table (schema `adminium`), idempotently.

A sweep records its minute as it starts (outcome `running`, with the audit's last id) and
closes the record when it ends. A record still running when the next sweep of its
connection takes the fence belongs to a sweep that went away (its worker killed, or frozen
past its lease): that sweep closes it as `stopped`, "the worker went away", with the moves
it made counted from the audit (the clock's moves stamped with its minute since that id),
so "Moved in the last hour" and the table count them.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Connection

from core.actors import ActorKind
from core.audit import ADMINIUM_SCHEMA, adminium_metadata, audit

sweeps = sa.Table(
    "sweeps",
    adminium_metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column("connection", sa.Text, nullable=False),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("outcome", sa.Text, nullable=False),
    sa.Column("moved", sa.Integer, nullable=False),
    sa.Column("set_aside", sa.Integer, nullable=False),
    sa.Column("conflicts", sa.Integer, nullable=False),
    sa.Column("passed_by", sa.Integer, nullable=False),
    sa.Column("left_alone", sa.Integer, nullable=False),
    sa.Column("refused", JSONB, nullable=False),
    sa.Column("error", sa.Text),
    sa.Column("took_ms", sa.Float, nullable=False),
    # The holds it gave back, set aside (the cap refused them) and left to the next minute
    # (their row or account held elsewhere).
    sa.Column("given_back", sa.Integer, nullable=False, server_default="0"),
    sa.Column("holds_set_aside", sa.Integer, nullable=False, server_default="0"),
    sa.Column("holds_busy", sa.Integer, nullable=False, server_default="0"),
    # The audit's last id as the sweep started: its moves are the entries after it.
    sa.Column("audit_from", sa.BigInteger),
    sa.Index("ix_sweeps_connection_at", "connection", "at"),
    sa.Index("ix_sweeps_running", "connection", postgresql_where=sa.text("outcome = 'running'")),
)
"""One row per minute's sweep of a connection: what it moved, set aside, left, and how long."""

RUNNING = "running"
"""The outcome of a sweep's record from its start until it ends."""
STOPPED = "stopped"
WENT_AWAY = "the worker went away"
"""The error of a record that was still running when the next sweep took the fence."""

SWEEP_UPGRADES = (
    *(
        f"ALTER TABLE {ADMINIUM_SCHEMA}.sweeps"
        f" ADD COLUMN IF NOT EXISTS {column} integer NOT NULL DEFAULT 0"
        for column in ("given_back", "holds_set_aside", "holds_busy")
    ),
    f"ALTER TABLE {ADMINIUM_SCHEMA}.sweeps ADD COLUMN IF NOT EXISTS audit_from bigint",
    f"CREATE INDEX IF NOT EXISTS ix_sweeps_running ON {ADMINIUM_SCHEMA}.sweeps (connection)"
    f" WHERE outcome = '{RUNNING}'",
)
"""What a database made before the give-back counts and the open record joined the record
needs, each idempotent."""


def write_sweep(conn: Connection, values: Mapping[str, Any]) -> None:
    """Record one minute's sweep of a connection."""
    conn.execute(sa.insert(sweeps).values(dict(values)))


def moves_since_start(record: sa.FromClause | sa.Table = sweeps) -> sa.ScalarSelect[Any]:
    """The timed moves a sweep's record made so far, read from the audit: the clock's
    entries stamped with the sweep's minute after the audit id it started at (a row that an
    effect moved has a cause, a give-back no move)."""
    return (
        sa.select(sa.func.count())
        .select_from(audit)
        .where(
            audit.c.id > record.c.audit_from,
            audit.c.at == record.c.at,
            audit.c.actor_kind == ActorKind.clock.value,
            audit.c.cause.is_(None),
            audit.c.move_to.is_not(None),
        )
        .scalar_subquery()
    )


def close_gone(connection: str) -> sa.Update:
    """The statement closing the connection's records still running: their sweeps went
    away (the caller holds the fence). Stopped, "the worker went away", moves counted."""
    return (
        sa.update(sweeps)
        .where(sweeps.c.connection == connection, sweeps.c.outcome == RUNNING)
        .values(outcome=STOPPED, error=WENT_AWAY, moved=moves_since_start())
    )


def open_sweep(conn: Connection, connection: str, at: datetime) -> int:
    """Record a sweep's minute as it starts (running, nothing counted yet); its id. The
    connection's records of sweeps that went away are closed in the same statement."""
    gone = close_gone(connection).returning(sweeps.c.id).cte("gone")
    last = sa.select(sa.func.coalesce(sa.func.max(audit.c.id), 0)).scalar_subquery()
    values = {
        "connection": connection,
        "at": at,
        "outcome": RUNNING,
        "moved": 0,
        "set_aside": 0,
        "conflicts": 0,
        "passed_by": 0,
        "left_alone": 0,
        "refused": {},
        "took_ms": 0.0,
        "audit_from": last,
    }
    # PostgreSQL runs a data-modifying WITH whether or not the statement reads it.
    opened = sa.insert(sweeps).values(values).returning(sweeps.c.id).add_cte(gone)
    return int(conn.execute(opened).scalar_one())


def close_sweep(conn: Connection, record_id: int, values: Mapping[str, Any]) -> None:
    """Close a sweep's record with what it did (the values `write_sweep` takes)."""
    conn.execute(sa.update(sweeps).where(sweeps.c.id == record_id).values(dict(values)))


def recent_sweeps(conn: Connection, connection: str, limit: int = 60) -> list[dict[str, Any]]:
    """A connection's latest sweep records, newest first (screens and the CLI read these)."""
    query = (
        sa.select(sweeps)
        .where(sweeps.c.connection == connection)
        .order_by(sweeps.c.at.desc(), sweeps.c.id.desc())
        .limit(limit)
    )
    return [dict(row) for row in conn.execute(query).mappings()]
