"""An account's statement: its ledger entries, and whether its balance adds up.

The opening balance is what the account held before its first entry: that entry's
balance after, less its amount (an account with no entries opens at its balance now).
The balance adds up when it equals the opening balance plus every entry's amount; where
it does not, the entries say between which two the balance changed outside a posting
(a card topped up by hand, say).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from core.basics.errors import RowNotFound
from core.ledgers.entries import account_entries
from core.manifest.ledger_model import Ledger
from core.store.store import Store


@dataclass(frozen=True)
class Entry:
    """One balance change of an account, as `adminium.ledger_entries` keeps it."""

    id: int
    at: datetime
    amount: Decimal
    balance: Decimal
    table: str
    key: str
    posting: int
    kind: str
    actor: str

    @property
    def before(self) -> Decimal:
        """The balance this entry found."""
        return self.balance - self.amount


@dataclass(frozen=True)
class Gap:
    """A change of the balance no entry made: after entry `after` (None: before any), up to
    entry `until` (None: the balance now), by `amount`."""

    after: int | None
    until: int | None
    amount: Decimal


@dataclass(frozen=True)
class AccountStatement:
    """An account's entries, oldest first, its balance now and its opening balance."""

    ledger: str
    key: str
    balance: Decimal
    opening: Decimal
    entries: tuple[Entry, ...]

    @property
    def entered(self) -> Decimal:
        """The sum of the entries' amounts."""
        return sum((entry.amount for entry in self.entries), Decimal(0))

    @property
    def adds_up(self) -> bool:
        """Whether the balance equals the opening balance plus the entries."""
        return self.balance == self.opening + self.entered

    def gaps(self) -> list[Gap]:
        """Where the balance changed outside a posting: between two entries, or since the
        last one."""
        found: list[Gap] = []
        previous: Entry | None = None
        for entry in self.entries:
            if previous is not None and entry.before != previous.balance:
                found.append(Gap(previous.id, entry.id, entry.before - previous.balance))
            previous = entry
        last = previous.balance if previous is not None else self.opening
        if self.balance != last:
            found.append(Gap(previous.id if previous else None, None, self.balance - last))
        return found


def entry_of(row: dict[str, Any]) -> Entry:
    return Entry(
        row["id"],
        row["at"],
        Decimal(row["amount"]),
        Decimal(row["balance"]),
        row["table_name"],
        row["row_key"],
        row["posting"],
        row["kind"],
        row["actor"],
    )


def read_statement(store: Store, ledger: Ledger, key: str) -> AccountStatement:
    """An account's statement, read in one snapshot; NOT_FOUND when there is no account."""
    account_key = store.coerce_key(ledger.table, key)
    with store.engine.connect() as conn:
        conn.exec_driver_sql("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        account = (
            store.read_row(conn, ledger.table, account_key) if account_key is not None else None
        )
        if account is None:
            raise RowNotFound(
                f"no account {key!r} in {ledger.table}", {"ledger": ledger.name, "key": key}
            )
        rows = account_entries(
            conn, store.app.name, ledger.name, str(account[store.spec(ledger.table).key])
        )
    balance = Decimal(str(account.get(ledger.balance) or 0))
    entries = tuple(map(entry_of, rows))
    opening = entries[0].before if entries else balance
    return AccountStatement(ledger.name, key, balance, opening, entries)
