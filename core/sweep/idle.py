"""Whether a minute has anything to do, asked in the sweep's opening statement.

Most minutes of most connections have nothing due. A sweep whose apps' minute work is
timed moves alone, over moments that read only the row's own columns (no settings or
hours read before the search, no holds to give back, no reminders to queue), asks in the
statement that takes its fence whether any row is a candidate of its search (each
stream's first page, `core.sweep.due_streams`, limited to one row) and reads the next due
moment beside it (`core.sweep.next_due`). When no row is a candidate and no row of its
apps is set aside, the search could find nothing: the minute is calm, and that same
statement writes its record closed and lets go of its fence (one statement an idle
minute, `core.sweep.records.open_fenced`). Any other sweep searches as before.

The check reads the apps' tables inside the connection's own statement, so an app whose
tables the statement cannot read (its manifest names what they lack) would stop the
whole minute: the sweep then opens again without the check, and the search finds whose
fault it is in each app's boundary (`core.sweep.faults`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from weakref import WeakKeyDictionary

import sqlalchemy as sa

from core.ledgers.holds import holding_tables
from core.store.store import Store, collect_tables
from core.sweep.due_streams import moment_parts, stream_of, timed_rules
from core.sweep.minute_work import has_reminders
from core.sweep.next_due import NextDueRead


@dataclass(frozen=True)
class IdleCheck:
    """What the opening statement asks: one EXISTS per stream (a candidate row), which tell
    whether the minute is calm (`core.sweep.records.open_fenced`), then the next-due reads
    read beside; their parameters at this sweep's `now`; how to read the next due moment."""

    candidates: tuple[Any, ...]
    reads: tuple[Any, ...]
    params: dict[str, Any]
    hint: NextDueRead

    def next_due(self, values: Sequence[Any]) -> datetime | None:
        """The next due moment from the values of `reads`."""
        if not self.hint.needs_read:
            return self.hint.answer()
        return self.hint.answer(tuple(values))


@dataclass(frozen=True)
class _Plan:
    """A set of stores' check, built once (its bounds are parameters): the EXISTS of each
    stream, then the next-due read of each (as `core.sweep.next_due.next_due_read` reads
    them, in its order), or none when the next due moment is `now` (unbounded)."""

    candidates: tuple[Any, ...]
    reads: tuple[Any, ...]
    unbounded: bool


_PLANS: WeakKeyDictionary[Store, dict[tuple[Store, ...], _Plan]] = WeakKeyDictionary()


def _plan(stores: tuple[Store, ...], now: datetime) -> _Plan:
    """The check's statement parts for these stores (their shape does not change with `now`:
    the streams of moments that read only the row are the same at every minute)."""
    plans = _PLANS.setdefault(stores[0], {})
    found = plans.get(stores)
    if found is not None:
        return found
    candidates: list[Any] = []
    reads: list[Any] = []
    unbounded = False
    for store in stores:
        for rule in timed_rules(store):
            table = store.table(rule.table)
            state = table.c[rule.state_column]
            for part in moment_parts(rule.timed.at):
                stream = stream_of(rule, part, {}, now)
                if stream is None:
                    if part.via is not None or (part.plus and part.minus):
                        unbounded = True  # as `next_due_read`: the connection goes first
                    continue
                if part.time is not None:
                    unbounded = True
                # The stream's first page (`core.sweep.due_streams._page`), one row of it.
                column = table.c[stream.column]
                bound = sa.bindparam(f"idle_bound_{len(candidates)}", type_=column.type)
                bounded = column <= bound if stream.inclusive else column < bound
                candidates.append(sa.exists().where(state == stream.state, bounded))
                hint = sa.bindparam(f"idle_hint_{len(reads)}", type_=column.type)
                reads.append(
                    sa.select(sa.func.min(column))
                    .where(state == stream.state, column > hint)
                    .scalar_subquery()
                )
    plans[stores] = found = _Plan(tuple(candidates), tuple(reads), unbounded)
    return found


_SEARCH_TABLES: WeakKeyDictionary[Store, frozenset[str] | None] = WeakKeyDictionary()
_CHECKED: WeakKeyDictionary[Store, bool] = WeakKeyDictionary()


def search_tables(store: Store) -> set[str] | None:
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


def checkable(store: Store) -> bool:
    """Whether the opening statement can tell that the app has nothing to do this minute:
    its minute work is timed moves alone, whose search reads no settings or hours first."""
    if store not in _CHECKED:
        _CHECKED[store] = (
            not holding_tables(store.app)
            and not has_reminders(store.app)
            and search_tables(store) == set()
        )
    return _CHECKED[store]


def idle_check(stores: Sequence[Store], now: datetime) -> IdleCheck | None:
    """The check of whether the stores have anything to do at `now`, for the opening
    statement; None when some app's minute needs more than it can read."""
    if not stores or not all(checkable(store) for store in stores):
        return None
    plan = _plan(tuple(stores), now)
    params: dict[str, Any] = {}
    floors: list[Any] = []
    for store in stores:
        for rule in timed_rules(store):
            for part in moment_parts(rule.timed.at):
                stream = stream_of(rule, part, {}, now)
                if stream is not None:
                    params[f"idle_bound_{len(floors)}"] = stream.bound
                    params[f"idle_hint_{len(floors)}"] = stream.hint_bound
                    floors.append(stream.floor)
    if plan.unbounded:
        return IdleCheck(plan.candidates, (), params, NextDueRead(now, unbounded=True))
    hint = NextDueRead(now, plan.reads, tuple(floors))
    reads = plan.reads if hint.needs_read else ()
    return IdleCheck(plan.candidates, reads, params, hint)
