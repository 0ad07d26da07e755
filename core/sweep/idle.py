"""Whether a minute has anything to do, asked in the sweep's opening statement.

Most minutes of most connections have nothing due. A sweep whose apps' minute work is
timed moves alone, over moments that read only the row's own columns (no settings or
hours read before the search, no holds to give back, no reminders to queue), asks in the
statement that takes its fence whether any row is a candidate of its search (each
stream's first page, `core.sweep.due_streams`, limited to one row) and reads the next due
moment beside it (`core.sweep.next_due`). When no row is a candidate and no row of its
apps is set aside, the search could find nothing: the sweep skips it and closes its
record (two statements an idle minute, not three). Any other sweep searches as before.

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
from core.sweep.next_due import NextDueRead, next_due_read


@dataclass(frozen=True)
class IdleCheck:
    """The opening statement's extra columns: one EXISTS per stream (a candidate row), then
    the next-due reads; and how to read their values."""

    columns: tuple[Any, ...]
    streams: int
    hint: NextDueRead

    def idle(self, values: Sequence[Any]) -> bool:
        """Whether no stream has a candidate row (the search would find nothing)."""
        return not any(values[: self.streams])

    def next_due(self, values: Sequence[Any]) -> datetime | None:
        """The next due moment from the values read beside."""
        if not self.hint.needs_read:
            return self.hint.answer()
        return self.hint.answer(tuple(values[self.streams :]))


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
    candidates: list[Any] = []
    for store in stores:
        for rule in timed_rules(store):
            for part in moment_parts(rule.timed.at):
                stream = stream_of(rule, part, {}, now)
                if stream is None:
                    continue
                # The stream's first page (`core.sweep.due_streams._page`), one row of it.
                table = store.table(rule.table)
                column = table.c[stream.column]
                bounded = column <= stream.bound if stream.inclusive else column < stream.bound
                candidates.append(
                    sa.exists().where(table.c[rule.state_column] == stream.state, bounded)
                )
    hint = next_due_read(stores, now, {store.app.name: {} for store in stores})
    reads = hint.columns if hint.needs_read else ()
    return IdleCheck(tuple(candidates) + tuple(reads), len(candidates), hint)
