"""One write = one transaction: the pipeline every change of a row goes through.

Three entry points over the one pipeline: `create_row` and `change_row` take a writer's
`WriteRequest` (screens, the REST and public APIs, imports, sample data), and
`make_timed_move` is the clock's. In order (DESIGN "The write pipeline"): 1 lock the row
and read it as held; 2 the move listed, undo, roles; 3 what the move waits for and its
late rule; 4 the lock and the database's own refusals; 5 the state, `set`, stamps and
codes; 6 effects; 7 the audit entry, emails, automations; 8 commit, then the events.
A refusal anywhere is one AdminiumError and the whole transaction rolls back. Steps 1 to
4 are judged in `core.writes.judging` (time in `core.writes.timing`), the database's
refusals named in `core.writes.database_refusals`; this module writes and orders them.

The outermost write settles at its end, before its commit (`core.writes.settling`): the
totals its rows touched are recomputed once, the audit entry of a row whose totals
changed is made to say the row as committed, a posting whose amount is a total takes it
as committed, and only then are its rows' emails and webhook deliveries queued, from the
rows as committed. So the audit `after`, the webhook's `after`, an email's words and the
writer's answer all carry the total the row holds, never the one before.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.basics.actors import Actor, ActorKind
from core.basics.errors import RowNotFound, ValueRefused
from core.basics.events import RowEvent
from core.ledgers.postings import PostingPlan, make_postings, plan_postings, total_postings
from core.manifest.lookup import total_columns
from core.manifest.model import Timed
from core.rules.columns import writer_values
from core.rules.stamps import code_values, stamp_values
from core.setoff.effects import Cause, MoveLinked, make_effects
from core.setoff.totals import new_totals, touch_totals
from core.store.audit import AUDIT_ID, audit_entry, write_and_audit
from core.store.schema import sample_marks
from core.store.store import Row, Store
from core.time.moments import Tables
from core.writes.database_refusals import database_refusal
from core.writes.judging import Judged, hold_row, judge_write
from core.writes.request import Run, WriteRequest
from core.writes.settling import Posted, Settling, Told, settle
from core.writes.timing import judge_window_opened

__all__ = [
    "Actor",
    "ActorKind",
    "WriteResult",
    "change_row",
    "create_row",
    "make_timed_move",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WriteResult:
    """A committed write: the row as committed, whether the move was late, its events, how
    many emails and webhook deliveries it queued, and how many linked rows its effects moved."""

    table: str
    key: Any
    row: Row
    events: tuple[RowEvent, ...]
    late: bool = False
    queued: int = 0
    deliveries: int = 0
    linked: int = 0


def create_row(store: Store, request: WriteRequest) -> WriteResult:
    """A new row in its table's initial state (the table's `create` rule judged), in one
    transaction; its key is the database's, or one of its values."""
    if request.key is not None:
        raise ValueError("a new row is asked for without a key")
    return _run(store, request)


def change_row(store: Store, request: WriteRequest) -> WriteResult:
    """An existing row's values changed, or the row moved (`move_to`), by a person, a guest,
    an import or sample data, in one transaction: the move listed, its roles, what it waits
    for, its late rule and the lock judged on the row as held."""
    if request.key is None:
        raise ValueError("a change names the key of its row")
    return _run(store, request)


def make_timed_move(
    store: Store,
    table: str,
    key: Any,
    timed: Timed,
    *,
    now: datetime,
    tables: Tables | None = None,
    conn: Connection | None = None,
) -> WriteResult:
    """The clock's move of one row by its timed rule, in one transaction.

    The row is moved to the rule's `to` only while still in its `from` and once its moment,
    read again as held, has passed (else RowNotDue); the rule's `set` is written through
    the lock. `tables`, when given, are the settings and hours tables already read (the
    sweep reads them once a minute); otherwise the write reads them inside its transaction.
    `conn`, when given, is a connection the caller holds outside any transaction (the sweep
    holds one a minute): the write is its own transaction on it.
    """
    if key is None:
        raise ValueError("a timed move names the key of its row")
    request = WriteRequest(table, Actor.clock(), now, key=key, move_to=timed.to)
    return _run(store, request, timed=timed, tables=tables, conn=conn)


def _run(
    store: Store,
    request: WriteRequest,
    *,
    timed: Timed | None = None,
    tables: Tables | None = None,
    conn: Connection | None = None,
) -> WriteResult:
    """The one pipeline: the request checked, then its transaction; the database's own
    refusals as the pipeline's codes."""
    if request.now.utcoffset() is None:
        raise ValueError("now must carry its offset")
    table, key = request.table, request.key
    if table not in store.app.tables:
        raise RowNotFound(f"no table {table!r}", {"table": table})
    asked = {f.name: getattr(request, f.name) for f in fields(WriteRequest)}
    coerced = None if key is None else store.coerce_key(table, key)
    req = Run(**{**asked, "key": coerced}, timed=timed, tables=tables)
    if key is not None and req.key is None:
        raise RowNotFound(f"no row {key!r} in {table}", {"table": table, "key": key})
    written: list[str] = []
    try:
        with store.transaction(conn) as held:
            return _write(held, store, req, written)
    except sa.exc.DBAPIError as error:
        raise database_refusal(store, req.table, req.key, written, error) from error
    except sa.exc.StatementError as error:
        raise ValueRefused(
            f"a value does not fit its column: {error.orig}", {"reason": "type"}
        ) from error


def _write(conn: Connection, store: Store, req: Run, written: list[str]) -> WriteResult:
    """The pipeline inside one transaction."""
    spec = store.spec(req.table)
    creating = req.key is None
    sent = writer_values(spec, req.values, req.actor, creating=creating)
    # 1. lock the row and read it as held
    # (A linked row comes locked and read by the effect that moves it.)
    held = None if creating else req.held or hold_row(conn, store, req)
    judged = judge_write(conn, store, req, held, sent)
    changes, postings = _changes(conn, store, req, held, sent, judged)
    if not changes and not creating:
        return WriteResult(req.table, req.key, held or {}, ())
    written.extend(changes)
    settling = req.settling if req.settling is not None else Settling()
    row, accounts, linked = _write_row(conn, store, req, held, judged, changes, postings, settling)
    judge_window_opened(req.commit_clock, judged.verdict)
    # 8. commit (on leaving the caller's block), then the events.
    key = row[spec.key]
    state = row.get(spec.states.column) if spec.states is not None else None
    event = RowEvent(store.connection, store.app.name, req.table, key, state, req.actor.name)
    log.debug("wrote %s.%s key=%s by %s", store.app.name, req.table, key, req.actor.name)
    result = WriteResult(req.table, key, row, (event, *accounts), judged.verdict.late)
    return _with_fallout(conn, store, req, result, linked, settling)


def _changes(
    conn: Connection,
    store: Store,
    req: Run,
    held: Row | None,
    sent: Mapping[str, Any],
    judged: Judged,
) -> tuple[dict[str, Any], PostingPlan]:
    """Step 5's values: the state, `set` values, the late flag, stamps, codes; a new row's
    totals; what its postings set (a hold given back), and their plan."""
    spec = store.spec(req.table)
    state_column = spec.states.column if spec.states is not None else None
    state_from, state_to, verdict = judged.state_from, judged.state_to, judged.verdict
    changes = dict(sent)
    if state_column is not None and state_to is not None and state_to != state_from:
        changes[state_column] = state_to
    changes.update(judged.timed_set)
    if verdict.late and verdict.flag is not None:
        changes[verdict.flag] = True
    changes.update(stamp_values(spec, judged.stamps, req.now, verdict.tables, store.zone))
    changes.update(code_values(spec, held, {**judged.after, **changes}))
    if held is None:
        changes.update(new_totals(spec))
    postings = plan_postings(conn, store, req.table, held, {**judged.after, **changes}, req.actor)
    changes.update(postings.changes)
    return changes, postings


def _write_row(
    conn: Connection,
    store: Store,
    req: Run,
    held: Row | None,
    judged: Judged,
    changes: Mapping[str, Any],
    postings: PostingPlan,
    settling: Settling,
) -> tuple[Row, tuple[RowEvent, ...], list[WriteResult]]:
    """Steps 5 to 7: the row written with its audit entry, its totals touched, its postings
    made, its effects moved, its emails and deliveries left to `settling`; a new sample row
    marked. The row after, its accounts' events, the linked rows' writes."""
    spec = store.spec(req.table)
    # 6. effects: linked rows moved as their own table's declared move (after the write).
    # 7. the audit entry, in the same statement as the write; emails and automations
    #    that watch the state or the table join here (never emails for sample rows).
    move = (judged.state_from, judged.state_to)
    row, audit_id = _write_and_audit(conn, store, req, changes, move)
    if audit_id is not None:
        settling.audited[(req.table, row[spec.key])] = audit_id
    # 5. totals, written once at the end
    touch_totals(store, req.table, held, row, settling.touched)
    # A posting whose amount is a total takes it as committed, at the end (`settle`).
    of_totals = total_postings(spec)
    every = frozenset(range(1, len(spec.postings or ()) + 1))
    accounts = make_postings(
        conn,
        store,
        req.table,
        postings,
        held,
        row,
        actor=req.actor,
        now=req.now,
        numbers=every - of_totals,
    )
    if of_totals:
        settling.posted.append(Posted(req.table, row[spec.key], postings, held, row, of_totals))
    cause = Cause(req.table, row[spec.key], judged.state_from, judged.state_to)
    move_linked = _linked_move(conn, store, req, settling)
    linked = make_effects(
        conn, store, judged.move, row, cause, depth=req.depth, move_linked=move_linked
    )
    # Emails and deliveries read the row as committed: queued once the totals are written.
    settling.told.append(Told(req.table, row[spec.key], held, row))
    if held is None and req.actor.kind is ActorKind.sample:
        # A sample row is marked in its own write, so no crash leaves it unmarked.
        mark = {"app": store.app.name, "table_name": req.table, "row_key": str(row[spec.key])}
        conn.execute(sa.insert(sample_marks).values(**mark, added_at=req.now))
    return row, accounts, linked


def _linked_move(conn: Connection, store: Store, parent: Run, settling: Settling) -> MoveLinked:
    """How an effect moves a linked row: this same pipeline, one level deeper, as the same
    actor; the database's refusals named as the linked row's."""

    def move(table: str, held: Row, to: str, cause: Cause) -> WriteResult:
        req = Run(
            table,
            parent.actor,
            parent.now,
            key=held[store.spec(table).key],
            held=held,
            move_to=to,
            commit_clock=parent.commit_clock,
            tables=parent.tables,
            cause=cause,
            depth=parent.depth + 1,
            settling=settling,
        )
        written: list[str] = []
        try:
            return _write(conn, store, req, written)
        except sa.exc.DBAPIError as error:
            refusal = database_refusal(store, req.table, req.key, written, error)
            if refusal is error:
                raise
            raise refusal from error

    return move


def _with_fallout(
    conn: Connection,
    store: Store,
    req: Run,
    result: WriteResult,
    linked: list[WriteResult],
    settling: Settling,
) -> WriteResult:
    """The write with what it set off: its linked rows' events and how many moved, and, for
    the outermost write, what it settles at its end (`settle`); one event per row."""
    events = [*result.events, *(event for found in linked for event in found.events)]
    moved = len(linked) + sum(found.linked for found in linked)
    if req.depth > 0:
        return replace(result, events=tuple(events), linked=moved)
    totals, queued, delivering, accounts = settle(
        conn, store, settling, actor=req.actor, now=req.now
    )
    events.extend(totals.events)
    events.extend(accounts)
    row = {**result.row, **totals.values.get((req.table, result.key), {})}
    by_row = {(event.table, event.key): event for event in events}
    return replace(
        result,
        row=row,
        events=tuple(by_row.values()),
        queued=queued,
        deliveries=delivering,
        linked=moved,
    )


def _write_and_audit(
    conn: Connection,
    store: Store,
    req: Run,
    changes: Mapping[str, Any],
    move: tuple[str | None, str | None],
) -> tuple[Row, int | None]:
    """Steps 5 and 7 in one round trip: the row written and its audit entry; the row after
    and, for a table with totals (whose entry `settle` may rewrite), the entry's id. Other
    tables do not read the id back, so a role that may only insert into the audit table
    writes them (RETURNING needs SELECT)."""
    state_from, state_to = move
    moved = state_to is not None and state_to != state_from
    entry = audit_entry(
        at=req.now,
        actor=req.actor.name,
        actor_kind=req.actor.kind.value,
        app=store.app.name,
        table=req.table,
        move_from=state_from if moved else None,
        move_to=state_to if moved else None,
        cause=req.cause.as_dict() if req.cause is not None else None,
    )
    spec = store.spec(req.table)
    with_id = bool(total_columns(spec))
    statement, params = write_and_audit(
        store.table(req.table), spec.key, req.key, changes, entry, with_id=with_id
    )
    result = conn.execute(statement, params)
    row = dict(zip(result.keys(), result.one(), strict=True))
    return row, int(row.pop(AUDIT_ID)) if with_id else None
