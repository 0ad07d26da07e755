"""A write's postings (WHAT-A-MOVE-SETS-OFF.md "Holds, ledgers and give-backs"), at step
5 of the write pipeline, in the write's transaction.

A posting takes the row's `amount` from the account its `via` points at when the row is
made (`"on": "create"`) or moves into given values (`core.ledgers.accounts` changes the
balance). While the row is in a held state its posting is a hold until heldUntil: a move
into `givesBack` gives it back at once (the amount back to the account, the row's amount
column to 0); a move to any other state outside the held ones takes it for good. Sample
rows never post.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy.engine import Connection

from core.basics.actors import Actor, ActorKind
from core.basics.errors import ValueRefused
from core.basics.events import RowEvent
from core.ledgers.accounts import BalanceChange, change_account, ledger_tables, with_status
from core.ledgers.entries import (
    EntryKind,
    PostingRecord,
    PostingStatus,
    read_postings,
    write_posting,
)
from core.ledgers.holds import held_until, is_held
from core.manifest.ledger_model import Ledger, Posting
from core.manifest.lookup import total_columns
from core.manifest.model import Table
from core.manifest.refs import ValueWatch
from core.rules.stamps import takes_value
from core.store.sample_marks import is_sample_row
from core.store.set_aside import drop_set_aside
from core.store.store import Row, Store


def give_back_rule(posting: int) -> int:
    """The set-aside record's rule number of a posting's give-back: minus the posting's
    number, so it never meets a timed rule's (numbered from 1)."""
    return -posting


@dataclass(frozen=True)
class PostingPlan:
    """What a write's postings need before the row is written: the row's posting records,
    and the columns the write sets (a hold's amount to 0 when a move gives it back)."""

    records: Mapping[int, PostingRecord] = field(default_factory=dict)
    changes: Mapping[str, Any] = field(default_factory=dict)
    skip: bool = True


def plan_postings(
    conn: Connection, store: Store, table: str, held: Row | None, after: Row, actor: Actor
) -> PostingPlan:
    """Step 5, before the row is written: the row's records, and what a give-back sets."""
    spec = store.spec(table)
    if not spec.postings or actor.kind is ActorKind.sample:
        return PostingPlan()
    if held is None:
        return PostingPlan(skip=False)
    key = str(held[spec.key])
    if is_sample_row(conn, store.app.name, table, key):
        return PostingPlan()
    records = read_postings(conn, store.app.name, table, key)
    changes = {
        posting.amount: 0
        for number, posting in enumerate(spec.postings, start=1)
        if _gives_back(spec, posting, records.get(number), after)
    }
    return PostingPlan(records, changes, skip=False)


def _gives_back(spec: Table, posting: Posting, record: PostingRecord | None, row: Row) -> bool:
    """Whether the write moves a held row into one of its posting's `givesBack` states."""
    if record is None or record.status is not PostingStatus.held or spec.states is None:
        return False
    return row.get(spec.states.column) in (posting.gives_back or ())


def _takes(posting: Posting, held: Row | None, row: Row) -> bool:
    """Whether the write makes the posting take: the row made (`on: create`), or moved into
    one of its values from outside them (a move between two of them takes nothing new)."""
    if posting.on == "create":
        return held is None
    assert isinstance(posting.on, ValueWatch)
    watch = posting.on
    from_outside = held is None or held.get(watch.column) not in watch.values
    return from_outside and takes_value(watch, held, row)


def make_postings(
    conn: Connection,
    store: Store,
    table: str,
    plan: PostingPlan,
    held: Row | None,
    row: Row,
    *,
    actor: Actor,
    now: datetime,
    numbers: Collection[int] | None = None,
) -> tuple[RowEvent, ...]:
    """Step 5, once the row is written: takes, give-backs and holds taken for good; the
    events of the accounts whose balance changed. `numbers`: only these postings (from 1;
    None: every one). A posting whose amount is a total (`total_postings`) is made by the
    write pipeline at the outermost write's end, from the row as committed."""
    spec = store.spec(table)
    if plan.skip or not spec.postings or (numbers is not None and not numbers):
        return ()
    key = str(row[spec.key])
    ledgers = {ledger.name: ledger for ledger in store.app.ledgers or ()}
    tables = ledger_tables(conn, store, spec, ledgers.values())
    until = held_until(spec.hold, row, store.zone, tables) if spec.hold else None
    changes, records = _posting_changes(
        spec, table, key, plan, held, row, ledgers, until=until, numbers=numbers
    )
    # Accounts are locked in a fixed order (table, then key): two writers never deadlock.
    events = [
        change_account(conn, store, change, tables, table=table, key=key, actor=actor.name, now=now)
        for change in sorted(changes, key=lambda c: (c.ledger.table, str(c.account)))
    ]
    for record, was in records:
        write_posting(conn, store.app.name, record, now, was=was)
        if record.status is not PostingStatus.held:
            drop_set_aside(conn, store.app.name, table, key, give_back_rule(record.posting))
    return tuple(events)


def _posting_changes(
    spec: Table,
    table: str,
    key: str,
    plan: PostingPlan,
    held: Row | None,
    row: Row,
    ledgers: Mapping[str, Ledger],
    *,
    until: datetime | None,
    numbers: Collection[int] | None,
) -> tuple[list[BalanceChange], list[tuple[PostingRecord, PostingStatus | None]]]:
    """What the write does to each posting: the balance changes (takes, give-backs), and
    each record to write with the status it was read at (under the row's lock): written
    only if it still stands so (core.ledgers.entries.write_posting)."""
    held_now = is_held(spec, row)
    changes: list[BalanceChange] = []
    records: list[tuple[PostingRecord, PostingStatus | None]] = []
    for number, posting in enumerate(spec.postings or (), start=1):
        if numbers is not None and number not in numbers:
            continue
        ledger = ledgers[posting.ledger]
        record = plan.records.get(number)
        if record is not None and record.status is PostingStatus.held:
            if _gives_back(spec, posting, record, row):
                changes.append(
                    BalanceChange(
                        number, ledger, record.account, record.amount, EntryKind.give_back
                    )
                )
                records.append((with_status(record, PostingStatus.given_back, None), record.status))
            elif not held_now:
                records.append((with_status(record, PostingStatus.taken, None), record.status))
            elif until != record.held_until:
                records.append((with_status(record, PostingStatus.held, until), record.status))
            continue
        if record is not None and record.status is PostingStatus.taken:
            continue  # it stands, and is never looked at again
        if not _takes(posting, held, row):
            continue
        amount, account = _amount(table, posting, row), row.get(posting.via)
        if not amount or account is None:
            continue
        changes.append(BalanceChange(number, ledger, account, amount, EntryKind.take))
        status = PostingStatus.held if held_now else PostingStatus.taken
        stored = str(account)
        made = PostingRecord(table, key, number, ledger.name, stored, amount, status, until)
        records.append((made, None if record is None else record.status))
    return changes, records


def total_postings(spec: Table) -> frozenset[int]:
    """The table's postings (numbered from 1) whose amount is a total column: a write's
    totals are recomputed at its end, so these take the total as committed then."""
    totals = set(total_columns(spec))
    return frozenset(
        number
        for number, posting in enumerate(spec.postings or (), start=1)
        if posting.amount in totals
    )


def _amount(table: str, posting: Posting, row: Row) -> Decimal | None:
    """The row's amount for a posting; a negative amount is no payment."""
    value = row.get(posting.amount)
    if value is None:
        return None
    amount = Decimal(str(value))
    if amount < 0:
        raise ValueRefused(
            f"{table}.{posting.amount} is below zero: a posting takes 0 or more",
            {"table": table, "column": posting.amount, "reason": "check"},
        )
    return amount
