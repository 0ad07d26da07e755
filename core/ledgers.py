"""Ledgers, postings and holds (WHAT-A-MOVE-SETS-OFF.md "Holds, ledgers and give-backs").

A posting takes the row's `amount` from the account its `via` points at when the row is
made (`"on": "create"`) or moves into given values, in the write's transaction: the
account locked FOR NO KEY UPDATE NOWAIT (held elsewhere: LEDGER_BUSY), its balance kept within
the ledger's `min`..`max` (else LEDGER_CAP), one entry in `adminium.ledger_entries`.
While the row is in a held state its posting is a hold until heldUntil: a move into
`givesBack` gives it back at once (the amount back to the account, the row's amount
column to 0); a move to any other state outside the held ones takes it for good. The
minute sweep gives back the holds nobody finished (`give_back_hold`). Sample rows never
post.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.actors import Actor, ActorKind
from core.audit import audit_entry, write_and_audit
from core.errors import (
    AdminiumError,
    LedgerBusy,
    LedgerCap,
    RowNotFound,
    ValueRefused,
    WriteConflict,
)
from core.events import RowEvent
from core.holds import held_until, is_held
from core.ledger_entries import (
    Bounds,
    EntryKind,
    PostingRecord,
    PostingStatus,
    change_balance,
    read_held,
    read_postings,
    write_posting,
)
from core.manifest.model import Ledger, Posting, SettingRef, Table, ValueWatch
from core.moments import Tables, read_setting
from core.sample_marks import is_sample_row
from core.set_aside import drop_set_aside, set_aside_row, sets_aside
from core.stamps import takes_value
from core.store import Row, Store
from core.totals import total_columns

log = logging.getLogger(__name__)


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


@dataclass(frozen=True)
class _Change:
    """One balance change a write makes: which posting, which account, by how much."""

    number: int
    ledger: Ledger
    account: Any
    amount: Decimal
    kind: EntryKind


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
    tables = _tables(conn, store, spec, ledgers.values())
    until = held_until(spec.hold, row, store.zone, tables) if spec.hold else None
    held_now = is_held(spec, row)
    changes: list[_Change] = []
    # Each record written with the status it was read at (under the row's lock): written
    # only if it still stands so (core.ledger_entries.write_posting).
    records: list[tuple[PostingRecord, PostingStatus | None]] = []
    for number, posting in enumerate(spec.postings, start=1):
        if numbers is not None and number not in numbers:
            continue
        ledger = ledgers[posting.ledger]
        record = plan.records.get(number)
        if record is not None and record.status is PostingStatus.held:
            if _gives_back(spec, posting, record, row):
                changes.append(_Change(number, ledger, record.account, record.amount, _BACK))
                records.append((_with(record, PostingStatus.given_back, None), record.status))
            elif not held_now:
                records.append((_with(record, PostingStatus.taken, None), record.status))
            elif until != record.held_until:
                records.append((_with(record, PostingStatus.held, until), record.status))
            continue
        if record is not None and record.status is PostingStatus.taken:
            continue  # it stands, and is never looked at again
        if not _takes(posting, held, row):
            continue
        amount, account = _amount(table, posting, row), row.get(posting.via)
        if not amount or account is None:
            continue
        changes.append(_Change(number, ledger, account, amount, EntryKind.take))
        status = PostingStatus.held if held_now else PostingStatus.taken
        stored = str(account)
        made = PostingRecord(table, key, number, ledger.name, stored, amount, status, until)
        records.append((made, None if record is None else record.status))
    # Accounts are locked in a fixed order (table, then key): two writers never deadlock.
    events = [
        _change_balance(
            conn, store, change, tables, table=table, key=key, actor=actor.name, now=now
        )
        for change in sorted(changes, key=lambda c: (c.ledger.table, str(c.account)))
    ]
    for record, was in records:
        write_posting(conn, store.app.name, record, now, was=was)
        if record.status is not PostingStatus.held:
            drop_set_aside(conn, store.app.name, table, key, give_back_rule(record.posting))
    return tuple(events)


_BACK = EntryKind.give_back


def total_postings(spec: Table) -> frozenset[int]:
    """The table's postings (numbered from 1) whose amount is a total column: a write's
    totals are recomputed at its end, so these take the total as committed then."""
    totals = set(total_columns(spec))
    return frozenset(
        number
        for number, posting in enumerate(spec.postings or (), start=1)
        if posting.amount in totals
    )


def _with(record: PostingRecord, status: PostingStatus, until: datetime | None) -> PostingRecord:
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


def _tables(conn: Connection, store: Store, spec: Table, ledgers: Any) -> Tables:
    """The settings a hold's moment and the ledgers' bounds read."""
    reads = store.reads([spec.hold, *ledgers])
    return store.read_clock_tables(conn, reads.tables) if reads.tables else {}


def _change_balance(
    conn: Connection,
    store: Store,
    change: _Change,
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


@dataclass(frozen=True)
class GiveBack:
    """A hold the clock gave back: the row (None when it is gone), and the events of the
    row and of the account the amount went back to."""

    record: PostingRecord
    row: Row | None
    events: tuple[RowEvent, ...]


def give_back_hold(
    store: Store,
    record: PostingRecord,
    *,
    now: datetime,
    conn: Connection | None = None,
    tables: Tables | None = None,
) -> GiveBack | None:
    """Give back one hold whose heldUntil has passed, in its own transaction, as the clock:
    whatever state the row is in and with no move, its moment read again on the row as
    held (with `tables`, the settings and hours the sweep read for its minute). None when
    there is nothing to give back now: a move took it or gave it back (it is let go of),
    or the row was re-dated (its new heldUntil is kept)."""
    spec = store.spec(record.table)
    try:
        with store.transaction(conn) as held:
            return _give_back(held, store, spec, record, now, tables)
    except sa.exc.OperationalError as error:
        if getattr(error.orig, "sqlstate", None) != "55P03":
            raise
        where = {"table": record.table, "key": record.key}
        raise WriteConflict("another writer holds this row; try again", where) from error


def _give_back(
    conn: Connection,
    store: Store,
    spec: Table,
    record: PostingRecord,
    now: datetime,
    tables: Tables | None,
) -> GiveBack | None:
    key = store.coerce_key(record.table, record.key)
    row: Row | None
    current: PostingRecord | None
    both = read_held(conn, store.table(record.table), spec.key, key, store.app.name, record.posting)
    if both is not None:
        row, current = both
    else:  # the row is gone, or its record: each read on its own, each locked
        row = store.read_row(conn, record.table, key, lock=True)
        found = read_postings(conn, store.app.name, record.table, record.key, lock=True)
        current = found.get(record.posting)
    if current is None or current.status is not PostingStatus.held:
        return None  # a move already took it or gave it back: let go of
    ledgers = {ledger.name: ledger for ledger in store.app.ledgers or ()}
    if tables is None:
        tables = _tables(conn, store, spec, ledgers.values())
    if row is not None and spec.hold is not None:
        until = held_until(spec.hold, row, store.zone, tables)
        if until is None or until > now:
            redated = _with(current, PostingStatus.held, until)
            write_posting(conn, store.app.name, redated, now, was=PostingStatus.held)
            return None
    assert spec.postings is not None
    posting = spec.postings[record.posting - 1]
    clock = Actor.clock()
    change = _Change(
        current.posting, ledgers[posting.ledger], current.account, current.amount, _BACK
    )
    account = _change_balance(
        conn,
        store,
        change,
        tables,
        table=record.table,
        key=record.key,
        actor=clock.name,
        now=now,
        standing=_with(current, PostingStatus.given_back, None),
    )
    if row is None:
        return GiveBack(current, None, (account,))
    entry = audit_entry(
        at=now,
        actor=clock.name,
        actor_kind=clock.kind.value,
        app=store.app.name,
        table=record.table,
        move_from=None,
        move_to=None,
    )
    statement, params = write_and_audit(
        store.table(record.table), spec.key, key, {posting.amount: 0}, entry
    )
    result = conn.execute(statement, params)
    written = dict(zip(result.keys(), result.one(), strict=True))
    state = written.get(spec.states.column) if spec.states is not None else None
    event = RowEvent(store.connection, store.app.name, record.table, key, state, clock.name)
    log.info(
        "hold given back: %s.%s key=%s posting=%s amount=%s to %s account %s",
        store.app.name,
        record.table,
        record.key,
        record.posting,
        current.amount,
        posting.ledger,
        current.account,
    )
    return GiveBack(current, written, (event, account))


def redate_hold(
    conn: Connection, store: Store, record: PostingRecord, until: datetime | None, now: datetime
) -> None:
    """Put right a held record whose row now reads a later heldUntil (`until`; None: its
    moment has no value, so the hold never ends) than the record kept: the row was
    re-dated by a writer that did not pass through Adminium. A record settled meanwhile
    is left as it is."""
    try:
        write_posting(
            conn, store.app.name, _with(record, PostingStatus.held, until), now, was=record.status
        )
    except WriteConflict:
        log.info(
            "hold record of %s.%s key=%s posting=%s settled meanwhile: left as it is",
            store.app.name,
            record.table,
            record.key,
            record.posting,
        )


@dataclass(frozen=True)
class GiveBackAttempt:
    """One give-back tried as the clock: given back (`given`), refused (`refused`: set
    aside for an hour unless another writer held it), or neither: a move took it or gave
    it back, or its row was re-dated (`given` and `refused` both None)."""

    given: GiveBack | None = None
    refused: AdminiumError | None = None


def try_give_back(
    store: Store,
    record: PostingRecord,
    moment: datetime,
    *,
    connection: str,
    now: datetime,
    conn: Connection | None = None,
    tables: Tables | None = None,
    aside: bool = False,
) -> GiveBackAttempt:
    """A hold's give-back made now as the clock (`give_back_hold`); refused by anything
    but another writer (the ledger's cap), it is set aside for an hour under its rule
    `-posting` with the spec's words in the log; given back, its set-aside record (given
    `aside`) goes. The sweep and the console's `set-aside retry` both come here."""
    rule = give_back_rule(record.posting)
    try:
        given = give_back_hold(store, record, now=now, conn=conn, tables=tables)
    except AdminiumError as error:
        if sets_aside(error):
            with store.transaction(conn) as kept:
                set_aside_row(
                    kept,
                    connection=connection,
                    app=store.app.name,
                    table=record.table,
                    key=record.key,
                    rule=rule,
                    moment=moment,
                    error=error,
                    now=now,
                )
        return GiveBackAttempt(refused=error)
    if given is not None and aside:
        with store.transaction(conn) as kept:
            drop_set_aside(kept, store.app.name, record.table, record.key, rule)
    return GiveBackAttempt(given=given)
