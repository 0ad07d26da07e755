"""The minute's give-backs: a hold that nobody finishes is given back once its heldUntil
has passed, longest-due first, each in its own transaction and in its app's boundary
(`core.sweep.faults`); a give-back refused (the ledger's cap) is set aside for an hour, one
another writer holds is tried next minute."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from sqlalchemy.engine import Connection

from core.ledgers.give_back import redate_hold, try_give_back
from core.store.set_aside import RecordKey, SetAside, sets_aside
from core.store.store import Store
from core.sweep.due_holds import DueHold, DueHolds, find_due_holds, merge_holds
from core.sweep.fence import autocommit
from core.sweep.report import SweepRun
from core.time.moments import Tables
from core.writes.pipeline import WriteResult


def give_back_holds(
    run: SweepRun,
    conn: Connection,
    stores: Sequence[Store],
    records: Mapping[RecordKey, SetAside],
    tables: Mapping[str, Tables],
    limit: int,
    on_moved: Callable[[WriteResult], None] | None,
) -> int:
    """Give back the holds due at the run's `now` (of the apps that have not faulted); how
    many of the minute's `limit` they took."""
    apps = run.apps
    wanted = max(limit, 0)

    def search(some: Sequence[Store]) -> DueHolds:
        with autocommit(conn):
            return find_due_holds(
                conn, some, now=run.now, limit=wanted, records=records, tables=tables
            )

    found = merge_holds(apps.together(conn, stores, "finding its holds due", search), wanted)
    for store, stale, until in found.redated:
        # Its row was re-dated past now by a writer that left the record as it was.
        if store.app.name in apps.faults:
            continue
        held = conn if store.engine is conn.engine else None
        with (
            apps.guard(conn, store, "putting a hold's moment right"),
            store.transaction(held) as kept,
        ):
            redate_hold(kept, store, stale, until, run.now)
    tried = 0
    for due in found.due:
        if tried >= limit:
            break
        tried += 1
        if due.store.app.name in apps.faults:
            continue
        with apps.guard(conn, due.store, "giving back its holds"):
            _give_back(run, conn, due.store, due, tables, on_moved)
    return tried


def _give_back(
    run: SweepRun,
    conn: Connection,
    store: Store,
    due: DueHold,
    tables: Mapping[str, Tables],
    on_moved: Callable[[WriteResult], None] | None,
) -> None:
    """One hold given back (or set aside, or left to the next minute)."""
    record = due.record
    held = conn if store.engine is conn.engine else None
    attempt = try_give_back(
        store,
        record,
        due.moment,
        connection=run.connection,
        now=run.now,
        conn=held,
        tables=tables[store.app.name],
        aside=due.aside is not None,
    )
    if attempt.refused is not None:
        if sets_aside(attempt.refused):
            run.holds_refused.append((record, attempt.refused.code))
        else:
            run.holds_busy.append(record)
        return
    given = attempt.given
    if given is None:
        return
    run.given_back.append(given)
    if on_moved is not None:
        key = record.key if given.row is None else given.events[0].key
        on_moved(WriteResult(record.table, key, given.row or {}, given.events))
