"""Before a change of rules: what the clock will do differently, read at `now`, writing nothing.

A change is a new manifest for an app (its stores before and after), or new values for rows
of the tables moments read (the settings and hours tables before and after). Both sides are
read on the same rows at the same `now`, with the moment engine and the sweep's own SQL
prefilters (the streams of `core.sweep.due_streams`, `core.outbox.reminders`' candidates):
per side, the rows whose moment can fall before `now + horizon`. Rules, holds and reminders
the change leaves as they were (same manifest part, same settings and hours read) are not
read at all, so the cost grows with the rows the change can touch, not the table. The timed
moves and holds are read in `core.preview.due`, the reminders in `core.preview.reminders`,
on the sides and readers of `core.preview.changes`.

A row is **due at once** when its moment (or heldUntil) is at or before `now` after the
change and was not before: the next sweep moves it (gives its hold back). A reminder is
**sent at once** when its send time is at or before `now` after the change, its moment
still ahead, and it was not before. Nothing is written: the caller's connection is left
to roll back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy.engine import Connection

from core.basics.speech import ENGLISH, Speech
from core.preview.changes import Changed, Side
from core.preview.due import hold_changes, timed_changes
from core.preview.reminders import reminder_changes
from core.store.set_aside import RecordKey, SetAside
from core.time.words import horizon_words

HORIZON = timedelta(days=8)
"""How far past `now` a moment's change is listed: a week and a day, so a weekly hour's
change reaches the same weekday next week (those due at once are always read)."""
LISTED = 2000
"""At most this many changes are listed per app and kind; the counts stay exact."""


@dataclass
class Preview:
    """The differences a change makes at `now`, soonest new moment first."""

    now: datetime
    horizon: timedelta
    changes: list[Changed] = field(default_factory=list)
    more: bool = False
    """True when some app's list was cut at `LISTED` (the rows beyond are not counted)."""

    def of(self, effect: str, kind: str | None = None) -> list[Changed]:
        """The changes with that effect (of that kind, when given)."""
        return [
            c
            for c in self.changes
            if c.effect(self.now) == effect and (kind is None or c.kind == kind)
        ]

    def counts(self) -> dict[str, int]:
        """How many changes each effect has, timed moves and holds apart from reminders."""
        found: dict[str, int] = {}
        for change in self.changes:
            name = change.effect(self.now)
            if change.kind == "reminder":
                name = {"due-at-once": "sent-at-once", "no-longer-due": "no-longer-sent"}.get(
                    name, f"reminder-{name}"
                )
            found[name] = found.get(name, 0) + 1
        return found

    @property
    def due_at_once(self) -> list[Changed]:
        """The timed moves and holds the next sweep makes because of the change."""
        return [c for c in self.of("due-at-once") if c.kind != "reminder"]

    def summary(self, zone: ZoneInfo | None = None) -> str:
        """`3 rows due at once, 12 moments later, 0 earlier` (and reminders when any); the
        count decides the noun: `1 row due at once, 1 moment later, 0 earlier`. With the
        venue's zone, how far ahead it read: `… 0 earlier (read to Mon 5 Apr 10:30, 8 days)`:
        a moment moved past that is not counted."""
        words = self._counted()
        if zone is not None:
            words += f" ({self.horizon_words(zone)})"
        return words

    def horizon_words(self, zone: ZoneInfo, say: Speech = ENGLISH) -> str:
        """How far ahead it read, on the venue's clock: `read to Mon 5 Apr 10:30, 8 days`
        (in `say`'s language on a screen)."""
        return horizon_words(self.now, self.horizon, zone, say)

    def reach(self) -> datetime:
        """How far ahead it read: `now` plus the horizon."""
        return self.now + self.horizon

    def _counted(self) -> str:
        counts = self.counts()
        due, later = counts.get("due-at-once", 0), counts.get("later", 0)
        words = (
            f"{counted(due, 'row')} due at once, "
            f"{counted(later, 'moment')} later, {counts.get('earlier', 0)} earlier"
        )
        if counts.get("no-longer-due"):
            words += f", {counts['no-longer-due']} no longer due"
        if counts.get("set-aside"):
            words += f", {counts['set-aside']} set aside (passed by while their hour runs)"
        sent, unsent = counts.get("sent-at-once", 0), counts.get("no-longer-sent", 0)
        if sent or unsent:
            words += f"; {counted(sent, 'reminder')} sent at once, {unsent} no longer sent"
        return words


def counted(count: int, noun: str) -> str:
    """`1 row`, `0 rows`, `12 rows`: the count and its noun, one or many."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def compare(
    conn: Connection,
    sides: Mapping[str, tuple[Side, Side]],
    *,
    now: datetime,
    horizon: timedelta = HORIZON,
    records: Mapping[RecordKey, SetAside] | None = None,
) -> Preview:
    """The preview of a change, per app name its side before and after, read on `conn`
    (`records`: the set-aside records, `core.store.set_aside.read_set_aside`)."""
    if now.utcoffset() is None:
        raise ValueError("now must carry its offset")
    preview = Preview(now, horizon)
    for app, (old, new) in sorted(sides.items()):
        found: list[Changed] = []
        found += timed_changes(conn, app, old, new, now, horizon, records or {})
        found += hold_changes(conn, app, old, new, now, horizon)
        found += reminder_changes(conn, app, old, new, now, horizon)
        found.sort(key=lambda c: (c.new or c.old or now, c.kind, c.table, c.key))
        if len(found) > LISTED:
            preview.more = True
            # Those due at once are kept first: they are what the next minute does.
            due = [c for c in found if c.effect(now) == "due-at-once"]
            rest = [c for c in found if c.effect(now) != "due-at-once"]
            found = (due + rest)[:LISTED]
        preview.changes += found
    preview.changes.sort(key=lambda c: (c.new or c.old or now, c.app, c.kind, c.table, c.key))
    return preview
