"""The clock's log: what each minute's sweep of a connection did over the last day, read
from its records (`adminium.sweeps`), with the minutes no sweep ran (a stall, a worker
down) shown as gaps, and runs of quiet minutes said once.

Filtered by an app, a minute's counts are that app's own: its timed moves and give-backs
from the audit (the clock's entries stamped with the sweep's minute, as the record counts
them), its rows set aside from the refused attempts kept (`core.store.refused_log`), its
fault from the record's `faults`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.basics.actors import ActorKind
from core.basics.speech import ENGLISH, Speech
from core.store.refused_log import refusals_between
from core.store.schema import audit, sweeps
from core.time.words import day_time_words

WINDOW = timedelta(hours=24)
"""How far back the log reads."""
MINUTE = timedelta(minutes=1)


class LineKind(StrEnum):
    """What one line of the log says."""

    swept = "swept"
    """One minute's sweep that did something (or ended other than done)."""
    quiet = "quiet"
    """A run of minutes swept with nothing to do."""
    gap = "gap"
    """A run of minutes no sweep ran: skipped."""


@dataclass(frozen=True)
class Counts:
    """What a minute's sweep did (of one app, when the log is filtered)."""

    moved: int = 0
    set_aside: int = 0
    given_back: int = 0
    holds_set_aside: int = 0
    conflicts: int = 0

    @property
    def any(self) -> bool:
        """Whether the minute did (or refused) anything."""
        return any((self.moved, self.set_aside, self.given_back, self.holds_set_aside))


@dataclass(frozen=True)
class LogLine:
    """One line of the clock's log: a minute swept, or a run of quiet or skipped minutes
    (`first` to `last`, both included)."""

    kind: LineKind
    first: datetime
    last: datetime
    minutes: int = 1
    outcome: str = ""
    counts: Counts = field(default_factory=Counts)
    took_ms: float = 0.0
    error: str | None = None
    faults: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """The apps that faulted this minute: {error, during, left} each."""
    refused: Mapping[str, int] = field(default_factory=dict)
    """How many rows each refusal code set aside."""


@dataclass(frozen=True)
class ClockLog:
    """The last day of a connection's sweeps, the newest first."""

    since: datetime
    now: datetime
    lines: tuple[LogLine, ...]
    apps: tuple[str, ...] | None = None
    """The apps whose counts the lines are (None: the whole connection's records)."""

    @property
    def skipped(self) -> int:
        """How many minutes no sweep ran."""
        return sum(line.minutes for line in self.lines if line.kind is LineKind.gap)

    @property
    def swept(self) -> int:
        """How many minutes a sweep ran."""
        return sum(line.minutes for line in self.lines if line.kind is not LineKind.gap)


def minute_floor(instant: datetime) -> datetime:
    """The minute an instant falls in."""
    return instant.replace(second=0, microsecond=0)


def read_clock_log(
    conn: Connection, connection: str, *, now: datetime, apps: Sequence[str] | None = None
) -> ClockLog:
    """The connection's sweeps of the last day up to `now`, as log lines, the newest first
    (`apps`: those apps' counts and faults alone, not the whole record's)."""
    since = now - WINDOW
    records = _records(conn, connection, since, now)
    before = conn.execute(
        sa.select(sa.func.max(sweeps.c.at)).where(
            sweeps.c.connection == connection, sweeps.c.at <= since
        )
    ).scalar()
    if apps is not None:
        records = _of_apps(conn, records, apps, since, now)
    minutes = [minute_floor(r["at"]) for r in records]
    start = minute_floor(since) + MINUTE if before is not None else None
    lines = _lines(records, _gaps(minutes, start, minute_floor(now)))
    return ClockLog(since, now, tuple(reversed(lines)), tuple(apps) if apps is not None else None)


def _records(conn: Connection, connection: str, since: datetime, now: datetime) -> list[Any]:
    query = (
        sa.select(sweeps)
        .where(sweeps.c.connection == connection, sweeps.c.at > since, sweeps.c.at <= now)
        .order_by(sweeps.c.at, sweeps.c.id)
    )
    return [dict(row) for row in conn.execute(query).mappings()]


def _gaps(
    minutes: Sequence[datetime], start: datetime | None, now: datetime
) -> list[tuple[datetime, datetime]]:
    """The runs of minutes no sweep ran (first, last): between two swept minutes, from the
    window's start when a sweep ran before it, and up to the minute before `now` (the
    current minute's sweep may still be on its way)."""
    found: list[tuple[datetime, datetime]] = []
    previous = start - MINUTE if start is not None else None
    for minute in sorted(set(minutes)):
        if previous is not None and minute - previous > MINUTE:
            found.append((previous + MINUTE, minute - MINUTE))
        previous = minute
    end = now - MINUTE
    if previous is not None and end > previous:
        found.append((previous + MINUTE, end))
    return found


def _counts(record: Mapping[str, Any]) -> Counts:
    return Counts(
        record["moved"],
        record["set_aside"],
        record.get("given_back") or 0,
        record.get("holds_set_aside") or 0,
        record["conflicts"],
    )


def _quiet(record: Mapping[str, Any]) -> bool:
    """A minute swept with nothing to say: done, nothing moved, refused or faulted."""
    return (
        record["outcome"] == "done"
        and not _counts(record).any
        and not record["conflicts"]
        and not record.get("faults")
        and not record.get("error")
    )


def _lines(
    records: Sequence[Mapping[str, Any]], gaps: Sequence[tuple[datetime, datetime]]
) -> list[LogLine]:
    """Swept minutes, quiet runs and gaps, oldest first."""
    events: list[tuple[datetime, int, LogLine]] = []
    for first, last in gaps:
        count = int((last - first) / MINUTE) + 1
        events.append((first, 0, LogLine(LineKind.gap, first, last, count)))
    for record in records:
        minute = minute_floor(record["at"])
        line = LogLine(
            LineKind.quiet if _quiet(record) else LineKind.swept,
            minute,
            minute,
            1,
            record["outcome"],
            _counts(record),
            float(record["took_ms"] or 0.0),
            record.get("error"),
            dict(record.get("faults") or {}),
            dict(record.get("refused") or {}),
        )
        events.append((minute, 1, line))
    merged: list[LogLine] = []
    for _, _, line in sorted(events, key=lambda e: (e[0], e[1])):
        before = merged[-1] if merged else None
        if (
            before is not None
            and line.kind is LineKind.quiet
            and before.kind is LineKind.quiet
            and line.first - before.last <= MINUTE
        ):
            took = max(before.took_ms, line.took_ms)
            merged[-1] = replace(before, last=line.last, minutes=before.minutes + 1, took_ms=took)
        else:
            merged.append(line)
    return merged


def _of_apps(
    conn: Connection, records: list[Any], apps: Sequence[str], since: datetime, now: datetime
) -> list[Any]:
    """The records with some apps' own counts and faults: their moves and give-backs from
    the audit (the clock's entries at the record's minute, after the audit id it started
    at), their refusals from the refused attempts kept."""
    if not records:
        return records
    start = min((r["audit_from"] for r in records if r.get("audit_from") is not None), default=0)
    clock = ActorKind.clock.value
    moved = sa.case((audit.c.move_to.is_not(None), 1), else_=0)
    query = (
        sa.select(audit.c.at, sa.func.sum(moved), sa.func.count() - sa.func.sum(moved))
        .where(
            audit.c.id > start,
            audit.c.app.in_(list(apps)),
            audit.c.actor_kind == clock,
            audit.c.cause.is_(None),
            audit.c.at > since,
            audit.c.at <= now,
        )
        .group_by(audit.c.at)
    )
    by_minute = {at: (int(m or 0), int(g or 0)) for at, m, g in conn.execute(query)}
    refused: dict[datetime, list[int]] = {}
    codes: dict[datetime, dict[str, int]] = {}
    for attempt in refusals_between(conn, apps, since, now):
        counted = refused.setdefault(attempt.at, [0, 0])
        counted[0 if attempt.rule > 0 else 1] += 1
        if attempt.rule > 0:
            found = codes.setdefault(attempt.at, {})
            found[attempt.code] = found.get(attempt.code, 0) + 1
    shown = []
    for record in records:
        at = record["at"]
        mine, given = by_minute.get(at, (0, 0))
        aside, holds = refused.get(at, [0, 0])
        faults = {k: v for k, v in (record.get("faults") or {}).items() if k in apps}
        shown.append(
            {
                **record,
                "moved": mine,
                "given_back": given,
                "set_aside": aside,
                "holds_set_aside": holds,
                "conflicts": 0,
                "refused": codes.get(at, {}),
                "faults": faults or None,
            }
        )
    return shown


def outcome_words(outcome: str, say: Speech = ENGLISH) -> str:
    """A minute's outcome in words ("" for done)."""
    if outcome == "more":
        return say("more were due than a minute moves: the rest went at the next")
    if outcome == "deadline":
        return say("stopped at its deadline: the rest went at the next minute")
    if outcome == "fenced":
        return say("skipped: another sweep held the connection")
    if outcome == "fence-lost":
        return say("stopped: another sweep took the connection over")
    if outcome == "stopped":
        return say("stopped")
    return ""


def when_words(line: LogLine, now: datetime, zone: ZoneInfo, say: Speech = ENGLISH) -> str:
    """When a line was: `21:15`, a run `20:01–21:14` (a day before today's: `Mon 23:59`)."""
    first = day_time_words(line.first, now, zone, say)
    if line.last == line.first:
        return first
    return f"{first}–{day_time_words(line.last, now, zone, say)}"


def what_words(line: LogLine, say: Speech = ENGLISH) -> str:
    """What a line's minutes did, in words: "moved 3, set aside 1", "58 sweeps, nothing due",
    "skipped 7 min: no sweep ran"."""
    if line.kind is LineKind.gap:
        if line.minutes > 1:
            return say(
                "skipped %(count)s min: no sweep ran (the worker or the clock away, or the"
                " connection paused)",
                count=line.minutes,
            )
        return say("skipped: no sweep ran (the worker or the clock away, or the connection paused)")
    if line.kind is LineKind.quiet:
        if line.minutes > 1:
            return say("%(count)s sweeps, nothing due", count=line.minutes)
        return say("nothing due")
    counts = line.counts
    parts = [
        said
        for said, n in (
            (say("moved %(count)s", count=counts.moved), counts.moved),
            (say("set aside %(count)s", count=counts.set_aside), counts.set_aside),
            (say("gave back %(count)s", count=counts.given_back), counts.given_back),
            (
                say("holds set aside %(count)s", count=counts.holds_set_aside),
                counts.holds_set_aside,
            ),
        )
        if n
    ]
    if counts.conflicts:
        parts.append(
            say("%(count)s held by another writer, tried the next minute", count=counts.conflicts)
        )
    said = outcome_words(line.outcome, say)
    if said and line.error:
        said = f"{said}: {line.error}"
    return "; ".join([p for p in (", ".join(parts), said) if p]) or say("nothing due")
