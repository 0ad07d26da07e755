"""Before a change of rules: what the clock will do differently, read at `now`, writing nothing.

A change is a new manifest for an app (its stores before and after), or new values for
rows of the tables moments read (the settings and hours tables before and after). Both
sides are read on the same rows at the same `now`, with the moment engine and the
sweep's own SQL prefilters (`core.due`'s streams, `core.reminders`' candidates): per
side, the rows whose moment can fall before `now + horizon`. Rules, holds and reminders
the change leaves as they were (same manifest part, same settings and hours read) are
not read at all, so the cost grows with the rows the change can touch, not the table.

A row is **due at once** when its moment (or heldUntil) is at or before `now` after the
change and was not before: the next sweep moves it (gives its hold back). A reminder is
**sent at once** when its send time is at or before `now` after the change, its moment
still ahead, and it was not before. Nothing is written: the caller's connection is left
to roll back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.clock import parse_wall_time
from core.due import HoldSource, Rule, _parts, _read_streams, _stream, hold_sources, timed_rules
from core.holds import held_until, is_held
from core.ledger_entries import PostingStatus, postings
from core.manifest.model import Lead, Reminder, SettingRef
from core.moment_words import explain_moment
from core.moments import MomentContext, MomentValueError, Tables, read_setting, resolve_moment
from core.outbox import producers, reminder_address
from core.reminders import _LEAD, _largest_lead, candidates_query, lead_hours, send_time
from core.set_aside import RecordKey, SetAside
from core.store import Row, Store, _collect_tables

HORIZON = timedelta(days=8)
"""How far past `now` a moment's change is listed: a week and a day, so a weekly hour's
change reaches the same weekday next week (those due at once are always read)."""
LISTED = 2000
"""At most this many changes are listed per app and kind; the counts stay exact."""
_CHUNK = 1000


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

    def summary(self) -> str:
        """`3 rows due at once, 12 moments later, 0 earlier` (and reminders when any); the
        count decides the noun: `1 row due at once, 1 moment later, 0 earlier`."""
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


@dataclass(frozen=True)
class Side:
    """One side of a change: an app's store (None: the app is not there) and the settings
    and hours tables its moments read."""

    store: Store | None
    tables: Tables


def compare(
    conn: Connection,
    sides: Mapping[str, tuple[Side, Side]],
    *,
    now: datetime,
    horizon: timedelta = HORIZON,
    records: Mapping[RecordKey, SetAside] | None = None,
) -> Preview:
    """The preview of a change, per app name its side before and after, read on `conn`
    (`records`: the set-aside records, `core.set_aside.read_set_aside`)."""
    if now.utcoffset() is None:
        raise ValueError("now must carry its offset")
    preview = Preview(now, horizon)
    for app, (old, new) in sorted(sides.items()):
        found: list[Changed] = []
        found += _timed(conn, app, old, new, now, horizon, records or {})
        found += _holds(conn, app, old, new, now, horizon)
        found += _reminders(conn, app, old, new, now, horizon)
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


# --- what a part reads ---------------------------------------------------------


def _reads(node: Any) -> set[str]:
    found: set[str] = set()
    _collect_tables(node, found)
    return found


def _unchanged(
    old_part: Any, new_part: Any, old: Side, new: Side, extra: Iterable[str] = ()
) -> bool:
    """The same manifest part reading the same settings and hours rows on both sides."""
    if old_part != new_part:
        return False
    names = _reads(old_part) | set(extra)
    return all(old.tables.get(name) == new.tables.get(name) for name in names)


class _Collect:
    """A finder for `core.due._read_streams` that keeps every candidate's key, no limit."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        self.keys: dict[str, set[Any]] = {}

    def judge(self, rule: Rule | HoldSource, row: dict[str, Any]) -> None:
        self.keys.setdefault(rule.table, set()).add(row[rule.key_column])

    def cutoff(self) -> datetime | None:
        return None


def _rows(conn: Connection, store: Store, table: str, keys: Iterable[Any]) -> list[Row]:
    """Rows of a table by key, read in chunks."""
    t = store.table(table)
    key = t.c[store.spec(table).key]
    wanted = sorted(keys, key=str)
    found: list[Row] = []
    for start in range(0, len(wanted), _CHUNK):
        query = sa.select(t).where(key.in_(wanted[start : start + _CHUNK]))
        found += [dict(row) for row in conn.execute(query).mappings()]
    return found


def _read(moment: Any, row: Row, side: Side) -> tuple[datetime | None, str]:
    """A moment read on a row on one side, and its words."""
    assert side.store is not None
    ctx = MomentContext(row=row, zone=side.store.zone, tables=side.tables)
    try:
        reading = resolve_moment(moment, ctx)
    except MomentValueError as error:
        return None, f"unreadable ({error})"
    return (reading.at if reading else None), explain_moment(moment, ctx)


# --- timed moves ---------------------------------------------------------------


def _rule_key(rules: Sequence[Rule]) -> dict[tuple[str, str, str, int], Rule]:
    """Rules by (table, from, to, n-th such): a replaced manifest may list them otherwise."""
    keyed: dict[tuple[str, str, str, int], Rule] = {}
    for rule in rules:
        n = 0
        while (rule.table, rule.timed.from_, rule.timed.to, n) in keyed:
            n += 1
        keyed[(rule.table, rule.timed.from_, rule.timed.to, n)] = rule
    return keyed


def _timed(
    conn: Connection,
    app: str,
    old: Side,
    new: Side,
    now: datetime,
    horizon: timedelta,
    records: Mapping[RecordKey, SetAside],
) -> list[Changed]:
    olds = _rule_key(timed_rules(old.store)) if old.store else {}
    news = _rule_key(timed_rules(new.store)) if new.store else {}
    reach = now + horizon
    pairs = []
    for name in sorted(set(olds) | set(news)):
        a, b = olds.get(name), news.get(name)
        if a is not None and b is not None and _unchanged(a.timed.at, b.timed.at, old, new):
            continue
        pairs.append((name, a, b))
    if not pairs:
        return []
    keys: dict[str, set[Any]] = {}
    sides = ((old, [p[1] for p in pairs]), (new, [p[2] for p in pairs]))
    for side, rules in sides:
        streams = [
            stream
            for rule in rules
            if rule is not None
            for part in _parts(rule.timed.at)
            if (stream := _stream(rule, part, side.tables, reach)) is not None
        ]
        collect = _Collect(reach)
        _read_streams(conn, streams, cast(Any, collect), page=1000)
        for table, found in collect.keys.items():
            keys.setdefault(table, set()).update(found)
    changed: list[Changed] = []
    for table, wanted in keys.items():
        store = new.store or old.store
        assert store is not None
        reader = old.store if old.store and table in old.store.app.tables else store
        for row in _rows(conn, reader, table, wanted):
            for (_, from_, to, _n), a, b in pairs:
                rule = a or b
                assert rule is not None
                if rule.table != table or row.get(rule.state_column) != from_:
                    continue
                was, was_read = _read(a.timed.at, row, old) if a else (None, "no such move")
                will, will_read = _read(b.timed.at, row, new) if b else (None, "no such move")
                if was == will or not _near(was, will, reach):
                    continue
                key = str(row[rule.key_column])
                record = records.get((app, table, key, b.number)) if b else None
                aside = will is not None and record is not None and record.holds(will, now)
                changed.append(
                    Changed(
                        "timed",
                        app,
                        table,
                        key,
                        f"{from_} → {to}",
                        was,
                        will,
                        was_read,
                        will_read,
                        aside=aside,
                    )
                )
    return changed


def _near(old: datetime | None, new: datetime | None, reach: datetime) -> bool:
    return any(m is not None and m <= reach for m in (old, new))


# --- holds ---------------------------------------------------------------------


def _holds(
    conn: Connection, app: str, old: Side, new: Side, now: datetime, horizon: timedelta
) -> list[Changed]:
    olds = {s.table: s for s in hold_sources(old.store)} if old.store else {}
    news = {s.table: s for s in hold_sources(new.store)} if new.store else {}
    reach = now + horizon
    pairs = []
    for table in sorted(set(olds) | set(news)):
        a, b = olds.get(table), news.get(table)
        if a is not None and b is not None and _unchanged(a.hold, b.hold, old, new):
            continue
        pairs.append((table, a, b))
    if not pairs:
        return []
    keys: dict[str, set[Any]] = {}
    hold_sides = ((old, [p[1] for p in pairs]), (new, [p[2] for p in pairs]))
    for side, sources in hold_sides:
        streams = [
            stream
            for source in sources
            if source is not None
            for state in source.hold.states
            for part in _parts(source.hold.until)
            if (stream := _stream(source, part, side.tables, reach, state)) is not None
        ]
        collect = _Collect(reach)
        _read_streams(conn, streams, cast(Any, collect), page=1000)
        for table, found in collect.keys.items():
            keys.setdefault(table, set()).update(found)
    changed: list[Changed] = []
    for table, a, b in pairs:
        source = a or b
        assert source is not None
        wanted = keys.get(table, set())
        if not wanted:
            continue
        held = _held_keys(conn, app, table, wanted)
        for row in _rows(conn, source.store, table, [k for k in wanted if str(k) in held]):
            for posting in sorted(held[str(row[source.key_column])]):
                was, was_read = _until(a, row, old)
                will, will_read = _until(b, row, new)
                if was == will or not _near(was, will, reach):
                    continue
                changed.append(
                    Changed(
                        "hold",
                        app,
                        table,
                        str(row[source.key_column]),
                        f"hold {posting}",
                        was,
                        will,
                        was_read,
                        will_read,
                    )
                )
    return changed


def _until(source: HoldSource | None, row: Row, side: Side) -> tuple[datetime | None, str]:
    """A row's heldUntil on one side (None when not held there), and its words."""
    if source is None or side.store is None:
        return None, "no hold"
    if not is_held(side.store.spec(source.table), row):
        return None, "not held"
    try:
        until = held_until(source.hold, row, side.store.zone, side.tables)
    except MomentValueError as error:
        return None, f"unreadable ({error})"
    ctx = MomentContext(row=row, zone=side.store.zone, tables=side.tables)
    return until, explain_moment(source.hold.until, ctx)


def _held_keys(conn: Connection, app: str, table: str, keys: Iterable[Any]) -> dict[str, set[int]]:
    """The rows (key as text) with a held posting record, and those postings' numbers."""
    wanted = sorted({str(k) for k in keys})
    found: dict[str, set[int]] = {}
    for start in range(0, len(wanted), _CHUNK):
        query = sa.select(postings.c.row_key, postings.c.posting).where(
            postings.c.app == app,
            postings.c.table_name == table,
            postings.c.row_key.in_(wanted[start : start + _CHUNK]),
            postings.c.status == PostingStatus.held.value,
        )
        for key, posting in conn.execute(query):
            found.setdefault(str(key), set()).add(int(posting))
    return found


# --- reminders -----------------------------------------------------------------


def _lead_settings(lead: Lead, tables: Tables) -> dict[str, Any]:
    """The settings a lead reads, from the side's tables (as `core.reminders` reads them)."""
    found: dict[str, Any] = {}
    if lead.fallback is not None:
        found["fallback"] = read_setting(
            SettingRef(table=lead.fallback.table, column=lead.fallback.column), tables
        )
    if lead.via is None:
        found["own"] = read_setting(SettingRef(table=lead.table, column=lead.column), tables)
    return found


def lead_tables(store: Store) -> set[str]:
    """The settings tables the app's reminders' leads read."""
    names: set[str] = set()
    for _, producer in producers(store.app):
        if isinstance(producer, Reminder):
            lead = producer.before.lead
            if lead.via is None:
                names.add(lead.table)
            if lead.fallback is not None:
                names.add(lead.fallback.table)
    return names & set(store.app.tables)


def _reminders(
    conn: Connection, app: str, old: Side, new: Side, now: datetime, horizon: timedelta
) -> list[Changed]:
    olds = (
        {n: p for n, p in producers(old.store.app) if isinstance(p, Reminder)} if old.store else {}
    )
    news = (
        {n: p for n, p in producers(new.store.app) if isinstance(p, Reminder)} if new.store else {}
    )
    changed: list[Changed] = []
    reach_hours = int(horizon.total_seconds() // 3600)
    for number in sorted(set(olds) | set(news)):
        a, b = olds.get(number), news.get(number)
        leads = set()
        for side, part in ((old, a), (new, b)):
            if part is not None and side.store is not None:
                leads |= {
                    t
                    for t in (
                        part.before.lead.table,
                        getattr(part.before.lead.fallback, "table", None),
                    )
                    if t
                }
        if a is not None and b is not None and _unchanged(a, b, old, new, leads):
            continue
        judged: list[dict[str, tuple[datetime | None, datetime, Row]]] = []
        largest = 0
        for side, part in ((old, a), (new, b)):
            if part is not None and side.store is not None:
                settings = _lead_settings(part.before.lead, side.tables)
                largest = max(
                    largest, _largest_lead(conn, side.store, part.before.lead, settings) or 0
                )
        for side, part in ((old, a), (new, b)):
            judged.append(
                _sends(conn, side, number, part, now, largest + reach_hours) if part else {}
            )
        reach = now + horizon
        for key in sorted(set(judged[0]) | set(judged[1])):
            was = judged[0].get(key)
            will = judged[1].get(key)
            old_at = was[0] if was else None
            new_at = will[0] if will else None
            if old_at == new_at or not _near(old_at, new_at, reach):
                continue
            moment = (will or was)[1]  # type: ignore[index]
            table = (b or a).before.table  # type: ignore[union-attr]
            changed.append(
                Changed(
                    "reminder",
                    app,
                    table,
                    key,
                    f"reminder {number}",
                    old_at,
                    new_at,
                    _send_words(was),
                    _send_words(will),
                    moment,
                )
            )
    return changed


def _send_words(judged: tuple[datetime | None, datetime, Row] | None) -> str:
    if judged is None:
        return "not reminded"
    at, moment, _ = judged
    return "no lead: not sent" if at is None else f"moment {moment.isoformat()} less its lead"


def _sends(
    conn: Connection, side: Side, number: int, reminder: Reminder, now: datetime, hours: int
) -> dict[str, tuple[datetime | None, datetime, Row]]:
    """Per row (key as text) still to be reminded within `hours`: its send time on that side
    (None: no lead, or none before its moment), its moment, the row."""
    store = side.store
    assert store is not None
    lead = reminder.before.lead
    settings = _lead_settings(lead, side.tables)
    at = parse_wall_time(lead.at) if lead.at else None
    query = candidates_query(store, number, reminder, now, hours, at).limit(None)
    key_column = store.spec(reminder.before.table).key
    address = reminder_address(store.app, reminder)
    found: dict[str, tuple[datetime | None, datetime, Row]] = {}
    for row in conn.execute(query).mappings():
        values = dict(row)
        to = values.get(address) if address else None
        if not isinstance(to, str) or not to.strip():
            continue  # no address: never queued (core.reminders)
        linked = values.pop(_LEAD, None) if lead.via is not None else settings.get("own")
        lead_h = lead_hours(lead, linked, settings.get("fallback"))
        moment = values[reminder.before.at]
        send = send_time(moment, lead_h, at, store.zone) if lead_h is not None else None
        if send is not None and send >= moment:
            send = None
        found[str(values[key_column])] = (send, moment, values)
    return found
