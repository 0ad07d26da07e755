"""Holds given back by the clock (WHAT-A-MOVE-SETS-OFF.md "Holds, ledgers and give-backs").

A row's posting made while the row is in a held state (`core.ledgers.postings`) is a hold
until heldUntil. The minute sweep gives back the holds nobody finished
(`give_back_hold`): the amount back to the account (`core.ledgers.accounts`), the row's
amount column to 0, whatever state the row is in and with no move. A hold a move took or
gave back meanwhile is let go of; a row re-dated keeps its new heldUntil. A give-back
refused (the ledger's cap) is set aside for an hour (`try_give_back`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.basics.actors import Actor
from core.basics.errors import AdminiumError, WriteConflict
from core.basics.events import RowEvent
from core.ledgers.accounts import BalanceChange, change_account, ledger_tables, with_status
from core.ledgers.entries import (
    EntryKind,
    PostingRecord,
    PostingStatus,
    read_held,
    read_postings,
    write_posting,
)
from core.ledgers.holds import held_until
from core.ledgers.postings import give_back_rule
from core.manifest.model import Table
from core.store.audit import audit_entry, write_and_audit
from core.store.set_aside import drop_set_aside, set_aside_row, sets_aside
from core.store.store import Row, Store
from core.time.moments import Tables

log = logging.getLogger(__name__)

_BACK = EntryKind.give_back


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
    row, current = _read_standing(conn, store, spec, record, key)
    if current is None or current.status is not PostingStatus.held:
        return None  # a move already took it or gave it back: let go of
    ledgers = {ledger.name: ledger for ledger in store.app.ledgers or ()}
    if tables is None:
        tables = ledger_tables(conn, store, spec, ledgers.values())
    if row is not None and spec.hold is not None:
        until = held_until(spec.hold, row, store.zone, tables)
        if until is None or until > now:
            redated = with_status(current, PostingStatus.held, until)
            write_posting(conn, store.app.name, redated, now, was=PostingStatus.held)
            return None
    assert spec.postings is not None
    posting = spec.postings[record.posting - 1]
    clock = Actor.clock()
    change = BalanceChange(
        current.posting, ledgers[posting.ledger], current.account, current.amount, _BACK
    )
    account = change_account(
        conn,
        store,
        change,
        tables,
        table=record.table,
        key=record.key,
        actor=clock.name,
        now=now,
        standing=with_status(current, PostingStatus.given_back, None),
    )
    if row is None:
        return GiveBack(current, None, (account,))
    written, event = _zero_amount(conn, store, spec, record, key, posting.amount, now, clock)
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


def _read_standing(
    conn: Connection, store: Store, spec: Table, record: PostingRecord, key: Any
) -> tuple[Row | None, PostingRecord | None]:
    """The row and its posting's record as they stand, both locked (None: gone)."""
    row: Row | None
    current: PostingRecord | None
    both = read_held(conn, store.table(record.table), spec.key, key, store.app.name, record.posting)
    if both is not None:
        row, current = both
    else:  # the row is gone, or its record: each read on its own, each locked
        row = store.read_row(conn, record.table, key, lock=True)
        found = read_postings(conn, store.app.name, record.table, record.key, lock=True)
        current = found.get(record.posting)
    return row, current


def _zero_amount(
    conn: Connection,
    store: Store,
    spec: Table,
    record: PostingRecord,
    key: Any,
    amount: str,
    now: datetime,
    clock: Actor,
) -> tuple[Row, RowEvent]:
    """The given-back row's amount column set to 0 as the clock, with its audit entry (no
    move); the row after and its event."""
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
        store.table(record.table), spec.key, key, {amount: 0}, entry
    )
    result = conn.execute(statement, params)
    written = dict(zip(result.keys(), result.one(), strict=True))
    state = written.get(spec.states.column) if spec.states is not None else None
    event = RowEvent(store.connection, store.app.name, record.table, key, state, clock.name)
    return written, event


def redate_hold(
    conn: Connection, store: Store, record: PostingRecord, until: datetime | None, now: datetime
) -> None:
    """Put right a held record whose row now reads a later heldUntil (`until`; None: its
    moment has no value, so the hold never ends) than the record kept: the row was
    re-dated by a writer that did not pass through Adminium. A record settled meanwhile
    is left as it is."""
    try:
        write_posting(
            conn,
            store.app.name,
            with_status(record, PostingStatus.held, until),
            now,
            was=record.status,
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
