"""Effects: a move that moves linked rows (WHAT-A-MOVE-SETS-OFF.md "Effects"), at step 6 of
the pipeline, in the write's transaction.

Each effect of the listed move finds its linked rows (with `table`: the rows of that table
whose `via` points at this row; without: the row this row's `via` points at) in a state
that lists a move to `to` that is no undo; others are left as they are. The rows are
locked FOR UPDATE NOWAIT in a fixed order (table name, then key): one held elsewhere is a
WriteConflict naming it. Each is then moved by the same pipeline as its table's declared
move (`MoveLinked`, handed in by `core.writes.pipeline`): judged as any move but for roles, with its
own stamps, codes, audit entry (the cause), emails, totals and effects, at most
`MAX_DEPTH` deep. A refusal keeps its code and names the linked row in `details.effect`.
An effect of a sample row moves sample rows only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.basics.errors import AdminiumError, PublicError, WriteConflict
from core.manifest.effect_rules import MAX_DEPTH, effect_target
from core.manifest.model import Effect, MoveSpec, Table
from core.store.sample_marks import is_sample_row
from core.store.schema import sample_marks
from core.store.store import Store

Row = Mapping[str, Any]


@dataclass(frozen=True)
class Cause:
    """The move that set an effect off: its row and the states it moved between."""

    table: str
    key: Any
    from_: str | None
    to: str | None

    def as_dict(self) -> dict[str, Any]:
        """The cause as the audit keeps it."""
        return {"table": self.table, "key": self.key, "from": self.from_, "to": self.to}


MoveLinked = Callable[[str, dict[str, Any], str, Cause], Any]
"""The pipeline's move of one linked row, held and read: (table, row, to, cause) -> its
WriteResult."""


def make_effects(
    conn: Connection,
    store: Store,
    move: MoveSpec | None,
    row: Row,
    cause: Cause,
    *,
    depth: int,
    move_linked: MoveLinked,
) -> list[Any]:
    """Step 6: every linked row the move's effects reach, moved; their WriteResults."""
    if move is None or not move.effects or cause.from_ == cause.to or depth >= MAX_DEPTH:
        return []
    sample = is_sample_row(conn, store.app.name, cause.table, cause.key)
    targets = [
        (effect_target(store.app.tables, cause.table, effect), effect) for effect in move.effects
    ]
    results: list[Any] = []
    for target, effect in sorted(targets, key=lambda found: found[0] or ""):
        if target is None:
            continue
        key_column = store.spec(target).key
        for linked in _lock_linked(conn, store, target, effect, row, cause, sample):
            try:
                results.append(move_linked(target, linked, effect.to, cause))
            except AdminiumError as error:
                _name_linked(error, target, linked[key_column])
                raise
    return results


def moving_states(spec: Table, to: str) -> list[str]:
    """The states of a table that list a move to `to` that is no undo (only those move)."""
    if spec.states is None:
        return []
    return sorted(
        source
        for source, moves in spec.states.moves.items()
        for move in moves
        if (move if isinstance(move, str) else move.to) == to
        and not (isinstance(move, MoveSpec) and move.undo)
    )


def _lock_linked(
    conn: Connection,
    store: Store,
    target: str,
    effect: Effect,
    row: Row,
    cause: Cause,
    sample: bool,
) -> list[dict[str, Any]]:
    """The linked rows to move, each locked and read as held, in key order; one held
    elsewhere is a WriteConflict naming it (found in the same statement: locked rows are
    skipped, then told apart from the rest)."""
    spec = store.spec(target)
    sources = moving_states(spec, effect.to)
    if not sources or spec.states is None:
        return []
    table = store.table(target)
    key = table.c[spec.key]
    if effect.table is not None:
        link = table.c[effect.via] == cause.key
    elif row.get(effect.via) is None:
        return []
    else:
        link = key == row[effect.via]
    found = sa.and_(link, table.c[spec.states.column].in_(sources))
    if sample:
        found = sa.and_(
            found,
            sa.exists().where(
                sample_marks.c.app == store.app.name,
                sample_marks.c.table_name == target,
                sample_marks.c.row_key == sa.cast(key, sa.Text),
            ),
        )
    locked = (
        sa.select(key.label("k"))
        .where(found)
        .order_by(key)
        .with_for_update(skip_locked=True)
        .cte("locked")
        .prefix_with("MATERIALIZED")
    )
    got = key.in_(sa.select(locked.c.k)).label("adminium got")
    query = sa.select(table, got).where(found).order_by(key)
    rows = [dict(linked) for linked in conn.execute(query).mappings()]
    held = [linked[spec.key] for linked in rows if not linked.pop("adminium got")]
    if held:
        raise WriteConflict(
            "another writer holds a row this move moves with it; try again",
            {"table": cause.table, "key": cause.key, "effect": {"table": target, "key": held[0]}},
        )
    return rows


def _name_linked(error: AdminiumError, table: str, key: Any) -> None:
    """A linked row's refusal keeps its code and names the row (the deepest, in a chain)."""
    named = {"table": table, "key": key}
    if isinstance(error, PublicError):
        error.params.setdefault("effect", named)
    else:
        error.details.setdefault("effect", named)
