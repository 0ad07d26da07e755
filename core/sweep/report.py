"""What a minute's sweep of a connection did: how it ended (`SweepOutcome`), the rows it
moved, set aside, left alone or left for next minute, the holds it gave back, what its moves
set off besides (`Fallout`), and the record it keeps in `adminium.sweeps`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from core.ledgers.entries import PostingRecord
from core.ledgers.give_back import GiveBack
from core.store.set_aside import (
    refusal_words,
)
from core.sweep.due import Due
from core.sweep.faults import AppBoundaries, AppFault


class SweepOutcome(StrEnum):
    """How a minute's sweep ended."""

    done = "done"
    more = "more"
    deadline = "deadline"
    fenced = "fenced"
    fence_lost = "fence-lost"
    stopped = "stopped"
    paused = "paused"


@dataclass(frozen=True)
class Refused:
    """A due row whose move was refused, with the refusal's code, message and details."""

    due: Due
    code: str
    message: str
    details: Mapping[str, Any] | None = None

    @property
    def words(self) -> str:
        """The refusal's words, naming a linked row that refused ("refused by parts 3012: …")."""
        return refusal_words(self.message, self.details)


@dataclass
class Fallout:
    """What the minute's timed moves set off besides their rows: linked rows their effects
    moved, emails and webhook deliveries they queued (reminders are the report's own), and,
    for a row tried next minute because another writer held a linked row, that row."""

    linked: int = 0
    emails: int = 0
    deliveries: int = 0
    held: dict[tuple[str, str, str], str] = field(default_factory=dict)
    """(app, table, key) of a due row -> the linked row held elsewhere ("desks 3")."""


@dataclass(frozen=True)
class SweepReport:
    """What one minute's sweep of a connection did."""

    connection: str
    at: datetime
    outcome: SweepOutcome
    moved: tuple[Due, ...] = ()
    set_aside: tuple[Refused, ...] = ()
    conflicts: tuple[Due, ...] = ()
    left_alone: tuple[Due, ...] = ()
    passed_by: tuple[Due, ...] = ()
    left: tuple[Due, ...] = ()
    error: str | None = None
    took_ms: float = 0.0
    dry_run: bool = False
    given_back: tuple[GiveBack, ...] = ()
    holds_refused: tuple[tuple[PostingRecord, str], ...] = ()
    holds_busy: tuple[PostingRecord, ...] = ()
    reminders: int = 0
    """How many reminders the sweep queued (their drain is enqueued after it)."""
    next_due: datetime | None = None
    """The earliest moment after `at` something may fall due (`core.sweep.next_due`: a lower
    bound, the tick's hint); None when nothing waits or the search did not finish."""
    fallout: Fallout = field(default_factory=Fallout)
    faults: tuple[AppFault, ...] = ()
    """The apps of the connection that faulted this minute (`core.sweep.faults`): each was
    left alone from its fault on, the others swept."""
    fingerprints: Mapping[str, str] = field(default_factory=dict)
    """Each app's tables' catalogue fingerprint as the sweep opened (`core.agreement`): the
    operations layer compares an app with its tables again only when it moved."""

    def refused(self) -> dict[str, int]:
        """How many rows each refusal code set aside."""
        counts: dict[str, int] = {}
        for refused in self.set_aside:
            counts[refused.code] = counts.get(refused.code, 0) + 1
        return counts

    def record(self) -> dict[str, Any]:
        """The minute's record as stored in `adminium.sweeps`."""
        return {
            "connection": self.connection,
            "at": self.at,
            "outcome": self.outcome.value,
            "moved": len(self.moved),
            "set_aside": len(self.set_aside),
            "conflicts": len(self.conflicts),
            "passed_by": len(self.passed_by),
            "left_alone": len(self.left_alone),
            "refused": self.refused(),
            "error": self.error,
            "took_ms": self.took_ms,
            "given_back": len(self.given_back),
            "holds_set_aside": len(self.holds_refused),
            "holds_busy": len(self.holds_busy),
            # Only when an app faulted: a database not yet upgraded still takes the rest.
            **({"faults": {f.app: f.record() for f in self.faults}} if self.faults else {}),
        }


@dataclass
class SweepRun:
    """One sweep as it runs."""

    connection: str
    now: datetime
    dry_run: bool
    clock: Callable[[], float]
    started: float
    moved: list[Due] = field(default_factory=list)
    set_aside: list[Refused] = field(default_factory=list)
    conflicts: list[Due] = field(default_factory=list)
    left_alone: list[Due] = field(default_factory=list)
    passed_by: tuple[Due, ...] = ()
    left: tuple[Due, ...] = ()
    given_back: list[GiveBack] = field(default_factory=list)
    holds_refused: list[tuple[PostingRecord, str]] = field(default_factory=list)
    holds_busy: list[PostingRecord] = field(default_factory=list)
    reminders: int = 0
    next_due: datetime | None = None
    fallout: Fallout = field(default_factory=Fallout)
    fingerprints: dict[str, str] = field(default_factory=dict)
    apps: AppBoundaries = field(init=False)
    """The boundary each app of the connection is swept in, and the apps that faulted."""

    def __post_init__(self) -> None:
        self.apps = AppBoundaries(self.connection)

    def report(self, outcome: SweepOutcome, error: str | None = None) -> SweepReport:
        took = (self.clock() - self.started) * 1000.0
        return SweepReport(
            self.connection,
            self.now,
            outcome,
            tuple(self.moved),
            tuple(self.set_aside),
            tuple(self.conflicts),
            tuple(self.left_alone),
            self.passed_by,
            self.left,
            error,
            round(took, 3),
            self.dry_run,
            tuple(self.given_back),
            tuple(self.holds_refused),
            tuple(self.holds_busy),
            self.reminders,
            # An app that faulted may have rows due: nothing is known past now.
            next_due=self.now if self.apps.faults else self.next_due,
            fallout=replace(self.fallout, held=dict(self.fallout.held)),
            faults=tuple(self.apps.faults.values()),
            fingerprints=dict(self.fingerprints),
        )
