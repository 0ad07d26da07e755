"""A ledger's accounts (WHAT-A-MOVE-SETS-OFF.md "Holds, ledgers and give-backs"): one
balance change locked, kept within the ledger's `min`..`max` and entered in one
statement, for a posting's take and for a hold's give-back alike. The account locked FOR
NO KEY UPDATE NOWAIT (held elsewhere: LEDGER_BUSY), its balance kept within the bounds
(else LEDGER_CAP), one entry in `adminium.ledger_entries`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.basics.errors import LedgerBusy, LedgerCap, RowNotFound
from core.basics.events import RowEvent
from core.ledgers.entries import Bounds, EntryKind, PostingRecord, PostingStatus, change_balance
from core.manifest.ledger_model import Ledger
from core.manifest.model import Table
from core.manifest.refs import SettingRef
from core.store.store import Store
from core.time.moments import Tables, read_setting


@dataclass(frozen=True)
class BalanceChange:
    """One balance change a write makes: which posting, which account, by how much."""

    number: int
    ledger: Ledger
    account: Any
    amount: Decimal
    kind: EntryKind


def with_status(
    record: PostingRecord, status: PostingStatus, until: datetime | None
) -> PostingRecord:
    """The record as it stands with another status and heldUntil."""
    return PostingRecord(
        record.table,
        record.key,
        record.posting,
        record.ledger,
        record.account,
        record.amount,
        status,
        until,
    )


def ledger_tables(conn: Connection, store: Store, spec: Table, ledgers: Any) -> Tables:
    """The settings a hold's moment and the ledgers' bounds read."""
    reads = store.reads([spec.hold, *ledgers])
    return store.read_clock_tables(conn, reads.tables) if reads.tables else {}


def change_account(
    conn: Connection,
    store: Store,
    change: BalanceChange,
    tables: Tables,
    *,
    table: str,
    key: str,
    actor: str,
    now: datetime,
    standing: PostingRecord | None = None,
) -> RowEvent:
    """Lock the account, keep its balance within the ledger's bounds, change it and enter
    it (with where the posting stands now, given `standing`), in one statement; the
    account row's event."""
    ledger = change.ledger
    where = {"ledger": ledger.name, "key": change.account}
    signed = -change.amount if change.kind is EntryKind.take else change.amount
    bounds = ledger_bounds(ledger, tables)
    entry = {
        "app": store.app.name,
        "ledger": ledger.name,
        "account": str(change.account),
        "amount": signed,
        "table_name": table,
        "row_key": key,
        "posting": change.number,
        "kind": change.kind.value,
        "actor": actor,
        "at": now,
    }
    account_key = store.coerce_key(ledger.table, change.account)
    try:
        found = change_balance(
            conn,
            store.table(ledger.table),
            store.spec(ledger.table).key,
            ledger.balance,
            account_key,
            bounds,
            entry,
            standing,
        )
    except sa.exc.OperationalError as error:
        if getattr(error.orig, "sqlstate", None) != "55P03":
            raise
        raise LedgerBusy(
            f"another writer holds account {change.account} of {ledger.name}; try again", where
        ) from error
    if found is None:
        raise RowNotFound(f"no account {change.account!r} in {ledger.table}", where)
    balance, after = found
    if after is None:
        raise LedgerCap(
            f"{ledger.name} account {change.account} would hold {balance + signed},"
            f" outside {_range(bounds)}",
            {**where, "balance": str(balance), "amount": str(change.amount)},
        )
    return _account_event(conn, store, ledger, account_key, actor)


def _account_event(
    conn: Connection, store: Store, ledger: Ledger, key: Any, actor: str
) -> RowEvent:
    """The live event of an account whose balance changed (its state read when its table
    keeps states, which accounts seldom do)."""
    states = store.spec(ledger.table).states
    state = None
    if states is not None:
        account = store.read_row(conn, ledger.table, key)
        state = account.get(states.column) if account is not None else None
    return RowEvent(store.connection, store.app.name, ledger.table, key, state, actor)


def ledger_bounds(ledger: Ledger, tables: Tables) -> Bounds:
    """The balance a ledger's accounts keep, its settings read from `tables`."""
    low, high = _bound(ledger.min, tables), _bound(ledger.max, tables)
    return Bounds(
        None if low is _NONE else low, None if high is _NONE else high, None in (low, high)
    )


_NONE: Any = object()
"""A bound the ledger does not set (no `min`, or no `max`)."""


def _bound(bound: Any, tables: Tables) -> Any:
    """A bound as a Decimal; `_NONE` when not set; None when its setting has no value
    (which leaves no room)."""
    if bound is None:
        return _NONE
    value = read_setting(bound, tables) if isinstance(bound, SettingRef) else bound
    if value is None or isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return None
    return Decimal(str(value))


def _range(bounds: Bounds) -> str:
    """A ledger's bounds in words: `0..100`, `0..`, or why there is no room."""
    if bounds.shut:
        return "its bounds (a bound's setting has no value, which leaves no room)"
    low, high = ("" if b is None else str(b) for b in (bounds.low, bounds.high))
    return f"{low}..{high}"
