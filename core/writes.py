"""One write = one transaction: the pipeline every change of a row goes through.

Three entry points over the one pipeline: `create_row` and `change_row` take a writer's
`WriteRequest` (screens, the REST and public APIs, imports, sample data), and
`make_timed_move` is the clock's. In order (DESIGN "The write pipeline"): 1 lock the row
and read it as held; 2 the move listed, undo, roles; 3 what the move waits for and its
late rule; 4 the lock and the database's own refusals; 5 the state, `set`, stamps and
codes; 6 effects; 7 the audit entry, emails, automations; 8 commit, then the events.
A refusal anywhere is one AdminiumError and the whole transaction rolls back.

The outermost write settles at its end, before its commit (`_settle`): the totals its
rows touched are recomputed once, the audit entry of a row whose totals changed is made
to say the row as committed, a posting whose amount is a total takes it as committed,
and only then are its rows' emails and webhook deliveries queued, from the rows as
committed. So the audit `after`, the webhook's `after`, an email's words and the
writer's answer all carry the total the row holds, never the one before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.actors import Actor, ActorKind
from core.audit import AUDIT_ID, audit_entry, settle_after, write_and_audit
from core.automations import queue_deliveries
from core.columns import writer_values
from core.effects import Cause, MoveLinked, make_effects
from core.errors import (
    ColumnNotWritable,
    RowNotDue,
    RowNotFound,
    StateChanged,
    ValueRefused,
    WriteConflict,
)
from core.events import RowEvent
from core.ledgers import PostingPlan, make_postings, plan_postings, total_postings
from core.limits import judge_limits
from core.lock import judge_lock
from core.manifest.model import MoveSpec, Table, Timed
from core.moments import Tables
from core.moves import judge_move
from core.outbox import queue_messages
from core.refusals import refused_value
from core.sample_marks import sample_marks
from core.stamps import code_values, firing_stamps, stamp_values
from core.store import Row, Store
from core.time_rules import LateVerdict, judge_due, judge_late, judge_requires, late_rule
from core.totals import (
    TotalsWritten,
    Touched,
    new_totals,
    total_columns,
    touch_totals,
    write_totals,
)

__all__ = [
    "Actor",
    "ActorKind",
    "WriteRequest",
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


@dataclass(frozen=True)
class WriteRequest:
    """What a writer asks of one row: who, when, which row (none for a new one), and what.

    `move_to` names a listed move; `seen_state` the state the writer saw (an undo names it;
    a change that moves nothing is refused once the row has left it). `commit_clock`, when
    given, is read just before commit: a late window that opened while the write was made
    is a WriteConflict. `expect` names values the held row must still hold (a guest's link
    code): otherwise the row is not found.
    """

    table: str
    actor: Actor
    now: datetime
    key: Any = None
    values: Mapping[str, Any] = field(default_factory=dict)
    move_to: str | None = None
    seen_state: str | None = None
    commit_clock: Callable[[], datetime] | None = None
    expect: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class _Run(WriteRequest):
    """A write as the pipeline runs it: the request with its key as the key column's type,
    and what only the clock passes: its rule and the settings and hours tables it read.
    A linked row's move (an effect) carries its cause, its depth and the outermost write's
    `_Settling`."""

    timed: Timed | None = None
    tables: Tables | None = None
    cause: Cause | None = None
    depth: int = 0
    settling: _Settling | None = None
    held: Row | None = None


@dataclass(frozen=True)
class _Told:
    """A row's write whose emails and deliveries wait for the row as committed."""

    table: str
    key: Any
    held: Row | None
    row: Row


@dataclass(frozen=True)
class _Posted:
    """A row's write whose postings of a total wait for the row as committed."""

    table: str
    key: Any
    plan: PostingPlan
    held: Row | None
    row: Row
    numbers: frozenset[int]


@dataclass
class _Settling:
    """What one write (its effects included) settles at its end, once its totals are
    recomputed: the parents touched, each row's audit entry, and the rows whose emails and
    deliveries are queued then, from the row as committed (its new totals in it)."""

    touched: Touched = field(default_factory=Touched)
    audited: dict[tuple[str, Any], int] = field(default_factory=dict)
    told: list[_Told] = field(default_factory=list)
    posted: list[_Posted] = field(default_factory=list)


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
    req = _Run(**{**asked, "key": coerced}, timed=timed, tables=tables)
    if key is not None and req.key is None:
        raise RowNotFound(f"no row {key!r} in {table}", {"table": table, "key": key})
    written: list[str] = []
    try:
        with store.transaction(conn) as held:
            return _write(held, store, req, written)
    except sa.exc.DBAPIError as error:
        raise _database_refusal(store, req, written, error) from error
    except sa.exc.StatementError as error:
        raise ValueRefused(
            f"a value does not fit its column: {error.orig}", {"reason": "type"}
        ) from error


def _write(conn: Connection, store: Store, req: _Run, written: list[str]) -> WriteResult:
    """The pipeline inside one transaction."""
    spec = store.spec(req.table)
    creating = req.key is None
    sent = writer_values(spec, req.values, req.actor, creating=creating)
    # 1. lock the row and read it as held
    # (A linked row comes locked and read by the effect that moves it.)
    held = None if creating else req.held or _hold_row(conn, store, req)
    state_column = spec.states.column if spec.states is not None else None
    state_from = held.get(state_column) if held is not None and state_column else None
    if req.timed is not None and state_from != req.timed.from_:
        # The clock moves a row only while it is still in `from`: a row moved meanwhile is
        # left as it is, before its new state is asked whether it lists the move.
        raise RowNotDue(
            f"the row left {req.timed.from_!r}", {"reason": "left-from", "state": state_from}
        )
    # 2. the move: listed, undo, roles
    move = (
        judge_move(spec, state_from, req.move_to, req.seen_state, req.actor, roles=not req.cause)
        if req.move_to is not None
        else None
    )
    if move is None and req.seen_state is not None and req.seen_state != state_from:
        raise StateChanged(
            "the row has moved since it was seen", {"seen": req.seen_state, "state": state_from}
        )
    state_to = _state_after(spec, creating, move)
    after = {**(held or {}), **sent}
    if state_column is not None and state_to is not None:
        after[state_column] = state_to
    timed_set = dict(req.timed.set or {}) if req.timed is not None else {}
    after.update(timed_set)
    stamps = firing_stamps(spec, held, after)
    # 3. what the move waits for, read inside the write under its lock
    verdict = _judge_time(conn, store, spec, req, held, sent, move, state_from, stamps)
    # 4. the lock (what `set`, stamps and codes write passes it); limits join here.
    # The database's own refusals (privileges, constraints) come from the write itself.
    judge_lock(spec, held, after, sent)
    judge_limits(conn, store, req.table, held, after, key=req.key, actor=req.actor, now=req.now)
    # 5. write: the state, `set` values, the late flag, stamps, codes; totals join here.
    changes = dict(sent)
    if state_column is not None and state_to is not None and state_to != state_from:
        changes[state_column] = state_to
    changes.update(timed_set)
    if verdict.late and verdict.flag is not None:
        changes[verdict.flag] = True
    changes.update(stamp_values(spec, stamps, req.now, verdict.tables, store.zone))
    changes.update(code_values(spec, held, {**after, **changes}))
    if creating:
        changes.update(new_totals(spec))
    postings = plan_postings(conn, store, req.table, held, {**after, **changes}, req.actor)
    changes.update(postings.changes)
    if not changes and not creating:
        return WriteResult(req.table, req.key, held or {}, ())
    # 6. effects: linked rows moved as their own table's declared move (after the write).
    # 7. the audit entry, in the same statement as the write; emails and automations
    #    that watch the state or the table join here (never emails for sample rows).
    written.extend(changes)
    settling = req.settling if req.settling is not None else _Settling()
    row, audit_id = _write_and_audit(conn, store, req, changes, (state_from, state_to))
    if audit_id is not None:
        settling.audited[(req.table, row[spec.key])] = audit_id
    # 5. totals, written once at the end
    touch_totals(store, req.table, held, row, settling.touched)
    # A posting whose amount is a total takes it as committed, at the end (`_settle`).
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
        settling.posted.append(_Posted(req.table, row[spec.key], postings, held, row, of_totals))
    cause = Cause(req.table, row[spec.key], state_from, state_to)
    move_linked = _linked_move(conn, store, req, settling)
    linked = make_effects(conn, store, move, row, cause, depth=req.depth, move_linked=move_linked)
    # Emails and deliveries read the row as committed: queued once the totals are written.
    settling.told.append(_Told(req.table, row[spec.key], held, row))
    if creating and req.actor.kind is ActorKind.sample:
        # A sample row is marked in its own write, so no crash leaves it unmarked.
        mark = {"app": store.app.name, "table_name": req.table, "row_key": str(row[spec.key])}
        conn.execute(sa.insert(sample_marks).values(**mark, added_at=req.now))
    _judge_window_opened(req, verdict)
    # 8. commit (on leaving the caller's block), then the events.
    key = row[spec.key]
    state = row.get(state_column) if state_column else None
    event = RowEvent(store.connection, store.app.name, req.table, key, state, req.actor.name)
    log.debug("wrote %s.%s key=%s by %s", store.app.name, req.table, key, req.actor.name)
    result = WriteResult(req.table, key, row, (event, *accounts), verdict.late)
    return _with_fallout(conn, store, req, result, linked, settling)


def _linked_move(conn: Connection, store: Store, parent: _Run, settling: _Settling) -> MoveLinked:
    """How an effect moves a linked row: this same pipeline, one level deeper, as the same
    actor; the database's refusals named as the linked row's."""

    def move(table: str, held: Row, to: str, cause: Cause) -> WriteResult:
        req = _Run(
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
            refusal = _database_refusal(store, req, written, error)
            if refusal is error:
                raise
            raise refusal from error

    return move


def _with_fallout(
    conn: Connection,
    store: Store,
    req: _Run,
    result: WriteResult,
    linked: list[WriteResult],
    settling: _Settling,
) -> WriteResult:
    """The write with what it set off: its linked rows' events and how many moved, and, for
    the outermost write, what it settles at its end (`_settle`); one event per row."""
    events = [*result.events, *(event for found in linked for event in found.events)]
    moved = len(linked) + sum(found.linked for found in linked)
    if req.depth > 0:
        return replace(result, events=tuple(events), linked=moved)
    totals, queued, delivering, accounts = _settle(conn, store, req, settling)
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


def _settle(
    conn: Connection, store: Store, req: _Run, settling: _Settling
) -> tuple[TotalsWritten, int, int, list[RowEvent]]:
    """The outermost write's end, before its commit: every total it touched written once;
    each audit entry of a row whose totals changed made to say the row as committed; the
    postings whose amount is a total made from the row as committed; then each row's
    emails and deliveries queued from the row as committed (its totals in it). The new
    totals, how many emails and deliveries were queued, the accounts' events."""
    totals = TotalsWritten()
    if settling.touched.parents:
        totals = write_totals(conn, store, settling.touched.parents, actor=req.actor.name)
    by_table: dict[str, list[dict[str, Any]]] = {}
    for (table, key), audit_id in settling.audited.items():
        if (table, key) in totals.values:
            by_table.setdefault(table, []).append({"a_id": audit_id, "p_key": key})
    for table, params in sorted(by_table.items()):
        conn.execute(settle_after(store.table(table), store.spec(table).key), params)
    accounts: list[RowEvent] = []
    for posted in settling.posted:
        row = {**posted.row, **totals.values.get((posted.table, posted.key), {})}
        accounts += make_postings(
            conn,
            store,
            posted.table,
            posted.plan,
            posted.held,
            row,
            actor=req.actor,
            now=req.now,
            numbers=posted.numbers,
        )
    queued = delivering = 0
    for told in settling.told:
        row = {**told.row, **totals.values.get((told.table, told.key), {})}
        queued += queue_messages(conn, store, told.table, told.held, row, req.actor, req.now)
        delivering += queue_deliveries(conn, store, told.table, told.held, row, req.actor, req.now)
    return totals, queued, delivering, accounts


def _hold_row(conn: Connection, store: Store, req: _Run) -> Row:
    """Step 1: the row locked FOR UPDATE NOWAIT (held elsewhere: WriteConflict) and read."""
    held = store.read_row(conn, req.table, req.key, lock=True)
    if held is None or any(held.get(c) != v for c, v in (req.expect or {}).items()):
        raise RowNotFound(
            f"no row {req.key!r} in {req.table}", {"table": req.table, "key": req.key}
        )
    return held


def _write_and_audit(
    conn: Connection,
    store: Store,
    req: _Run,
    changes: Mapping[str, Any],
    move: tuple[str | None, str | None],
) -> tuple[Row, int | None]:
    """Steps 5 and 7 in one round trip: the row written and its audit entry; the row after
    and, for a table with totals (whose entry `_settle` may rewrite), the entry's id. Other
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


def _state_after(spec: Table, creating: bool, move: MoveSpec | None) -> str | None:
    """The row's state after the write: `initial` for a new row, the move's `to` for a move."""
    if spec.states is None:
        return None
    if creating:
        return spec.states.initial
    return move.to if move is not None else None


@dataclass(frozen=True)
class _Verdict:
    """What the time rules found: the late verdict, its flag, and the tables read."""

    late: bool
    flag: str | None
    opens: datetime | None
    tables: Mapping[str, Any]


def _judge_time(
    conn: Connection,
    store: Store,
    spec: Table,
    req: _Run,
    held: Row | None,
    sent: Mapping[str, Any],
    move: MoveSpec | None,
    state_from: str | None,
    stamps: list[str],
) -> _Verdict:
    """Step 3: the timed rule's due, requires (time, settings), the late rule."""
    requires = move.requires if move is not None else None
    if held is None and spec.states is not None and spec.states.create is not None:
        requires = spec.states.create.requires
    late = (
        late_rule(spec.states, state_from, move.to)
        if spec.states is not None and move is not None and held is not None
        else None
    )
    stamp_shifts = [
        c.rules.stamp.set for c in spec.columns if c.ref in stamps and c.rules and c.rules.stamp
    ]
    reads = store.reads([requires, late, req.timed.at if req.timed else None, *stamp_shifts])
    if requires is None and late is None and req.timed is None and not reads.tables:
        return _Verdict(False, None, None, {})
    # A new row's moments read the values being written; a held row's, the row as stored.
    row = held if held is not None else sent
    ctx = store.moment_context(conn, req.table, row, reads, req.tables)
    if req.timed is not None:
        judge_due(req.timed, ctx, req.now)
    if requires is not None:
        judge_requires(requires, ctx, req.now, req.actor)
    verdict = judge_late(late, ctx, req.now, req.actor) if late is not None else LateVerdict(False)
    flag = late.flag if late is not None and late.mode == "flag" else None
    return _Verdict(verdict.late, flag, verdict.opens, ctx.tables)


def _judge_window_opened(req: _Run, verdict: _Verdict) -> None:
    """A late window that opened while the write was made: judged on stale time, so a conflict."""
    if req.commit_clock is None or verdict.late or verdict.opens is None:
        return
    if req.commit_clock() > verdict.opens:
        raise WriteConflict(
            "a late window opened while the write was made; try again",
            {"reason": "late-window-opened", "at": verdict.opens.isoformat()},
        )


def _database_refusal(
    store: Store, req: _Run, written: list[str], error: sa.exc.DBAPIError
) -> Exception:
    """The database's own refusal as the pipeline's code; anything else passes unchanged."""
    state = getattr(error.orig, "sqlstate", None) or ""
    diag = getattr(error.orig, "diag", None)
    where = {"table": req.table, "key": req.key}
    if state in ("55P03", "40001", "40P01"):
        return WriteConflict("another writer holds this row; try again", where)
    if state == "42501":
        columns = _unwritable(store, req, written)
        return ColumnNotWritable(
            "the connection's database role may not write "
            + (", ".join(columns) if columns else req.table),
            {**where, "columns": columns},
        )
    reasons = {"23502": "not-null", "23514": "check", "23503": "foreign-key", "23505": "unique"}
    if state in reasons or state.startswith("22"):
        reason = reasons.get(state, "type")
        details: dict[str, Any] = {**where, "reason": reason}
        for name in ("column_name", "constraint_name"):
            value = getattr(diag, name, None)
            if value:
                details[name.removesuffix("_name")] = value
        message = getattr(diag, "message_primary", None) or str(error.orig)
        return refused_value(store, req.table, details, message)
    return error


def _unwritable(store: Store, req: _Run, written: list[str]) -> list[str]:
    """The columns of the write the connection's role lacks the privilege for."""
    privilege = "INSERT" if req.key is None else "UPDATE"
    table = f"{store.app.schema_name}.{req.table}"
    names = sorted(set(written))
    if not names:
        return []
    with store.engine.connect() as conn:
        allowed = conn.execute(
            sa.select(
                *(
                    sa.func.has_column_privilege(table, name, privilege).label(name)
                    for name in names
                )
            )
        ).one()
    return [name for name, ok in zip(names, allowed, strict=True) if not ok]
