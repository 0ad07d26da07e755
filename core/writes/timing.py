"""What a write waits for (step 3 of DESIGN "The write pipeline"), judged under its lock:
a timed rule's due, the move's (or the table's `create`) `requires`, its late rule; and,
just before commit, whether a late window opened while the write was made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Connection

from core.basics.actors import Actor
from core.basics.errors import WriteConflict
from core.manifest.model import MoveSpec, Table, Timed
from core.rules.time_rules import LateVerdict, judge_due, judge_late, judge_requires, late_rule
from core.store.store import Row, Store
from core.time.moments import Tables


@dataclass(frozen=True)
class TimeVerdict:
    """What the time rules found: the late verdict, its flag, and the tables read."""

    late: bool
    flag: str | None
    opens: datetime | None
    tables: Mapping[str, Any]


def judge_time(
    conn: Connection,
    store: Store,
    spec: Table,
    table: str,
    held: Row | None,
    sent: Mapping[str, Any],
    move: MoveSpec | None,
    state_from: str | None,
    stamps: list[str],
    *,
    timed: Timed | None,
    given: Tables | None,
    now: datetime,
    actor: Actor,
) -> TimeVerdict:
    """Step 3: the timed rule's due, requires (time, settings), the late rule (`given`: the
    settings and hours tables the clock already read)."""
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
    reads = store.reads([requires, late, timed.at if timed else None, *stamp_shifts])
    if requires is None and late is None and timed is None and not reads.tables:
        return TimeVerdict(False, None, None, {})
    # A new row's moments read the values being written; a held row's, the row as stored.
    row = held if held is not None else sent
    ctx = store.moment_context(conn, table, row, reads, given)
    if timed is not None:
        judge_due(timed, ctx, now)
    if requires is not None:
        judge_requires(requires, ctx, now, actor)
    verdict = judge_late(late, ctx, now, actor) if late is not None else LateVerdict(False)
    flag = late.flag if late is not None and late.mode == "flag" else None
    return TimeVerdict(verdict.late, flag, verdict.opens, ctx.tables)


def judge_window_opened(commit_clock: Callable[[], datetime] | None, verdict: TimeVerdict) -> None:
    """A late window that opened while the write was made: judged on stale time, so a conflict."""
    if commit_clock is None or verdict.late or verdict.opens is None:
        return
    if commit_clock() > verdict.opens:
        raise WriteConflict(
            "a late window opened while the write was made; try again",
            {"reason": "late-window-opened", "at": verdict.opens.isoformat()},
        )
