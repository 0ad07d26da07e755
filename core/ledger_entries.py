"""Adminium's ledger bookkeeping in a connection's database (schema `adminium`).

`ledger_entries`: every balance change of an account (account, amount, row, posting,
kind take / give-back, actor, time), written in the same transaction as the change, so
an account's history can be read and checked. `postings`: one record per row and posting
that took its amount: `held` until heldUntil, then `taken` for good or `given-back`. The
tables join `core.audit.adminium_metadata`, so `install_app` makes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import Connection

from core.audit import adminium_metadata


class EntryKind(StrEnum):
    """What a ledger entry did to its account."""

    take = "take"
    give_back = "give-back"


class PostingStatus(StrEnum):
    """Where a row's posting stands."""

    held = "held"
    taken = "taken"
    given_back = "given-back"


ledger_entries = sa.Table(
    "ledger_entries",
    adminium_metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column("app", sa.Text, nullable=False),
    sa.Column("ledger", sa.Text, nullable=False),
    sa.Column("account", sa.Text, nullable=False),
    sa.Column("amount", sa.Numeric, nullable=False),
    sa.Column("balance", sa.Numeric, nullable=False),
    sa.Column("table_name", sa.Text, nullable=False),
    sa.Column("row_key", sa.Text, nullable=False),
    sa.Column("posting", sa.Integer, nullable=False),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("actor", sa.Text, nullable=False),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    sa.Index("ix_ledger_entries_account", "app", "ledger", "account", "id"),
)
"""One balance change: `amount` signed (a take is negative), `balance` the account's after."""

postings = sa.Table(
    "postings",
    adminium_metadata,
    sa.Column("app", sa.Text, primary_key=True),
    sa.Column("table_name", sa.Text, primary_key=True),
    sa.Column("row_key", sa.Text, primary_key=True),
    sa.Column("posting", sa.Integer, primary_key=True),
    sa.Column("ledger", sa.Text, nullable=False),
    sa.Column("account", sa.Text, nullable=False),
    sa.Column("amount", sa.Numeric, nullable=False),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("held_until", sa.DateTime(timezone=True)),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    # The sweep's holds to give back: bounded by `now`, served by this partial index.
    sa.Index(
        "ix_postings_held_until",
        "app",
        "held_until",
        postgresql_where=sa.text("status = 'held'"),
    ),
)
"""A row's posting (numbered from 1 as its table lists them): its account, amount, status."""


@dataclass(frozen=True)
class PostingRecord:
    """A posting a row made: where it took its amount from, how much, and where it stands."""

    table: str
    key: str
    posting: int
    ledger: str
    account: str
    amount: Decimal
    status: PostingStatus
    held_until: datetime | None


def _record(row: Any) -> PostingRecord:
    return PostingRecord(
        row["table_name"],
        row["row_key"],
        row["posting"],
        row["ledger"],
        row["account"],
        row["amount"],
        PostingStatus(row["status"]),
        row["held_until"],
    )


def read_postings(conn: Connection, app: str, table: str, key: str) -> dict[int, PostingRecord]:
    """A row's posting records, by posting number."""
    query = sa.select(postings).where(
        postings.c.app == app, postings.c.table_name == table, postings.c.row_key == key
    )
    return {found.posting: found for found in map(_record, conn.execute(query).mappings())}


def due_holds(conn: Connection, app: str, now: datetime, limit: int) -> list[PostingRecord]:
    """Holds whose stored heldUntil has passed at `now`, longest-due first, at most `limit`."""
    query = (
        sa.select(postings)
        .where(
            postings.c.app == app,
            postings.c.status == PostingStatus.held.value,
            postings.c.held_until <= now,
        )
        .order_by(postings.c.held_until, postings.c.table_name, postings.c.row_key)
        .limit(limit)
    )
    return [_record(row) for row in conn.execute(query).mappings()]


def write_posting(conn: Connection, app: str, record: PostingRecord, at: datetime) -> None:
    """Record a posting's take, or where it stands now."""
    values = {
        "app": app,
        "table_name": record.table,
        "row_key": record.key,
        "posting": record.posting,
        "ledger": record.ledger,
        "account": record.account,
        "amount": record.amount,
        "status": record.status.value,
        "held_until": record.held_until,
        "at": at,
    }
    statement = insert(postings).values(values)
    kept = ("ledger", "account", "amount", "status", "held_until", "at")
    conn.execute(
        statement.on_conflict_do_update(
            index_elements=["app", "table_name", "row_key", "posting"],
            set_={name: statement.excluded[name] for name in kept},
        )
    )


def write_entry(conn: Connection, **values: Any) -> None:
    """One balance change of an account."""
    conn.execute(sa.insert(ledger_entries).values(values))


def account_entries(conn: Connection, app: str, ledger: str, account: str) -> list[dict[str, Any]]:
    """An account's entries, oldest first."""
    query = (
        sa.select(ledger_entries)
        .where(
            ledger_entries.c.app == app,
            ledger_entries.c.ledger == ledger,
            ledger_entries.c.account == account,
        )
        .order_by(ledger_entries.c.id)
    )
    return [dict(row) for row in conn.execute(query).mappings()]
