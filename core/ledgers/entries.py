"""Adminium's ledger bookkeeping in a connection's database (schema `adminium`).

`ledger_entries`: every balance change of an account (account, amount, row, posting,
kind take / give-back, actor, time), written in the same transaction as the change, so
an account's history can be read and checked. `postings`: one record per row and posting
that took its amount: `held` until heldUntil, then `taken` for good or `given-back`. The
tables join `core.store.schema.adminium_metadata`, so `install_app` makes them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import Connection

from core.basics.errors import WriteConflict
from core.store.schema import ledger_entries, postings


class EntryKind(StrEnum):
    """What a ledger entry did to its account."""

    take = "take"
    give_back = "give-back"


class PostingStatus(StrEnum):
    """Where a row's posting stands."""

    held = "held"
    taken = "taken"
    given_back = "given-back"


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


def posting_of(row: Any) -> PostingRecord:
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


def read_postings(
    conn: Connection, app: str, table: str, key: str, *, lock: bool = False
) -> dict[int, PostingRecord]:
    """A row's posting records, by posting number; with `lock`, held FOR UPDATE NOWAIT
    until the transaction ends (their standing read under the lock is the one a writer
    may change)."""
    query = sa.select(postings).where(
        postings.c.app == app, postings.c.table_name == table, postings.c.row_key == key
    )
    if lock:
        query = query.with_for_update(nowait=True)
    return {found.posting: found for found in map(posting_of, conn.execute(query).mappings())}


def read_held(
    conn: Connection, table: sa.Table, key_column: str, key: Any, app: str, posting: int
) -> tuple[dict[str, Any], PostingRecord] | None:
    """A row and one of its posting records, both locked FOR UPDATE NOWAIT, in one
    statement; None when either is missing (the caller reads them apart then). The record
    is locked too, not only the row: a record another writer changed and committed after
    this statement's snapshot is then read as it stands now (PostgreSQL re-reads a locked
    row's newest version), never as the snapshot had it."""
    statement = _held_statement(table, key_column)
    found = conn.execute(
        statement, {"k_key": key, "p_app": app, "p_key": str(key), "p_posting": posting}
    ).first()
    if found is None:
        return None
    width = len(postings.c)
    record = posting_of(dict(zip(postings.c.keys(), found[:width], strict=True)))
    return dict(zip(table.c.keys(), found[width:], strict=True)), record


@functools.lru_cache(maxsize=128)
def _held_statement(table: sa.Table, key_column: str) -> sa.Select[Any]:
    """The row-and-posting statement for one table, with bound parameters."""
    key = sa.bindparam("k_key", type_=table.c[key_column].type)
    return (
        sa.select(*postings.c, *table.c)
        .join_from(postings, table, table.c[key_column] == key)
        .where(
            postings.c.app == sa.bindparam("p_app", type_=sa.Text),
            postings.c.table_name == table.name,
            postings.c.row_key == sa.bindparam("p_key", type_=sa.Text),
            postings.c.posting == sa.bindparam("p_posting", type_=sa.Integer),
        )
        .with_for_update(nowait=True, of=(table, postings))
    )


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
    return [posting_of(row) for row in conn.execute(query).mappings()]


def write_posting(
    conn: Connection, app: str, record: PostingRecord, at: datetime, *, was: PostingStatus | None
) -> None:
    """Record a posting's take, or where it stands now, on the condition that it still
    stands as the writer read it: `was` its status then (None: no record, or a settled
    one of a row gone before, never a live hold). A record changed since by another writer
    is WRITE_CONFLICT (the whole write rolls back), so no two writers ever settle one
    posting twice, whatever locks they took."""
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
    standing = (
        postings.c.status != PostingStatus.held.value
        if was is None
        else postings.c.status == was.value
    )
    written = conn.execute(
        statement.on_conflict_do_update(
            index_elements=["app", "table_name", "row_key", "posting"],
            set_={name: statement.excluded[name] for name in kept},
            where=standing,
        ).returning(postings.c.posting)
    )
    if written.first() is None:
        raise WriteConflict(
            "another writer changed this row's posting meanwhile; try again",
            {"table": record.table, "key": record.key, "posting": record.posting},
        )


ENTRY_COLUMNS = (
    "app",
    "ledger",
    "account",
    "amount",
    "balance",
    "table_name",
    "row_key",
    "posting",
    "kind",
    "actor",
    "at",
)
"""What a ledger entry says: every column but its id."""


@dataclass(frozen=True)
class Bounds:
    """The balance an account must keep: `low`..`high` (None: not bounded that side);
    `shut` when a bound's setting has no value, which leaves no room."""

    low: Decimal | None = None
    high: Decimal | None = None
    shut: bool = False


def change_balance(
    conn: Connection,
    accounts: sa.Table,
    key_column: str,
    balance_column: str,
    account_key: Any,
    bounds: Bounds,
    entry: Mapping[str, Any],
    standing: PostingRecord | None = None,
    was: PostingStatus = PostingStatus.held,
) -> tuple[Decimal, Decimal | None] | None:
    """One statement: lock the account FOR NO KEY UPDATE NOWAIT, and if its balance plus
    the entry's amount stays within `bounds`, change it, write the entry and (given
    `standing`) where the posting stands now, on the condition that it still stands at
    `was`. The balance before and after (None: out of bounds, nothing written); None when
    there is no such account. A posting no longer at `was` is WRITE_CONFLICT, raised so
    the caller's transaction rolls back the balance changed with it. The balance changes,
    never the key, so a row whose foreign key points at the account (its check takes KEY
    SHARE) is not kept waiting by the lock."""
    statement = _balance_statement(accounts, key_column, balance_column, standing is not None)
    params = {f"e_{name}": entry[name] for name in ENTRY_COLUMNS if name != "balance"}
    params.update(k_account=account_key, b_low=bounds.low, b_high=bounds.high)
    params["b_shut"] = bounds.shut
    if standing is not None:
        params.update(
            p_app=entry["app"],
            p_table=standing.table,
            p_key=standing.key,
            p_posting=standing.posting,
            p_status=standing.status.value,
            p_held_until=standing.held_until,
            p_at=entry["at"],
            p_was=was.value,
        )
    found = conn.execute(statement, params).first()
    if found is None:
        return None
    if standing is not None and found[1] is not None and found[2] != 1:
        raise WriteConflict(
            "another writer settled this posting meanwhile; try again",
            {"table": standing.table, "key": standing.key, "posting": standing.posting},
        )
    return Decimal(found[0]), None if found[1] is None else Decimal(found[1])


@functools.lru_cache(maxsize=128)
def _balance_statement(
    accounts: sa.Table, key_column: str, balance_column: str, standing: bool
) -> sa.Select[Any]:
    """The lock-change-and-enter statement for one accounts table, with bound parameters."""
    locked = _locked(accounts, key_column, balance_column)
    changed = _changed(accounts, key_column, balance_column, locked)
    statement = (
        sa.select(locked.c.balance, changed.c.balance)
        .select_from(locked.outerjoin(changed, sa.true()))
        .add_cte(_entered(changed))
    )
    if not standing:
        return statement
    counted = sa.select(sa.func.count()).select_from(_posted(changed)).scalar_subquery()
    return statement.add_columns(counted.label("posted"))


def _locked(accounts: sa.Table, key_column: str, balance_column: str) -> sa.CTE:
    """The account locked FOR NO KEY UPDATE NOWAIT, and its balance (0 when none)."""
    key = sa.bindparam("k_account", type_=accounts.c[key_column].type)
    return (
        sa.select(
            accounts.c[key_column].label("key"),
            sa.func.coalesce(accounts.c[balance_column], 0).label("balance"),
        )
        .where(accounts.c[key_column] == key)
        .with_for_update(nowait=True, key_share=True)
        .cte("locked")
    )


def _changed(accounts: sa.Table, key_column: str, balance_column: str, locked: sa.CTE) -> sa.CTE:
    """The balance changed by the entry's amount, only while it stays within the bounds."""
    amount = sa.bindparam("e_amount", type_=sa.Numeric)
    after = locked.c.balance + amount
    # Cast, so a bound the ledger does not set (None) still has a type for PostgreSQL.
    low = sa.cast(sa.bindparam("b_low", type_=sa.Numeric), sa.Numeric)
    high = sa.cast(sa.bindparam("b_high", type_=sa.Numeric), sa.Numeric)
    return (
        sa.update(accounts)
        .where(
            accounts.c[key_column] == locked.c.key,
            sa.not_(sa.bindparam("b_shut", type_=sa.Boolean)),
            sa.or_(low.is_(None), after >= low),
            sa.or_(high.is_(None), after <= high),
        )
        .values({balance_column: after})
        .returning(accounts.c[balance_column].label("balance"))
        .cte("changed")
    )


def _entered(changed: sa.CTE) -> sa.CTE:
    """The ledger entry of a changed balance (none when the balance did not change)."""
    entry = sa.select(
        *(
            (
                changed.c.balance
                if name == "balance"
                else sa.bindparam(f"e_{name}", type_=ledger_entries.c[name].type)
            ).label(name)
            for name in ENTRY_COLUMNS
        )
    ).select_from(changed)
    return sa.insert(ledger_entries).from_select(list(ENTRY_COLUMNS), entry).cte("entered")


def _posted(changed: sa.CTE) -> sa.CTE:
    """Where the posting stands now, written only with the balance changed and only while it
    still stands at `p_was`."""

    def bound(name: str, column: str) -> Any:
        return sa.bindparam(name, type_=postings.c[column].type)

    return (
        sa.update(postings)
        .where(
            postings.c.app == bound("p_app", "app"),
            postings.c.table_name == bound("p_table", "table_name"),
            postings.c.row_key == bound("p_key", "row_key"),
            postings.c.posting == bound("p_posting", "posting"),
            postings.c.status == bound("p_was", "status"),
            sa.exists(sa.select(changed.c.balance)),
        )
        .values(
            status=bound("p_status", "status"),
            held_until=bound("p_held_until", "held_until"),
            at=bound("p_at", "at"),
        )
        .returning(postings.c.posting)
        .cte("posted")
    )


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
