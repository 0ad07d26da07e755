"""Which listed moves a writer could make now: the write's own judgements, made dry.

A guest's view of a row lists "moves open to the public now" (docs/api.md). Each listed
move is judged by the functions the write pipeline calls (`judge_move` for roles and
undo, `judge_requires` for its time and settings, `judge_late` for a late rule in mode
refuse), on the row as stored and the settings, hours and linked rows they read, so the
list and the write never disagree. Nothing is locked or written.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from core.basics.actors import Actor
from core.basics.errors import AdminiumError
from core.manifest.model import Late, MoveSpec
from core.rules.moves import judge_move
from core.rules.time_rules import judge_late, judge_requires, late_rule
from core.store.store import Row, Store
from core.time.moments import MomentContext


def moves_open(store: Store, table: str, row: Row, actor: Actor, now: datetime) -> list[str]:
    """The states `actor` could move the row to at `now`, naming no state they saw."""
    spec = store.spec(table)
    if spec.states is None:
        return []
    state = row.get(spec.states.column)
    allowed: list[tuple[MoveSpec, Late | None]] = []
    for listed in spec.states.moves.get(state or "", []):
        to = listed if isinstance(listed, str) else listed.to
        try:
            move = judge_move(spec, state, to, None, actor)
        except AdminiumError:
            continue
        allowed.append((move, late_rule(spec.states, state, to)))
    if not allowed:
        return []
    ctx = _context(store, table, row, [p for move, late in allowed for p in (move.requires, late)])
    return [move.to for move, late in allowed if _in_time(move, late, ctx, now, actor)]


def _context(store: Store, table: str, row: Row, parts: Sequence[object]) -> MomentContext:
    """What the rules read besides the row, read as the write reads it."""
    reads = store.reads(list(parts))
    if not (reads.tables or reads.vias):
        return MomentContext(row=row, zone=store.zone)
    with store.engine.connect() as conn:
        return store.moment_context(conn, table, row, reads)


def _in_time(
    move: MoveSpec, late: Late | None, ctx: MomentContext, now: datetime, actor: Actor
) -> bool:
    """Whether the move's time, settings and late rule let it through now."""
    try:
        if move.requires is not None:
            judge_requires(move.requires, ctx, now, actor)
        if late is not None:
            judge_late(late, ctx, now, actor)
    except AdminiumError:
        return False
    return True
