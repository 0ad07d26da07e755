"""What the clock will do to rows: the timed move a row waits on, pending moves, set-aside rows.

Reads only (the screens and the console show these); every write goes through the one
pipeline, `core.writes.pipeline`. The due rows come from `core.sweep.due.find_due` (the sweep's
own search), looked a horizon ahead; "set aside" is `core.store.set_aside`'s one rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.basics.speech import ENGLISH, Speech
from core.manifest.model import Moment
from core.store.set_aside import SetAside, read_set_aside
from core.store.store import Row, Store
from core.sweep.due import find_due
from core.sweep.due_streams import Rule, moment_parts, timed_rules
from core.time.moments import MomentContext, MomentValueError, Reading, Tables, resolve_moment
from core.time.words import explain_moment, why_no_time

PENDING_HORIZON = timedelta(days=7)
"""How far ahead the pending list looks."""
PENDING_LIMIT = 200
"""How many pending timed moves the list shows at most."""
NO_TIME_LIMIT = 50
"""How many rows waiting for no time the pending list shows at most."""


@dataclass(frozen=True)
class Waiting:
    """The timed move a row waits on: its rule, the moment, and which fallback gave it."""

    rule: Rule
    reading: Reading
    words: str = ""
    """How the moment was read, in words (`core.time.words`)."""

    @property
    def source(self) -> str:
        """Which part of the moment answered, in words."""
        if self.reading.fallback == 0:
            return f"its own column {self.rule.timed.at.column}"
        fallback = (self.rule.timed.at.or_ or [])[self.reading.fallback - 1]
        return f"fallback {self.reading.fallback} (column {fallback.column})"


@dataclass(frozen=True)
class Aside:
    """A row set aside now: its rule, the refusal (code, words), when it is tried again."""

    rule: Rule
    key: str
    code: str
    message: str
    moment: datetime
    until: datetime
    row: Row
    record: SetAside
    fallback: int = 0
    """Which part of the moment answered (0 its own column, n its n-th fallback)."""

    @property
    def dom_id(self) -> str:
        """The list item's stable id."""
        return f"aside-{self.rule.table}-{self.key}"


@dataclass(frozen=True)
class Pending:
    """A timed move still to come (or due and not made yet): its rule, row and moment."""

    rule: Rule
    key: Any
    moment: datetime
    record: SetAside | None
    set_aside: bool
    words: str = ""
    """How its moment was read, in words (`core.time.words`)."""


def rules_of(store: Store, table: str) -> list[Rule]:
    """The timed rules of one table."""
    return [rule for rule in timed_rules(store) if rule.table == table]


def waiting_on(
    rules: Sequence[Rule], row: Row, tables: Tables, say: Speech = ENGLISH
) -> Waiting | None:
    """The timed move the row waits on (its state is a rule's `from`), if its moment answers."""
    for rule in rules:
        if row.get(rule.state_column) != rule.timed.from_:
            continue
        ctx = MomentContext(row=row, zone=rule.store.zone, tables=tables)
        try:
            reading = resolve_moment(rule.timed.at, ctx)
        except MomentValueError:
            return None
        if reading is None:
            return None
        return Waiting(rule, reading, explain_moment(rule.timed.at, ctx, say))
    return None


@dataclass(frozen=True)
class NoTime:
    """A row in a rule's `from` whose moment has no value: it waits for no time."""

    rule: Rule
    key: Any
    why: str
    said: str = ""
    """The words in the reader's language, when a Speech made them."""

    @property
    def words(self) -> str:
        """What the screens say: "waits for no time: offer_until is empty"."""
        return self.said or f"waits for no time: {self.why}"


def waiting_for_no_time(
    rules: Sequence[Rule], row: Row, tables: Tables, say: Speech = ENGLISH
) -> NoTime | None:
    """The rule the row is in `from` of whose moment has no value, if any."""
    for rule in rules:
        if row.get(rule.state_column) != rule.timed.from_:
            continue
        ctx = MomentContext(row=row, zone=rule.store.zone, tables=tables)
        try:
            if resolve_moment(rule.timed.at, ctx) is not None:
                return None
        except MomentValueError:
            pass
        spec = rule.store.spec(rule.table)
        why = why_no_time(rule.timed.at, ctx, say)
        return NoTime(rule, row[spec.key], why, say("waits for no time: %(why)s", why=why))
    return None


def rows_without_moment(
    stores: Sequence[Store], *, limit: int = NO_TIME_LIMIT, say: Speech = ENGLISH
) -> list[NoTime]:
    """Rows in a rule's `from` whose moment's own column is empty and no fallback answers
    (found by the empty column in SQL, judged by the engine), at most `limit`."""
    found: list[NoTime] = []
    if not stores:
        return found
    with stores[0].engine.connect() as conn:
        for store in stores:
            tables = store.read_clock_tables(conn)
            for rule in timed_rules(store):
                t = store.table(rule.table)
                query = (
                    sa.select(t)
                    .where(
                        t.c[rule.state_column] == rule.timed.from_,
                        t.c[rule.timed.at.column].is_(None),
                    )
                    .order_by(t.c[store.spec(rule.table).key])
                    .limit(limit - len(found))
                )
                for row in conn.execute(query).mappings():
                    none = waiting_for_no_time([rule], dict(row), tables, say)
                    if none is not None:
                        found.append(none)
                if len(found) >= limit:
                    return found
    return found


@dataclass(frozen=True)
class Unreadable:
    """Rows in a rule's `from` whose moment column holds what no moment reads (a wall time
    with no zone in a column the manifest types timestamptz): they never move until it is
    fixed. How many, the column, what it holds."""

    rule: Rule
    column: str
    count: int
    error: MomentValueError

    @property
    def words(self) -> str:
        """ "3 rows in placed have no readable moment: orders.pickup_at holds …"."""
        return self.words_in(ENGLISH)

    def words_in(self, say: Speech = ENGLISH) -> str:
        """The words in `say`'s language (the pending screen's): "3 Zeilen in placed …"."""
        holds = say("a date-time with no offset") if self.error.naive else self.error.holds
        column = f"{self.rule.table}.{self.column}"
        said = say.plural(
            "%(num)d row in %(state)s has no readable moment: %(column)s holds %(holds)s",
            "%(num)d rows in %(state)s have no readable moment: %(column)s holds %(holds)s",
            self.count,
            state=self.rule.timed.from_,
            column=column,
            holds=holds,
        )
        if self.error.naive:
            said += say(
                " (a timestamp without time zone, which a timestamptz cannot read): type it"
                ' "timestamp", "zone": "venue" in the manifest to read it on the venue\'s clock'
            )
        return said


def unreadable_moments(stores: Sequence[Store]) -> list[Unreadable]:
    """Per timed rule and column its moment reads on the row, the rows in `from` whose
    value no moment reads, counted (one row read tells: a column holds one type), if any."""
    found: list[Unreadable] = []
    if not stores:
        return found
    with stores[0].engine.connect() as conn:
        for store in stores:
            for rule in timed_rules(store):
                t = store.table(rule.table)
                columns = dict.fromkeys(p.column for p in moment_parts(rule.timed.at) if not p.via)
                for column in columns:
                    held = (t.c[rule.state_column] == rule.timed.from_, t.c[column].is_not(None))
                    first = conn.execute(sa.select(t.c[column]).where(*held).limit(1)).first()
                    error = _unreadable(column, first[0]) if first is not None else None
                    if error is None:
                        continue
                    count = conn.execute(
                        sa.select(sa.func.count()).select_from(t).where(*held)
                    ).scalar_one()
                    found.append(Unreadable(rule, column, int(count), error))
    return found


def _unreadable(column: str, value: Any) -> MomentValueError | None:
    """Why no moment reads a column's value (None when one does)."""
    ctx = MomentContext(row={column: value}, zone=ZoneInfo("UTC"))
    try:
        resolve_moment(Moment(column=column), ctx)
    except MomentValueError as error:
        return error
    return None


def pending_moves(
    stores: Sequence[Store],
    *,
    by: datetime,
    now: datetime,
    limit: int = PENDING_LIMIT,
    say: Speech = ENGLISH,
) -> list[Pending]:
    """The connection's timed moves due by `by` (at most `limit`), next due first; each
    marked set aside when its record holds at `now`."""
    if not stores:
        return []
    with stores[0].engine.connect() as conn:
        records = read_set_aside(conn, [s.app.name for s in stores])
        tables = {s.app.name: s.read_clock_tables(conn) for s in stores}
        found = find_due(conn, stores, now=by, limit=limit, records=records, tables=tables)
        rows = sorted([*found.due, *found.passed_by], key=lambda d: (d.moment, str(d.key)))
        rows = rows[:limit]
        words = _moment_words(conn, rows, tables, say)
    return [
        Pending(
            d.rule,
            d.key,
            d.moment,
            d.record,
            d.record is not None and d.record.holds(d.moment, now),
            words.get((d.rule.app, d.rule.table, str(d.key)), ""),
        )
        for d in rows
    ]


def _moment_words(
    conn: Connection, rows: Sequence[Any], tables: Mapping[str, Tables], say: Speech = ENGLISH
) -> dict[tuple[str, str, str], str]:
    """How each due row's moment was read, in words: its rows read once per table."""
    keys: dict[tuple[str, str], list[Any]] = {}
    rules: dict[tuple[str, str, str], Rule] = {}
    for due in rows:
        keys.setdefault((due.rule.app, due.rule.table), []).append(due.key)
        rules[(due.rule.app, due.rule.table, str(due.key))] = due.rule
    found: dict[tuple[str, str, str], str] = {}
    stores = {due.rule.app: due.rule.store for due in rows}
    for (app, table), wanted in keys.items():
        store = stores[app]
        t = store.table(table)
        key = store.spec(table).key
        for row in conn.execute(sa.select(t).where(t.c[key].in_(wanted))).mappings():
            ref = (app, table, str(row[key]))
            rule = rules[ref]
            ctx = MomentContext(row=dict(row), zone=store.zone, tables=tables[app])
            found[ref] = explain_moment(rule.timed.at, ctx, say)
    return found


def _rule_by_number(store: Store, table: str, number: int) -> Rule | None:
    return next((r for r in rules_of(store, table) if r.number == number), None)


def set_aside_rows(
    stores: Sequence[Store], *, table: str | None = None, key: str | None = None
) -> list[Aside]:
    """The rows set aside: still in `from`, their record standing for their moment (a fix,
    or the sweep once their hour is over, takes them off)."""
    found: list[Aside] = []
    if not stores:
        return found
    if key is not None and table is not None:
        key = record_key(stores, table, key)
    by_app = {s.app.name: s for s in stores}
    with stores[0].engine.connect() as conn:
        records = read_set_aside(conn, list(by_app), table=table, key=key).values()
        tables = {name: s.read_clock_tables(conn) for name, s in by_app.items()}
        for record in records:
            aside = _still_aside(conn, by_app[record.app], record, tables[record.app])
            if aside is not None:
                found.append(aside)
    return found


def record_key(stores: Sequence[Store], table: str, key: str) -> str:
    """A key as a set-aside record keeps it: the text of the key as its column reads it (a
    UUID written in capitals is the record of its canonical text)."""
    for store in stores:
        if table in store.app.tables:
            found = store.coerce_key(table, key)
            return key if found is None else str(found)
    return key


def _still_aside(conn: Connection, store: Store, record: SetAside, tables: Tables) -> Aside | None:
    """A set-aside record as shown, or None once its row left `from` or was re-dated."""
    rule = _rule_by_number(store, record.table, record.rule)
    if rule is None:
        return None
    row = store.read_row(conn, rule.table, store.coerce_key(rule.table, record.key))
    if row is None:
        return None
    waiting = waiting_on([rule], row, tables)
    if waiting is None or not record.stands_for(waiting.reading.at):
        return None
    return Aside(
        rule,
        record.key,
        record.code,
        record.message,
        record.moment,
        record.until,
        row,
        record,
        waiting.reading.fallback,
    )


def keys_set_aside(asides: Iterable[Aside]) -> dict[tuple[str, str], datetime]:
    """(table, key) of each row set aside, and until when."""
    return {(a.rule.table, a.key): a.until for a in asides}
