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

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.agreement.catalogue import qualified
from core.outbox.reminders import queue_reminders
from core.store.set_aside import (
    RecordKey,
    SetAside,
    read_set_aside,
    refusal_details,
    refused_by,
    sets_aside,
)
from core.store.store import Store
from core.sweep.due import Due, DueRows, find_due, merge_due
from core.sweep.due_streams import Beside
from core.sweep.faults import adminium_missing, first_line, is_connections
from core.sweep.fence import LEASE, Fence, autocommit
from core.sweep.give_backs import give_back_holds
from core.sweep.idle import IdleCheck, idle_check, search_tables
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
    fingerprints: bool = True,
) -> SweepReport:
    """Sweep one connection at `now`: move its due rows, set aside the refused, record it.

    The fence is a lease of `lease` seconds, renewed while moving and never past the
    `deadline` (`core.sweep.fence`); a sweep turned away by it is recorded as `fenced` with
    who holds it and since when. With `fingerprints`, each app's tables' catalogue
    fingerprint is read in the opening statement (`SweepReport.fingerprints`)."""
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
                # The fence taken and the minute's record opened, and whether there is
                # anything to do (`core.sweep.idle`): one statement.
                apps = [s.app.name for s in stores]
                catalogue = _catalogue(stores) if fingerprints else None
                check = None if dry_run else idle_check(stores, now)
                if dry_run:
                    opened = None
                else:
                    opened, check = _open(run, conn, fence, apps, catalogue, check)
                run.fingerprints = dict(opened.fingerprints) if opened else {}
                if not dry_run and opened is None:
                    held_by = fence.turned_away_by
                    sentence = held_by.sentence() if held_by else "fence held by another sweep"
                    log.info("sweep of connection %s skipped: %s", connection, sentence)
                    report = run.report(SweepOutcome.fenced, sentence)
                elif opened is not None and opened.calm and check is not None:
                    # Nothing a candidate, nothing set aside: the search would find nothing,
                    # and the opening statement closed the record and let go of the fence.
                    run.next_due = check.next_due(opened.beside)
                    report = run.report(SweepOutcome.done)
                    closed = True
                else:
                    aside = opened is None or opened.set_aside
                    outcome = _run(run, conn, stores, fence, limit, deadline, on_moved, aside)
                    stopped = _every_app_stopped(run, stores)
                    report = run.report(SweepOutcome.stopped if stopped else outcome, stopped)
                    if opened is not None:
                        closed = _close(conn, fence, report, opened.record_id)
            finally:
                _let_go(fence, conn)
    except sa.exc.DBAPIError as error:
        # The database went away (or lacks Adminium's own tables): the minute stops; what
        # was recorded so far stays.
        message = adminium_missing(connection, error) or first_line(error)
        log.error("sweep of connection %s stopped: %s", connection, message)
        report = run.report(SweepOutcome.stopped, message)
    if not dry_run and not closed:
        _record(engine, report, None if opened is None else opened.record_id)
    _log_report(report)
    return report


def _open(
    run: SweepRun,
    conn: Connection,
    fence: Fence,
    apps: list[str],
    catalogue: dict[str, list[str]] | None,
    check: IdleCheck | None,
) -> tuple[Opened | None, IdleCheck | None]:
    """The opening statement (`open_fenced`), with the check of whether there is anything to
    do when there is one (a calm minute is done in it); the record, and the check that was
    read. An app's error in the check (its tables lack what its manifest names) opens again
    without it: the search finds whose fault it is, in each app's boundary."""
    now = run.now
    if check is None:
        return open_fenced(conn, fence, now, apps, catalogue), None
    try:
        took_ms = (run.clock() - run.started) * 1000
        opened = open_fenced(
            conn, fence, now, apps, catalogue, check.candidates, check.reads, check.params, took_ms
        )
        return opened, check
    except sa.exc.DBAPIError as error:
        if is_connections(error) or conn.invalidated:
            raise
        log.debug(
            "sweep of connection %s: opened again without its check of what is due (%s)",
            fence.connection,
            first_line(error),
        )
    return open_fenced(conn, fence, now, apps, catalogue), None


def _catalogue(stores: Sequence[Store]) -> dict[str, list[str]]:
    """Each app's tables, whose catalogue fingerprint the opening statement reads."""
    return {s.app.name: qualified(s.app.schema_name, s.app.tables) for s in stores}


def _every_app_stopped(run: SweepRun, stores: Sequence[Store]) -> str | None:
    """When every app faulted, the minute's error: it stopped (the first app's sentence)."""
    faults = run.apps.faults
    if not stores or run.apps.healthy(stores):
        return None
    first = next(iter(faults.values()))
    return f"every app stopped this minute; {first.app}: {first.error}"


def _log_report(report: SweepReport) -> None:
    """The minute's one line in the log: how it ended and what it did (and which apps
    stopped, when one did). An idle minute's (done, nothing moved, refused or left) is
    DEBUG: a worker's console is quiet while nothing happens."""
    stopped = ", ".join(f.app for f in report.faults)
    busy = report.outcome is not SweepOutcome.done or any(
        (report.moved, report.set_aside, report.given_back, report.conflicts, report.left)
    )
    log.log(
        logging.INFO if busy or report.faults or report.holds_refused else logging.DEBUG,
        "sweep of connection %s: %s, gave back %s, moved %s, set aside %s, conflicts %s,"
        " left %s, %.1f ms%s",
        report.connection,
        report.outcome.value,
        len(report.given_back),
        len(report.moved),
        len(report.set_aside),
        len(report.conflicts),
        len(report.left),
        report.took_ms,
        f", apps stopped {len(report.faults)} ({stopped})" if stopped else "",
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
            first_line(error),
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
    holds (its lease renewed each `FENCE_CHECK` seconds), each app in its own boundary
    (`core.sweep.faults`: an app's fault leaves the others sweeping). `aside` False: the
    apps had no rows set aside as the sweep took its fence (their records are not read)."""
    apps, names = run.apps, [s.app.name for s in stores]
    # One connection for the whole minute: each move is its own transaction on it, so
    # the pool (and its pre-ping) is visited once a minute, not once a move. Its reads
    # are autocommitted, each its own statement: no BEGIN and ROLLBACK round trips, and
    # under READ COMMITTED each statement reads its own snapshot inside a transaction too.
    with autocommit(conn):
        records = read_set_aside(conn, names) if aside else {}
        # Only what the search reads: the rest is read once a row is due (`_all_tables`).
        tables: dict[str, Tables] = {}
        for store in stores:
            with apps.guard(conn, store, "reading its settings"):
                tables[store.app.name] = store.read_clock_tables(conn, search_tables(store))
    if not run.dry_run:
        if records:
            forgetting = "forgetting the rows that left their state"
            apps.together(conn, stores, forgetting, lambda s: forget_left_from(conn, s, records))
            with autocommit(conn):
                records = read_set_aside(conn, names)
        limit -= give_back_holds(run, conn, stores, records, tables, limit, on_moved)
        queuing = apps.together(conn, stores, "queuing reminders", _reminders(conn, run.now))
        run.reminders = sum(queuing)
    conn.rollback()  # nothing is sent unless a transaction is open
    if limit <= 0:
        return SweepOutcome.more
    found = _search(run, conn, stores, tables, records, limit)
    run.passed_by = found.passed_by
    if run.dry_run:
        run.left = found.due
        return SweepOutcome.more if found.more else SweepOutcome.done
    if found.due:
        _all_tables(run, conn, stores, tables)
    return _move_all(run, conn, found, fence, deadline, on_moved, tables)


def _move_all(
    run: SweepRun,
    conn: Connection,
    found: DueRows,
    fence: Fence,
    deadline: float,
    on_moved: Callable[[WriteResult], None] | None,
    tables: Mapping[str, Tables],
) -> SweepOutcome:
    """Move the due rows, longest-due first, within the deadline and while the fence holds;
    a row of an app that faulted is left for the next minute (counted on its fault)."""
    apps = run.apps
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
        store = due.rule.store
        if store.app.name not in apps.faults:
            held = conn if store.engine is conn.engine else None
            with apps.guard(conn, store, "moving its due rows"):
                _move(run, due, on_moved, tables[store.app.name], held)
        if store.app.name in apps.faults:
            apps.left_behind(store.app.name)
    return SweepOutcome.more if found.more else SweepOutcome.done


def _reminders(conn: Connection, now: datetime) -> Callable[[Sequence[Store]], int]:
    """Queue the reminders due of some stores, in one transaction; how many."""
    return lambda some: queue_reminders(conn, some, now)


def _search(
    run: SweepRun,
    conn: Connection,
    stores: Sequence[Store],
    tables: Mapping[str, Tables],
    records: dict[RecordKey, SetAside],
    limit: int,
) -> DueRows:
    """The due rows of the apps that have not faulted, and (on the run) the next due moment,
    read beside them in the same statement; the apps together first, each alone when that
    fails (`AppBoundaries.together`)."""

    def search(some: Sequence[Store]) -> tuple[DueRows, datetime | None]:
        hint = next_due_read(some, run.now, tables)
        beside = Beside(hint.columns) if hint.needs_read else None
        with autocommit(conn):
            found = find_due(
                conn, some, now=run.now, limit=limit, records=records, tables=tables, beside=beside
            )
            return found, (run.now if found.more else read_next_due(conn, hint, beside))

    parts = run.apps.together(conn, stores, "finding its due rows", search)
    found = merge_due([due for due, _ in parts], limit)
    hints = [hint for _, hint in parts if hint is not None]
    run.next_due = run.now if found.more else min(hints, default=None)
    return found


def _all_tables(
    run: SweepRun, conn: Connection, stores: Sequence[Store], tables: dict[str, Tables]
) -> None:
    """Read the settings and hours tables the search did not (the moves' conditions and
    stamps read them), so that each move is given every one; each app in its boundary."""
    with autocommit(conn):
        for store in run.apps.healthy(stores):
            given = tables[store.app.name]
            missing = store.clock_tables() - set(given)
            if missing:
                with run.apps.guard(conn, store, "reading its settings"):
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
            "sweep record of connection %s not kept: %s", report.connection, first_line(error)
        )
