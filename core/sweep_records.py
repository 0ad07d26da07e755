"""The sweep's bookkeeping in the connection's database: set-aside rows and each minute's record.

Both tables join `core.audit.adminium_metadata`, so `install_app` makes them with the
audit table (schema `adminium`), idempotently.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB, insert
from sqlalchemy.engine import Connection

from core.audit import adminium_metadata

SET_ASIDE_FOR = timedelta(hours=1)
"""How long a refused row is left alone (spec: "left alone for an hour")."""

set_aside = sa.Table(
    "set_aside",
    adminium_metadata,
    sa.Column("app", sa.Text, primary_key=True),
    sa.Column("table_name", sa.Text, primary_key=True),
    sa.Column("row_key", sa.Text, primary_key=True),
    sa.Column("rule", sa.Integer, primary_key=True),
    sa.Column("code", sa.Text, nullable=False),
    sa.Column("message", sa.Text, nullable=False, server_default=""),
    sa.Column("moment", sa.DateTime(timezone=True), nullable=False),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("until", sa.DateTime(timezone=True), nullable=False),
)
"""A refused timed move: its row, rule (from 1), code, the moment it was judged at, until."""

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
    sa.Index("ix_sweeps_connection_at", "connection", "at"),
)
"""One row per minute's sweep of a connection: what it moved, set aside, left, and how long."""


@dataclass(frozen=True)
class SetAside:
    """A row set aside: where it is, its rule's number, the refusal, its moment, until when."""

    app: str
    table: str
    key: str
    rule: int
    code: str
    moment: datetime
    until: datetime
    message: str = ""
    at: datetime | None = None


RecordKey = tuple[str, str, str, int]
"""(app, table, row key as text, rule number)."""


def read_set_aside(
    conn: Connection, apps: list[str], *, table: str | None = None, key: str | None = None
) -> dict[RecordKey, SetAside]:
    """The set-aside records of the apps (of one table, or one row), oldest refusal first."""
    query = sa.select(set_aside).where(set_aside.c.app.in_(apps)).order_by(set_aside.c.at)
    if table is not None:
        query = query.where(set_aside.c.table_name == table)
    if key is not None:
        query = query.where(set_aside.c.row_key == key)
    found: dict[RecordKey, SetAside] = {}
    for row in conn.execute(query).mappings():
        record = SetAside(
            row["app"],
            row["table_name"],
            row["row_key"],
            row["rule"],
            row["code"],
            row["moment"],
            row["until"],
            row["message"],
            row["at"],
        )
        found[(record.app, record.table, record.key, record.rule)] = record
    return found


def write_set_aside(conn: Connection, record: SetAside, *, message: str, at: datetime) -> None:
    """Record a refused row (or renew its record after another refusal)."""
    values = {
        "app": record.app,
        "table_name": record.table,
        "row_key": record.key,
        "rule": record.rule,
        "code": record.code,
        "message": message,
        "moment": record.moment,
        "at": at,
        "until": record.until,
    }
    statement = insert(set_aside).values(values)
    conn.execute(
        statement.on_conflict_do_update(
            index_elements=["app", "table_name", "row_key", "rule"],
            set_={k: statement.excluded[k] for k in ("code", "message", "moment", "at", "until")},
        )
    )


def drop_set_aside(conn: Connection, app: str, table: str, key: str, rule: int) -> None:
    """Forget a row's record: it moved."""
    conn.execute(
        sa.delete(set_aside).where(
            set_aside.c.app == app,
            set_aside.c.table_name == table,
            set_aside.c.row_key == key,
            set_aside.c.rule == rule,
        )
    )


def drop_left_from(
    conn: Connection, app: str, table: sa.Table, key: str, rule: int, state: str, from_: str
) -> int:
    """Forget the records of a rule's rows that have left `from`: they are never tried again."""
    still = sa.select(sa.literal(1)).where(
        sa.cast(table.c[key], sa.Text) == set_aside.c.row_key, table.c[state] == from_
    )
    gone = conn.execute(
        sa.delete(set_aside).where(
            set_aside.c.app == app,
            set_aside.c.table_name == table.name,
            set_aside.c.rule == rule,
            ~sa.exists(still),
        )
    )
    return gone.rowcount or 0


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
