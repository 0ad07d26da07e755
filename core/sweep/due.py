"""Which rows a timed move is due for: candidates read through the streams of each timed
rule (`core.sweep.due_streams`), then each candidate's moment read exactly with the moment
engine, on the venue's clock; a row set aside is passed by while its hour runs."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Connection

from core.store.set_aside import RecordKey, SetAside
from core.store.store import Store
from core.sweep.due_streams import (
    Beside,
    HoldSource,
    Rule,
    moment_parts,
    read_streams,
    stream_of,
    timed_rules,
)
from core.time.moments import MomentContext, MomentValueError, Tables, resolve_moment

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Due:
    """A row whose timed move is due: its rule, key, moment, and its set-aside record if any."""

    rule: Rule
    key: Any
    moment: datetime
    record: SetAside | None = None

    @property
    def record_key(self) -> RecordKey:
        """How its set-aside record is keyed."""
        return (self.rule.app, self.rule.table, str(self.key), self.rule.number)


@dataclass(frozen=True)
class DueRows:
    """The due rows, longest-due first, up to the limit; those passed by; whether more wait."""

    due: tuple[Due, ...]
    passed_by: tuple[Due, ...]
    more: bool


# --- streams --------------------------------------------------------------------


# --- judging --------------------------------------------------------------------


@dataclass
class _Finder:
    """The state of one search for due rows across every rule of a connection."""

    now: datetime
    limit: int
    records: dict[RecordKey, SetAside]
    tables: dict[str, Tables]
    due: dict[tuple[int, Any], Due]
    passed_by: dict[tuple[int, Any], Due]

    def judge(self, rule: Rule | HoldSource, row: dict[str, Any]) -> None:
        """Read a candidate's moment exactly; keep it as due, or as passed by."""
        assert isinstance(rule, Rule)
        seen = (id(rule), row[rule.key_column])
        if seen in self.due or seen in self.passed_by:
            return
        ctx = MomentContext(row=row, zone=rule.store.zone, tables=self.tables[rule.app])
        try:
            reading = resolve_moment(rule.timed.at, ctx)
        except MomentValueError as error:
            log.warning(
                "timed move skipped: %s.%s key=%s rule=%s: %s",
                rule.app,
                rule.table,
                row[rule.key_column],
                rule.number,
                error,
            )
            return
        if reading is None or reading.at > self.now:
            return
        found = Due(rule, row[rule.key_column], reading.at)
        record = self.records.get(found.record_key)
        if record is not None:
            found = Due(rule, found.key, found.moment, record)
            # Passed by while its hour runs, unless re-dated since it was set aside.
            if record.holds(reading.at, self.now):
                self.passed_by[seen] = found
                return
        self.due[seen] = found

    def cutoff(self) -> datetime | None:
        """The moment of the last row that fits under the limit, once the limit is reached."""
        if len(self.due) < self.limit:
            return None
        return sorted(d.moment for d in self.due.values())[self.limit - 1]


def find_due(
    conn: Connection,
    stores: Sequence[Store],
    *,
    now: datetime,
    limit: int,
    records: dict[RecordKey, SetAside] | None = None,
    tables: Mapping[str, Tables] | None = None,
    beside: Beside | None = None,
) -> DueRows:
    """The rows due at `now` across every timed rule of the stores, longest-due first;
    `beside`'s columns read in the search's first statement (`core.sweep.due_streams`)."""
    if now.utcoffset() is None:
        raise ValueError("now must carry its offset")
    if tables is None:
        tables = {s.app.name: s.read_clock_tables(conn) for s in stores}
    finder = _Finder(now, limit, dict(records or {}), dict(tables), {}, {})
    streams = [
        stream
        for store in stores
        for rule in timed_rules(store)
        for part in moment_parts(rule.timed.at)
        if (stream := stream_of(rule, part, tables[store.app.name], now)) is not None
    ]
    more = read_streams(conn, streams, finder, page=max(limit, 50), beside=beside)
    ordered = sorted(finder.due.values(), key=_order)
    return DueRows(
        tuple(ordered[:limit]),
        tuple(sorted(finder.passed_by.values(), key=_order)),
        more or len(ordered) > limit,
    )


def merge_due(parts: Sequence[DueRows], limit: int) -> DueRows:
    """Searches of some apps each (`find_due` of one store) as the one search of them all:
    longest-due first, at most `limit`; more when any had more, or together they do."""
    ordered = sorted((due for part in parts for due in part.due), key=_order)
    passed = sorted((due for part in parts for due in part.passed_by), key=_order)
    more = any(part.more for part in parts) or len(ordered) > limit
    return DueRows(tuple(ordered[:limit]), tuple(passed), more)


def _order(due: Due) -> tuple[Any, ...]:
    """Longest-due first; ties in a stable order."""
    return (due.moment, due.rule.app, due.rule.table, due.rule.number, str(due.key))
