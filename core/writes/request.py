"""What a writer asks of the write pipeline (`WriteRequest`), and the write as the pipeline
runs it (`Run`): the request with its key as the key column's type and what only the
clock and effects pass. Every step of `core.writes.pipeline` reads its write from here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from core.basics.actors import Actor
from core.manifest.model import Timed
from core.setoff.effects import Cause
from core.store.store import Row
from core.time.moments import Tables
from core.writes.settling import Settling


@dataclass(frozen=True)
class WriteRequest:
    """What a writer asks of one row: who, when, which row (none for a new one), and what.

    `move_to` names a listed move; `seen_state` the state the writer saw (an undo names it;
    a change that moves nothing is refused once the row has left it). `commit_clock`, when
    given, is read just before commit: a late window that opened while the write was made
    is a WriteConflict. `expect` names values the held row must still hold (a guest's link
    code): otherwise the row is not found.
    """

    table: str
    actor: Actor
    now: datetime
    key: Any = None
    values: Mapping[str, Any] = field(default_factory=dict)
    move_to: str | None = None
    seen_state: str | None = None
    commit_clock: Callable[[], datetime] | None = None
    expect: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Run(WriteRequest):
    """A write as the pipeline runs it: the request with its key as the key column's type,
    and what only the clock passes: its rule and the settings and hours tables it read.
    A linked row's move (an effect) carries its cause, its depth and the outermost write's
    `Settling`."""

    timed: Timed | None = None
    tables: Tables | None = None
    cause: Cause | None = None
    depth: int = 0
    settling: Settling | None = None
    held: Row | None = None
