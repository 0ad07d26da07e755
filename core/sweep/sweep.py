"""The minute sweep of one connection: its due rows moved by their timed rules, once each.

In order: take the connection's fence; read the set-aside records, forget those of rows
that left `from`; give back the holds whose heldUntil has passed; find the due rows,
longest-due first, at most `limit`; move each through the write pipeline as `Timed
move`, in its own transaction; record the minute. A refused row is set aside for an
hour; a row another writer holds is tried next minute; the database going away stops
the minute. `now` is an argument; the jobs layer reads the clock and publishes events.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from weakref import WeakKeyDictionary

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.ledgers.give_back import redate_hold, try_give_back
from core.ledgers.holds import holding_tables
from core.outbox.reminders import queue_reminders
from core.store.set_aside import (
    RecordKey,
    SetAside,
    read_set_aside,
    refusal_details,
    refused_by,
    sets_aside,
)
from core.store.store import Store, collect_tables
from core.sweep.due import Due, find_due
from core.sweep.due_holds import find_due_holds
from core.sweep.due_streams import Beside, timed_rules
from core.sweep.fence import LEASE, Fence, autocommit
from core.sweep.minute_work import has_minute_work
from core.sweep.moves import forget_left_from, try_timed_move
from core.sweep.next_due import next_due_read, read_next_due
from core.sweep.records import Opened, close_fenced, close_sweep, open_fenced, write_sweep
from core.sweep.report import Refused, SweepOutcome, SweepReport, SweepRun
from core.time.moments import Tables
from core.writes.pipeline import WriteResult

log = logging.getLogger(__name__)

LIMIT = 500
"""At most this many rows move per connection per minute."""
DEADLINE = 50.0
"""Seconds a sweep may run; what it did not reach goes next minute."""
FENCE_CHECK = 1.0
"""Seconds between renewals of the fence's lease while moving."""


def sweep_connection(
    stores: Sequence[Store],
    *,
    connection: str,
    now: datetime,
    limit: int = LIMIT,
    deadline: float = DEADLINE,
    dry_run: bool = False,
    on_moved: Callable[[WriteResult], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    lease: float = LEASE,
) -> SweepReport:
    """Sweep one connection at `now`: move its due rows, set aside the refused, record it.

    The fence is a lease of `lease` seconds, renewed while moving and never past the
    `deadline` (`core.sweep.fence`); a sweep turned away by it is recorded as `fenced` with
    who holds it and since when."""
    run = SweepRun(connection, now, dry_run, clock, clock())
    stores = [s for s in stores if has_minute_work(s.app)]
    if not stores:
        return run.report(SweepOutcome.done)
    engine = stores[0].engine
    fence = Fence(connection, deadline=deadline, lease=lease)
    opened: Opened | None = None
    closed = False
    try:
        # One connection for the whole minute: the fence's statements and the moves.
        with engine.connect() as conn:
            try:
                # The fence taken and the minute's record opened: one statement.
                apps = [s.app.name for s in stores]
                opened = None if dry_run else open_fenced(conn, fence, now, apps)
                if not dry_run and opened is None:
                    held_by = fence.turned_away_by
                    sentence = held_by.sentence() if held_by else "fence held by another sweep"
                    log.info("sweep of connection %s skipped: %s", connection, sentence)
                    report = run.report(SweepOutcome.fenced, sentence)
                else:
                    aside = opened is None or opened.set_aside
                    outcome = _run(run, conn, stores, fence, limit, deadline, on_moved, aside)
                    report = run.report(outcome)
                    if opened is not None:
                        closed = _close(conn, fence, report, opened.record_id)
            finally:
                _let_go(fence, conn)
    except sa.exc.DBAPIError as error:
        # The database went away: the minute stops; what was recorded so far stays.
        message = _first_line(error)
        log.error("sweep of connection %s stopped: %s", connection, message)
        report = run.report(SweepOutcome.stopped, message)
    if not dry_run and not closed:
        _record(engine, report, None if opened is None else opened.record_id)
    _log_report(report)
    return report


def _log_report(report: SweepReport) -> None:
    """The minute's one line in the log: how it ended and what it did."""
    log.info(
        "sweep of connection %s: %s, gave back %s, moved %s, set aside %s, conflicts %s,"
        " left %s, %.1f ms",
        report.connection,
        report.outcome.value,
        len(report.given_back),
        len(report.moved),
        len(report.set_aside),
        len(report.conflicts),
        len(report.left),
        report.took_ms,
    )


def _close(conn: Connection, fence: Fence, report: SweepReport, opened: int) -> bool:
    """Close the minute's record and let the fence go: one statement. Whether it was
    closed (a database gone away leaves it to `_record`, the lease to run out)."""
    try:
        conn.rollback()  # nothing is sent: every move has committed
        close_fenced(conn, fence, opened, report.record())
    except sa.exc.DBAPIError as error:
        log.info(
            "sweep record of connection %s not closed with its fence: %s",
            fence.connection,
            _first_line(error),
        )
        return False
    return True


def _let_go(fence: Fence, conn: Connection) -> None:
    """Release the fence on the sweep's session unless it was let go of already; a session
    gone leaves the lease to run out."""
    if not fence.taken:
        return
    try:
        conn.rollback()
        fence.release(conn)
    except sa.exc.SQLAlchemyError as error:
        log.info(
            "sweep fence of connection %s left to run out: %s",
            fence.connection,
            type(error).__name__,
        )


def _run(
    run: SweepRun,
    conn: Connection,
    stores: Sequence[Store],
    fence: Fence,
    limit: int,
    deadline: float,
    on_moved: Callable[[WriteResult], None] | None,
    aside: bool = True,
) -> SweepOutcome:
    """Find the due rows and move them on `conn`, within the deadline and while the fence
    holds (its lease renewed each `FENCE_CHECK` seconds). `aside` False: the apps had no
    rows set aside as the sweep took its fence (their records are not read)."""
    # One connection for the whole minute: each move is its own transaction on it, so
    # the pool (and its pre-ping) is visited once a minute, not once a move. Its reads
    # are autocommitted, each its own statement: no BEGIN and ROLLBACK round trips, and
    # under READ COMMITTED each statement reads its own snapshot inside a transaction too.
    with autocommit(conn):
        records = read_set_aside(conn, [s.app.name for s in stores]) if aside else {}
        # Only what the search reads: the rest is read once a row is due (`_all_tables`).
        tables: dict[str, Tables] = {
            s.app.name: s.read_clock_tables(conn, _search_tables(s)) for s in stores
        }
    if not run.dry_run:
        if records:
            forget_left_from(conn, stores, records)
            with autocommit(conn):
                records = read_set_aside(conn, [s.app.name for s in stores])
        limit -= _give_back_holds(run, conn, stores, records, tables, limit, on_moved)
        run.reminders = queue_reminders(conn, stores, run.now)
    conn.rollback()  # nothing is sent unless a transaction is open
    if limit <= 0:
        return SweepOutcome.more
    # The next due moment read beside the due rows, in the same statement.
    hint = next_due_read(stores, run.now, tables)
    beside = Beside(hint.columns) if hint.needs_read else None
    with autocommit(conn):
        found = find_due(
            conn, stores, now=run.now, limit=limit, records=records, tables=tables, beside=beside
        )
        run.next_due = run.now if found.more else read_next_due(conn, hint, beside)
    run.passed_by = found.passed_by
    if run.dry_run:
        run.left = found.due
        return SweepOutcome.more if found.more else SweepOutcome.done
    if found.due:
        _all_tables(conn, stores, tables)
    checked = run.clock()
    for index, due in enumerate(found.due):
        if run.clock() - run.started > deadline:
            run.left = found.due[index:]
            return SweepOutcome.deadline
        if run.clock() - checked > FENCE_CHECK:
            if not fence.held(conn):
                run.left = found.due[index:]
                return SweepOutcome.fence_lost
            checked = run.clock()
        held = conn if due.rule.store.engine is conn.engine else None
        _move(run, due, on_moved, tables[due.rule.store.app.name], held)
    return SweepOutcome.more if found.more else SweepOutcome.done


_SEARCH_TABLES: WeakKeyDictionary[Store, frozenset[str] | None] = WeakKeyDictionary()


def _search_tables(store: Store) -> set[str] | None:
    """The settings and hours tables a sweep reads before it knows whether a row is due:
    every one (None) when the app holds (its give-backs come first), else those its timed
    moments read (none for a moment of the row's own columns). Worked out once per store."""
    if store not in _SEARCH_TABLES:
        found: set[str] = set()
        for rule in timed_rules(store):
            collect_tables(rule.timed.at, found)
        holds = bool(holding_tables(store.app))
        _SEARCH_TABLES[store] = None if holds else frozenset(found & store.clock_tables())
    wanted = _SEARCH_TABLES[store]
    return None if wanted is None else set(wanted)


def _all_tables(conn: Connection, stores: Sequence[Store], tables: dict[str, Tables]) -> None:
    """Read the settings and hours tables the search did not (the moves' conditions and
    stamps read them), so that each move is given every one."""
    with autocommit(conn):
        for store in stores:
            given = tables[store.app.name]
            missing = store.clock_tables() - set(given)
            if missing:
                tables[store.app.name] = {**given, **store.read_clock_tables(conn, missing)}


def _move(
    run: SweepRun,
    due: Due,
    on_moved: Callable[[WriteResult], None] | None,
    tables: Tables,
    conn: Connection | None,
) -> None:
    """One row's timed move, in its own transaction (on `conn` when given) through the pipeline."""
    rule = due.rule
    attempt = try_timed_move(
        rule,
        due.key,
        due.moment,
        connection=run.connection,
        now=run.now,
        tables=tables,
        conn=conn,
        record=due.record,
    )
    if attempt.result is not None:
        run.moved.append(due)
        run.fallout.linked += attempt.result.linked
        run.fallout.emails += attempt.result.queued
        run.fallout.deliveries += attempt.result.deliveries
        if on_moved is not None:
            on_moved(attempt.result)
    elif attempt.refused is None:
        run.left_alone.append(due)
    elif sets_aside(attempt.refused):
        refused = attempt.refused
        details = refusal_details(refused)
        run.set_aside.append(Refused(due, refused.code, refused.message, details))
    else:
        run.conflicts.append(due)
        linked = refused_by(refusal_details(attempt.refused))
        if linked is not None:
            run.fallout.held[(rule.app, rule.table, str(due.key))] = linked
        log.info(
            "timed move of %s.%s key=%s rule=%s tried next minute: %s%s",
            rule.app,
            rule.table,
            due.key,
            rule.number,
            attempt.refused.code,
            f", {linked} held by another writer" if linked else "",
        )


def _give_back_holds(
    run: SweepRun,
    conn: Connection,
    stores: Sequence[Store],
    records: Mapping[RecordKey, SetAside],
    tables: Mapping[str, Tables],
    limit: int,
    on_moved: Callable[[WriteResult], None] | None,
) -> int:
    """A hold that nobody finishes: first, the holds whose heldUntil has passed are given
    back, longest-due first, each in its own transaction; a give-back refused (the ledger's
    cap) is set aside for an hour, one another writer holds is tried next minute. How many
    of the minute's `limit` they took."""
    with autocommit(conn):
        found = find_due_holds(
            conn, stores, now=run.now, limit=max(limit, 0), records=records, tables=tables
        )
    for store, stale, until in found.redated:
        # Its row was re-dated past now by a writer that left the record as it was.
        held = conn if store.engine is conn.engine else None
        with store.transaction(held) as kept:
            redate_hold(kept, store, stale, until, run.now)
    tried = 0
    for due in found.due:
        store, record, aside = due.store, due.record, due.aside
        if tried >= limit:
            break
        tried += 1
        held = conn if store.engine is conn.engine else None
        attempt = try_give_back(
            store,
            record,
            due.moment,
            connection=run.connection,
            now=run.now,
            conn=held,
            tables=tables[store.app.name],
            aside=aside is not None,
        )
        if attempt.refused is not None:
            if sets_aside(attempt.refused):
                run.holds_refused.append((record, attempt.refused.code))
            else:
                run.holds_busy.append(record)
            continue
        given = attempt.given
        if given is None:
            continue
        run.given_back.append(given)
        if on_moved is not None:
            key = record.key if given.row is None else given.events[0].key
            on_moved(WriteResult(record.table, key, given.row or {}, given.events))
    return tried


def _record(engine: sa.Engine, report: SweepReport, opened: int | None = None) -> None:
    """Write the minute's record (close the one `opened` as it started); a database that
    went away keeps none."""
    try:
        with engine.begin() as conn:
            # A minute's record lost in a crash is no loss: do not wait for the disk.
            conn.execute(sa.text("SET LOCAL synchronous_commit = off"))
            if opened is None:
                write_sweep(conn, report.record())
            else:
                close_sweep(conn, opened, report.record())
    except sa.exc.DBAPIError as error:
        log.error(
            "sweep record of connection %s not kept: %s", report.connection, _first_line(error)
        )


def _first_line(error: sa.exc.DBAPIError) -> str:
    """What the database said, without the SQL."""
    text = str(error.orig or error).strip()
    return text.splitlines()[0] if text else type(error).__name__
