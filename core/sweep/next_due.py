"""A connection's next due moment: the hint that lets the tick sweep it before the rest.

A hint is a lower bound: the earliest moment after `now` at which something of the
connection may fall due (a timed move, a hold to give back). It only orders the
minute's sweeps; every connection is still swept each minute, so a hint that is too
early costs nothing but a place in the queue, and a row with no hint (written in plain
SQL since) still moves within its minute.

Beside a sweep's search for due rows (in its first page's statement, or in one of its own
when the search reads no stream), it reads, per stream of `core.sweep.due_streams` (a
rule's moment column, rows still in `from`), the first value past the stream's bound, and
the earliest stored heldUntil past `now` of each holding app; each
value's floor is the stream's own (the earliest moment that value can give). A stream
whose bound is not the moment itself (a time of day, a linked row's moment) gives
`now`: the connection goes first. Reminders give no hint (their drain sends them within
the minute whatever the order).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.ledgers.entries import PostingStatus
from core.ledgers.holds import holding_tables
from core.manifest.model import Moment
from core.store.schema import postings
from core.store.store import Row, Store, collect_tables
from core.sweep.due_streams import Beside, moment_parts, stream_of, timed_rules
from core.time.moments import MomentContext, MomentValueError, Tables, resolve_moment


@dataclass(frozen=True)
class NextDueRead:
    """How a connection's next due moment is read: the earliest value past each stream's
    bound (`columns`, scalar reads that may go out beside another statement, one round trip
    less) and each one's floor; or no read at all (`unbounded`: `now`; no column: None)."""

    now: datetime
    columns: tuple[Any, ...] = ()
    floors: tuple[Callable[[Any], datetime | None], ...] = ()
    unbounded: bool = False

    @property
    def needs_read(self) -> bool:
        """Whether its columns must be read to answer."""
        return not self.unbounded and bool(self.columns)

    def answer(self, values: Sequence[Any] = ()) -> datetime | None:
        """The next due moment from the values read of `columns`, in their order."""
        if self.unbounded:
            return self.now
        if not self.columns:
            return None
        found = [floor(v) for floor, v in zip(self.floors, values, strict=True) if v is not None]
        moments = [moment for moment in found if moment is not None]
        return max(self.now, min(moments)) if moments else None


def next_due_read(
    stores: Sequence[Store], now: datetime, tables: Mapping[str, Tables]
) -> NextDueRead:
    """What `next_due` reads, to be read by itself or beside the search for due rows."""
    floors: list[Callable[[Any], datetime | None]] = []
    columns: list[Any] = []
    for store in stores:
        for rule in timed_rules(store):
            for part in moment_parts(rule.timed.at):
                stream = stream_of(rule, part, tables[store.app.name], now)
                if stream is None and part.via is None and not (part.plus and part.minus):
                    continue  # a part that never answers
                if stream is None or part.time is not None:
                    # Not bounded by its own column (a linked row, a time of day): rows
                    # before its bound may fall due later today. First, to be safe.
                    return NextDueRead(now, unbounded=True)
                table = store.table(rule.table)
                column = table.c[stream.column]
                columns.append(
                    sa.select(sa.func.min(column))
                    .where(table.c[rule.state_column] == stream.state, column > stream.hint_bound)
                    .scalar_subquery()
                )
                floors.append(stream.floor)
        if holding_tables(store.app):
            columns.append(
                sa.select(sa.func.min(postings.c.held_until))
                .where(
                    postings.c.app == store.app.name,
                    postings.c.status == PostingStatus.held.value,
                    postings.c.held_until > now,
                )
                .scalar_subquery()
            )
            floors.append(_itself)
    return NextDueRead(now, tuple(columns), tuple(floors))


def _itself(value: datetime) -> datetime | None:
    """A stored heldUntil is the moment its hold falls due."""
    return value


def next_due(
    conn: Connection, stores: Sequence[Store], now: datetime, tables: Mapping[str, Tables]
) -> datetime | None:
    """The earliest moment after `now` something of the stores may fall due (a lower
    bound; `now` when it cannot be bounded); None when nothing waits. One statement."""
    return read_next_due(conn, next_due_read(stores, now, tables))


def read_next_due(
    conn: Connection, read: NextDueRead, beside: Beside | None = None
) -> datetime | None:
    """The next due moment `read` names: from the values read `beside` the search for due
    rows when they were (no statement of its own), else in one statement."""
    if not read.needs_read:
        return read.answer()
    values = beside.values if beside is not None else None
    if values is None:
        values = tuple(conn.execute(sa.select(*read.columns)).one())
    return read.answer(values)


def row_due(store: Store, table: str, row: Row, now: datetime) -> datetime | None:
    """When a row just written falls due by its table's timed moves from its state: the
    moment read on the row alone, `now` when it reads more than the row (settings, hours,
    a linked row: the sweep reads those), None when no timed move leaves its state."""
    spec = store.spec(table)
    if spec.states is None:
        return None
    state = row.get(spec.states.column)
    found: list[datetime] = []
    for timed in spec.states.timed or ():
        if timed.from_ != state:
            continue
        if not _reads_row_only(timed.at):
            return now
        try:
            reading = resolve_moment(timed.at, MomentContext(row=row, zone=store.zone))
        except (MomentValueError, LookupError):
            return now
        if reading is not None:
            found.append(reading.at)
    return min(found) if found else None


def _reads_row_only(moment: Moment) -> bool:
    """Whether a moment reads only its row's own columns (no linked row, setting, hours)."""
    tables: set[str] = set()
    collect_tables(moment, tables)
    return not tables and all(part.via is None for part in moment_parts(moment))
