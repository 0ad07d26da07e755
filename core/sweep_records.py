"""Each minute's sweep of a connection, recorded in the connection's database.

The table joins `core.audit.adminium_metadata`, so `install_app` makes it with the audit
table (schema `adminium`), idempotently.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Connection

from core.audit import ADMINIUM_SCHEMA, adminium_metadata

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
    sa.Index("ix_sweeps_connection_at", "connection", "at"),
)
"""One row per minute's sweep of a connection: what it moved, set aside, left, and how long."""

SWEEP_UPGRADES = tuple(
    f"ALTER TABLE {ADMINIUM_SCHEMA}.sweeps"
    f" ADD COLUMN IF NOT EXISTS {column} integer NOT NULL DEFAULT 0"
    for column in ("given_back", "holds_set_aside", "holds_busy")
)
"""What a database made before the give-back counts joined the record needs, each idempotent."""


def write_sweep(conn: Connection, values: Mapping[str, Any]) -> None:
    """Record one minute's sweep of a connection."""
    conn.execute(sa.insert(sweeps).values(dict(values)))


def recent_sweeps(conn: Connection, connection: str, limit: int = 60) -> list[dict[str, Any]]:
    """A connection's latest sweep records, newest first (screens and the CLI read these)."""
    query = (
        sa.select(sweeps)
        .where(sweeps.c.connection == connection)
        .order_by(sweeps.c.at.desc(), sweeps.c.id.desc())
        .limit(limit)
    )
    return [dict(row) for row in conn.execute(query).mappings()]
