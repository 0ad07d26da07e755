"""Steps 1 to 4 of the write pipeline (DESIGN "The write pipeline"), judged on the row as
held: the row locked and read, the clock's `from`, the move listed (undo, roles), what it
waits for (`core.writes.timing`), the lock and the limits. A refusal is one AdminiumError and
the write's transaction rolls back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Connection

from core.basics.errors import RowNotDue, RowNotFound, StateChanged
from core.manifest.model import MoveSpec, Table
from core.rules.lock import judge_lock
from core.rules.moves import judge_move
from core.rules.stamps import firing_stamps
from core.setoff.limits import judge_limits
from core.store.store import Row, Store
from core.writes.request import Run
from core.writes.timing import TimeVerdict, judge_time


def hold_row(conn: Connection, store: Store, req: Run) -> Row:
    """Step 1: the row locked FOR UPDATE NOWAIT (held elsewhere: WriteConflict) and read."""
    held = store.read_row(conn, req.table, req.key, lock=True)
    if held is None or any(held.get(c) != v for c, v in (req.expect or {}).items()):
        raise RowNotFound(
            f"no row {req.key!r} in {req.table}", {"table": req.table, "key": req.key}
        )
    return held


@dataclass(frozen=True)
class Judged:
    """What steps 1 to 4 found of a write: its move, the states before and after, the row
    as the write leaves it, the timed rule's `set`, the stamps that fire, the time verdict."""

    move: MoveSpec | None
    state_from: str | None
    state_to: str | None
    after: Row
    timed_set: dict[str, Any]
    stamps: list[str]
    verdict: TimeVerdict


def judge_write(
    conn: Connection, store: Store, req: Run, held: Row | None, sent: Mapping[str, Any]
) -> Judged:
    """Steps 1 to 4 on the row as held: the clock's `from`, the move, what it waits for,
    the lock and the limits."""
    spec = store.spec(req.table)
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
    state_to = state_after(spec, held is None, move)
    after = {**(held or {}), **sent}
    if state_column is not None and state_to is not None:
        after[state_column] = state_to
    timed_set = dict(req.timed.set or {}) if req.timed is not None else {}
    after.update(timed_set)
    stamps = firing_stamps(spec, held, after)
    # 3. what the move waits for, read inside the write under its lock
    verdict = judge_time(
        conn,
        store,
        spec,
        req.table,
        held,
        sent,
        move,
        state_from,
        stamps,
        timed=req.timed,
        given=req.tables,
        now=req.now,
        actor=req.actor,
    )
    # 4. the lock (what `set`, stamps and codes write passes it); limits join here.
    # The database's own refusals (privileges, constraints) come from the write itself.
    judge_lock(spec, held, after, sent)
    judge_limits(conn, store, req.table, held, after, key=req.key, actor=req.actor, now=req.now)
    return Judged(move, state_from, state_to, after, timed_set, stamps, verdict)


def state_after(spec: Table, creating: bool, move: MoveSpec | None) -> str | None:
    """The row's state after the write: `initial` for a new row, the move's `to` for a move."""
    if spec.states is None:
        return None
    if creating:
        return spec.states.initial
    return move.to if move is not None else None
