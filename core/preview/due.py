"""A preview's timed moves and holds (`core.preview.preview`): per side, the rows the
sweep's own SQL prefilters (the streams of `core.sweep.due_streams`) find near due, each
read on both sides; a rule or hold the change leaves as it was (same manifest part, same
settings and hours read) is not read at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.ledgers.entries import PostingStatus
from core.ledgers.holds import held_until, is_held
from core.preview.changes import (
    CHUNK,
    Changed,
    Collect,
    Side,
    near,
    read_on,
    read_rows,
    unchanged,
)
from core.store.schema import postings
from core.store.set_aside import RecordKey, SetAside
from core.store.store import Row
from core.sweep.due_streams import (
    HoldSource,
    Rule,
    hold_sources,
    moment_parts,
    read_streams,
    stream_of,
    timed_rules,
)
from core.time.moments import MomentContext, MomentValueError
from core.time.words import explain_moment

_RuleName = tuple[str, str, str, int]
"""A timed rule by (table, from, to, n-th such)."""
_RulePair = tuple[_RuleName, Rule | None, Rule | None]
"""A timed rule before and after the change (None: not there on that side)."""


def _rule_key(rules: Sequence[Rule]) -> dict[_RuleName, Rule]:
    """Rules by (table, from, to, n-th such): a replaced manifest may list them otherwise."""
    keyed: dict[_RuleName, Rule] = {}
    for rule in rules:
        n = 0
        while (rule.table, rule.timed.from_, rule.timed.to, n) in keyed:
            n += 1
        keyed[(rule.table, rule.timed.from_, rule.timed.to, n)] = rule
    return keyed


def timed_changes(
    conn: Connection,
    app: str,
    old: Side,
    new: Side,
    now: datetime,
    horizon: timedelta,
    records: Mapping[RecordKey, SetAside],
) -> list[Changed]:
    """The rows whose timed move's moment the change moves, within `now + horizon`."""
    olds = _rule_key(timed_rules(old.store)) if old.store else {}
    news = _rule_key(timed_rules(new.store)) if new.store else {}
    reach = now + horizon
    pairs: list[_RulePair] = []
    for name in sorted(set(olds) | set(news)):
        a, b = olds.get(name), news.get(name)
        if a is not None and b is not None and unchanged(a.timed.at, b.timed.at, old, new):
            continue
        pairs.append((name, a, b))
    if not pairs:
        return []
    changed: list[Changed] = []
    for table, wanted in _timed_keys(conn, old, new, pairs, reach).items():
        # The rows as the new side's tables hold them (a preview of a migration reads
        # the migrated tables: a new column's default, a brand-new moment).
        reader = new.store if new.store and table in new.store.app.tables else old.store
        assert reader is not None
        for row in read_rows(conn, reader, table, wanted):
            changed += _timed_row(app, table, row, pairs, old, new, now, reach, records)
    return changed


def _timed_keys(
    conn: Connection, old: Side, new: Side, pairs: list[_RulePair], reach: datetime
) -> dict[str, set[Any]]:
    """The keys, per table, of the rows either side's streams find due by `reach`."""
    keys: dict[str, set[Any]] = {}
    sides = ((old, [p[1] for p in pairs]), (new, [p[2] for p in pairs]))
    for side, rules in sides:
        streams = [
            stream
            for rule in rules
            if rule is not None
            for part in moment_parts(rule.timed.at)
            if (stream := stream_of(rule, part, side.tables, reach)) is not None
        ]
        collect = Collect(reach)
        read_streams(conn, streams, cast(Any, collect), page=1000)
        for table, found in collect.keys.items():
            keys.setdefault(table, set()).update(found)
    return keys


def _timed_row(
    app: str,
    table: str,
    row: Row,
    pairs: list[_RulePair],
    old: Side,
    new: Side,
    now: datetime,
    reach: datetime,
    records: Mapping[RecordKey, SetAside],
) -> list[Changed]:
    """One row's timed moves whose moment the change moves."""
    changed: list[Changed] = []
    for (_, from_, to, _n), a, b in pairs:
        rule = a or b
        assert rule is not None
        if rule.table != table or row.get(rule.state_column) != from_:
            continue
        was, was_read = read_on(a.timed.at, row, old) if a else (None, "no such move")
        will, will_read = read_on(b.timed.at, row, new) if b else (None, "no such move")
        if was == will or not near(was, will, reach):
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


def hold_changes(
    conn: Connection, app: str, old: Side, new: Side, now: datetime, horizon: timedelta
) -> list[Changed]:
    """The held rows whose heldUntil the change moves, within `now + horizon`."""
    olds = {s.table: s for s in hold_sources(old.store)} if old.store else {}
    news = {s.table: s for s in hold_sources(new.store)} if new.store else {}
    reach = now + horizon
    pairs = []
    for table in sorted(set(olds) | set(news)):
        a, b = olds.get(table), news.get(table)
        if a is not None and b is not None and unchanged(a.hold, b.hold, old, new):
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
            for part in moment_parts(source.hold.until)
            if (stream := stream_of(source, part, side.tables, reach, state)) is not None
        ]
        collect = Collect(reach)
        read_streams(conn, streams, cast(Any, collect), page=1000)
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
        reader = (b or source).store
        for row in read_rows(conn, reader, table, [k for k in wanted if str(k) in held]):
            for posting in sorted(held[str(row[source.key_column])]):
                was, was_read = _until(a, row, old)
                will, will_read = _until(b, row, new)
                if was == will or not near(was, will, reach):
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
    for start in range(0, len(wanted), CHUNK):
        query = sa.select(postings.c.row_key, postings.c.posting).where(
            postings.c.app == app,
            postings.c.table_name == table,
            postings.c.row_key.in_(wanted[start : start + CHUNK]),
            postings.c.status == PostingStatus.held.value,
        )
        for key, posting in conn.execute(query):
            found.setdefault(str(key), set()).add(int(posting))
    return found
