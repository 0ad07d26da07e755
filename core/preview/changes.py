"""What a preview compares (`core.preview.preview`): a change's two sides, one row's changed
moment, and the readers its parts share: whether a manifest part reads the same on both
sides, the candidate keys the streams of `core.sweep.due_streams` find, rows by key, a
moment read on a row.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.store.store import Row, Store, collect_tables
from core.sweep.due_streams import HoldSource, Rule
from core.time.moments import MomentContext, MomentValueError, Tables, resolve_moment
from core.time.words import explain_moment

CHUNK = 1000
"""Keys read per statement."""


@dataclass(frozen=True)
class Changed:
    """One row whose moment the change moves: a timed move's (kind `timed`, `what` the
    move "placed → cancelled"), a hold's heldUntil (`hold`), or a reminder's send time
    (`reminder`, `what` "reminder 2"); old and new on the venue's clock (None: no time),
    and how each was read."""

    kind: str
    app: str
    table: str
    key: str
    what: str
    old: datetime | None
    new: datetime | None
    old_read: str = ""
    new_read: str = ""
    moment: datetime | None = None
    """A reminder's own moment (its row's `before.at`)."""
    aside: bool = False
    """Set aside (its refusal's hour runs): the sweep passes it by until then."""

    def effect(self, now: datetime) -> str:
        """What the change does to it at `now`: `due-at-once` (`set-aside` when its
        refusal's hour still runs: the sweep passes it by), `no-longer-due`, `still-due`
        (due before and after, at another moment), `later`, `earlier`, `no-time` (a time
        before, none after) or `new-time` (none before, a time after, not yet due)."""
        was = self.old is not None and self.old <= now
        will = self.new is not None and self.new <= now
        if was and will:
            return "still-due"
        if will and not was:
            return "set-aside" if self.aside else "due-at-once"
        if was and not will:
            return "no-longer-due"
        if self.old is None:
            return "new-time"
        if self.new is None:
            return "no-time"
        return "later" if self.new > self.old else "earlier"


@dataclass(frozen=True)
class Side:
    """One side of a change: an app's store (None: the app is not there) and the settings
    and hours tables its moments read."""

    store: Store | None
    tables: Tables


def _reads(node: Any) -> set[str]:
    found: set[str] = set()
    collect_tables(node, found)
    return found


def unchanged(
    old_part: Any, new_part: Any, old: Side, new: Side, extra: Iterable[str] = ()
) -> bool:
    """The same manifest part reading the same settings and hours rows on both sides."""
    if old_part != new_part:
        return False
    names = _reads(old_part) | set(extra)
    return all(old.tables.get(name) == new.tables.get(name) for name in names)


class Collect:
    """A finder for `core.sweep.due_streams.read_streams` that keeps every candidate's key,
    no limit."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        self.keys: dict[str, set[Any]] = {}

    def judge(self, rule: Rule | HoldSource, row: dict[str, Any]) -> None:
        self.keys.setdefault(rule.table, set()).add(row[rule.key_column])

    def cutoff(self) -> datetime | None:
        return None


def read_rows(conn: Connection, store: Store, table: str, keys: Iterable[Any]) -> list[Row]:
    """Rows of a table by key, read in chunks."""
    t = store.table(table)
    key = t.c[store.spec(table).key]
    wanted = sorted(keys, key=str)
    found: list[Row] = []
    for start in range(0, len(wanted), CHUNK):
        query = sa.select(t).where(key.in_(wanted[start : start + CHUNK]))
        found += [dict(row) for row in conn.execute(query).mappings()]
    return found


def read_on(moment: Any, row: Row, side: Side) -> tuple[datetime | None, str]:
    """A moment read on a row on one side, and its words."""
    assert side.store is not None
    ctx = MomentContext(row=row, zone=side.store.zone, tables=side.tables)
    try:
        reading = resolve_moment(moment, ctx)
    except MomentValueError as error:
        return None, f"unreadable ({error})"
    return (reading.at if reading else None), explain_moment(moment, ctx)


def near(old: datetime | None, new: datetime | None, reach: datetime) -> bool:
    """Whether either moment falls by `reach`."""
    return any(m is not None and m <= reach for m in (old, new))
