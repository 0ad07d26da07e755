"""Adminium's own tables in a connection's database, in the schema `adminium`, each defined
once and below every module that reads or writes it: the audit, the sweep's fence and records,
the ledger entries and postings, the outbox and the webhook deliveries, the sample marks, the
set-aside records, the refused attempts kept and the record of what Adminium made, with the
upgrades a database made before a column joined them needs (a table added since is made by
the install's `create_all`). Importing this module defines them all on `adminium_metadata`,
which the install makes."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

ADMINIUM_SCHEMA = "adminium"

adminium_metadata = sa.MetaData(schema=ADMINIUM_SCHEMA)
"""Adminium's bookkeeping tables: the audit, set-aside records, sweep records, sample marks."""


class Upgrade(NamedTuple):
    """What a database made before `name` (a column of `table`, or an index on it) joined
    Adminium's tables needs: one statement, run only where `name` is not there (an ALTER
    TABLE, even one that adds nothing, takes the table's strongest lock)."""

    table: str
    name: str
    statement: str


def added_column(table: str, column: str, definition: str) -> Upgrade:
    """The upgrade that adds `column` (`definition` its type and defaults) to `table`."""
    return Upgrade(
        table,
        column,
        f"ALTER TABLE {ADMINIUM_SCHEMA}.{table} ADD COLUMN IF NOT EXISTS {column} {definition}",
    )


audit = sa.Table(
    "audit",
    adminium_metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("actor", sa.Text, nullable=False),
    sa.Column("actor_kind", sa.Text, nullable=False),
    sa.Column("app", sa.Text, nullable=False),
    sa.Column("table_name", sa.Text, nullable=False),
    sa.Column("row_key", sa.Text, nullable=False),
    sa.Column("move_from", sa.Text),
    sa.Column("move_to", sa.Text),
    sa.Column("before", JSONB),
    sa.Column("after", JSONB),
    # The move that set this one off, for a row an effect moved: {table, key, from, to}.
    sa.Column("cause", JSONB),
    sa.Index("ix_audit_row", "app", "table_name", "row_key"),
)

AUDIT_UPGRADES = (added_column("audit", "cause", "JSONB"),)
"""What a database made before a column joined the audit needs, each statement idempotent."""


fences = sa.Table(
    "fences",
    adminium_metadata,
    sa.Column("connection", sa.Text, primary_key=True),
    sa.Column("holder", sa.Text, nullable=False),
    sa.Column("token", sa.Text, nullable=False),
    sa.Column("since", sa.DateTime(timezone=True), nullable=False),
    sa.Column("renewed", sa.DateTime(timezone=True), nullable=False),
    sa.Column("until", sa.DateTime(timezone=True), nullable=False),
    sa.Column("ends", sa.DateTime(timezone=True), nullable=False),
    prefixes=["UNLOGGED"],
)
"""One lease per connection: who holds its fence, since when, until when (`ends`: its
sweep's deadline, past which it is never renewed)."""


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


class MailStatus(StrEnum):
    """Where an email is: waiting to go (a retry included), sent, given up on, or dropped
    unsent (a reminder whose row no longer takes it: `core.outbox.reminders.why_dropped`)."""

    queued = "queued"
    sent = "sent"
    failed = "failed"
    dropped = "dropped"


def sending_columns() -> list[sa.Column[Any]]:
    """The columns a table of things to send keeps (`services.sending` drains it): when it
    was queued and may go, its state, its tries, when it went, the last answer (or why it
    failed), and who dropped it."""
    return [
        sa.Column("queued_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("send_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.Text, nullable=False, server_default=MailStatus.queued.value),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("sent_at", sa.DateTime(timezone=True)),
        sa.Column("answer", sa.Text),
        # Who dropped it from a screen, and when (empty for a reminder its row no longer takes).
        sa.Column("dropped_by", sa.Text),
        sa.Column("dropped_at", sa.DateTime(timezone=True)),
    ]


SENDING_UPGRADES = tuple(
    added_column(table, column, definition)
    for table in ("outbox", "deliveries")
    for column, definition in (("dropped_by", "text"), ("dropped_at", "timestamptz"))
)
"""What a database made before a person could drop an email or a delivery needs (idempotent)."""


outbox = sa.Table(
    "outbox",
    adminium_metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column("app", sa.Text, nullable=False),
    sa.Column("table_name", sa.Text, nullable=False),
    sa.Column("row_key", sa.Text, nullable=False),
    sa.Column("producer", sa.Integer, nullable=False),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("moment", sa.DateTime(timezone=True)),
    sa.Column("address", sa.Text, nullable=False),
    sa.Column("subject", sa.Text, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    *sending_columns(),
    # A reminder once per row, producer and moment, by racing sweeps too.
    sa.Index(
        "ux_outbox_reminder",
        "app",
        "table_name",
        "row_key",
        "producer",
        "moment",
        unique=True,
        postgresql_where=sa.text("kind = 'reminder'"),
    ),
    # What the delivery job claims: queued emails by the time they may go.
    sa.Index("ix_outbox_due", "send_at", postgresql_where=sa.text("status = 'queued'")),
    sa.Index("ix_outbox_app", "app", "id"),
    sa.Index("ix_outbox_row", "app", "table_name", "row_key"),
)
"""One email: its producer (numbered from 1 in `outbox.producers`), row, words and fate."""


deliveries = sa.Table(
    "deliveries",
    adminium_metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column("app", sa.Text, nullable=False),
    sa.Column("automation", sa.Text, nullable=False),
    sa.Column("webhook", sa.Text, nullable=False),
    sa.Column("table_name", sa.Text, nullable=False),
    sa.Column("row_key", sa.Text, nullable=False),
    sa.Column("event", JSONB, nullable=False),
    sa.Column("sample", sa.Boolean, nullable=False, server_default=sa.false()),
    *sending_columns(),
    # What the delivery job claims: queued deliveries by the time they may go.
    sa.Index("ix_deliveries_due", "send_at", postgresql_where=sa.text("status = 'queued'")),
    sa.Index("ix_deliveries_app", "app", "id"),
)
"""One event for one automation's webhook, and its fate (the last answer in `answer`)."""

delivery_attempts = sa.Table(
    "delivery_attempts",
    adminium_metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column(
        "delivery_id",
        sa.BigInteger,
        sa.ForeignKey(deliveries.c.id, ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("status", sa.Integer),
    sa.Column("ok", sa.Boolean, nullable=False),
    sa.Column("answer", sa.Text, nullable=False),
    sa.Column("ms", sa.Integer, nullable=False),
    sa.Index("ix_delivery_attempts_delivery", "delivery_id", "id"),
)
"""One try of a delivery: the HTTP status (none when no answer came), when, how long, and
the answer's first bytes (or why there was none)."""


sample_marks = sa.Table(
    "sample_rows",
    adminium_metadata,
    sa.Column("app", sa.Text, primary_key=True),
    sa.Column("table_name", sa.Text, primary_key=True),
    sa.Column("row_key", sa.Text, primary_key=True),
    sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
)
"""One mark per sample row; a mark stays whatever moves the row, the clock included."""


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
    # The refusal's details as JSON: `effect: {table, key}` names a linked row that refused.
    sa.Column("details", JSONB),
)
"""A refused timed move: its row, rule (from 1), code, the moment it was judged at, until,
and the refusal's details."""

refused_attempts = sa.Table(
    "refused_attempts",
    adminium_metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column("app", sa.Text, nullable=False),
    sa.Column("table_name", sa.Text, nullable=False),
    sa.Column("row_key", sa.Text, nullable=False),
    sa.Column("rule", sa.Integer, nullable=False),
    sa.Column("code", sa.Text, nullable=False),
    sa.Column("message", sa.Text, nullable=False),
    sa.Column("details", JSONB),
    sa.Column("moment", sa.DateTime(timezone=True), nullable=False),
    # The sweep's minute (or the moment of a "Try again now"), and the end of its hour aside.
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("until", sa.DateTime(timezone=True), nullable=False),
    sa.Index("ix_refused_attempts_row", "app", "table_name", "row_key", "id"),
    sa.Index("ix_refused_attempts_at", "at"),
)
"""Every refused attempt of the clock that set a row aside, kept after the row moves on
(its set-aside record is renewed in place, and goes once the row moves): what a row's
history and the clock's log say it refused, when and why. Rule negative: a give-back."""

SET_ASIDE_UPGRADES = (added_column("set_aside", "details", "JSONB"),)
"""What a database made before the set-aside record kept details needs (idempotent)."""


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
    # The apps that faulted this minute, by name: {error, during, left} each (the others
    # were swept); NULL when none did.
    sa.Column("faults", JSONB),
    sa.Index("ix_sweeps_connection_at", "connection", "at"),
    sa.Index("ix_sweeps_running", "connection", postgresql_where=sa.text("outcome = 'running'")),
)
"""One row per minute's sweep of a connection: what it moved, set aside, left, and how long."""

made = sa.Table(
    "made",
    adminium_metadata,
    sa.Column("schema_name", sa.Text, primary_key=True),
    sa.Column("table_name", sa.Text, primary_key=True),
    # What Adminium made: the table itself (its name ""), or a column, constraint or index
    # of a table (its name).
    sa.Column("kind", sa.Text, primary_key=True),
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("app", sa.Text, nullable=False),
    sa.Column("made_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
)
"""What Adminium made in the connection's database (`core.store.made`): the tables it made
for an app (`app add --create-tables`, a migration), their columns, CHECKs and indexes.
Only those may be migrated; a table not here is the venue's, never altered unasked."""

RUNNING = "running"
"""The outcome of a sweep's record from its start until it ends."""

SWEEP_UPGRADES = (
    *(
        added_column("sweeps", column, "integer NOT NULL DEFAULT 0")
        for column in ("given_back", "holds_set_aside", "holds_busy")
    ),
    added_column("sweeps", "audit_from", "bigint"),
    added_column("sweeps", "faults", "jsonb"),
    Upgrade(
        "sweeps",
        "ix_sweeps_running",
        f"CREATE INDEX IF NOT EXISTS ix_sweeps_running ON {ADMINIUM_SCHEMA}.sweeps (connection)"
        f" WHERE outcome = '{RUNNING}'",
    ),
)
"""What a database made before the give-back counts, the open record and the apps' faults
joined the record needs, each idempotent."""
