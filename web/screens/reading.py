"""What the board and row screens read: cards by state, one row, its audit history."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from core.basics.errors import echo
from core.basics.values import text_fault
from core.manifest.board_rules import card_spec
from core.manifest.lookup import state_names
from core.manifest.model import Column, MoveSpec, Table
from core.store.schema import audit
from core.store.search import search_clause
from core.store.store import Row, Store
from core.sweep.pending import Waiting, rules_of, waiting_on
from services.storage import autocommit
from web.errors import InvalidRequest
from web.language import speech

BOARD_LIMIT = 2000
"""How many rows an open state's column shows at most (every open row, in practice)."""
FINAL_LIMIT = 100
"""How many cards a final state's column shows at most: today's, newest first."""
FINAL_UNTIMED = 20
"""How many cards a final column shows of a table whose cards have no time: the newest."""
COUNT_BOUND = 1000
"""How far the count of a final state's rest reads (past it: "1,000+ earlier")."""
AUDIT_LIMIT = 50
"""How many audit entries a row page shows (newest first)."""


@dataclass(frozen=True)
class Card:
    """A row as a board card: key, state, its key fields, the timed move it waits on."""

    table: str
    key: Any
    state: str
    fields: tuple[tuple[str, Any], ...]
    waiting: Waiting | None
    time: tuple[str, Any] | None = None
    """The column of the time the row is for (its board's `time`) and its value."""

    @property
    def dom_id(self) -> str:
        """The card's stable id (`row-orders-42`)."""
        return f"row-{self.table}-{self.key}"

    @property
    def due(self) -> datetime | None:
        """When its timed move is due, if it waits on one."""
        return self.waiting.reading.at if self.waiting else None

    final: bool = False
    """Whether its state is a final one (no move leaves it): no urgency, newest first."""

    @property
    def order(self) -> str:
        """Its place in its column (see `due_order`)."""
        return due_order(self)

    @property
    def instant(self) -> datetime | None:
        """The time the row is for as an instant (a `timestamp` on the venue's clock, a
        date at its midnight there), or None."""
        return self.time[1] if self.time and isinstance(self.time[1], datetime) else None


@dataclass(frozen=True)
class Board:
    """A table's cards grouped by state, in the order the manifest lists the states; a
    state rows hold that the board has no column for gets a column of its own after them."""

    table: str
    states: tuple[str, ...]
    columns: dict[str, list[Card]] = field(default_factory=dict)
    known: frozenset[str] = frozenset()
    """Every state the manifest names (`known_states`)."""

    finals: frozenset[str] = frozenset()
    """The states no move leaves: their columns show the window's rows, newest first."""
    rest: dict[str, tuple[int, bool]] = field(default_factory=dict)
    """Per final state, how many of its rows the column does not show, and whether that
    count stopped at its bound (COUNT_BOUND)."""
    window: str = "today"
    """What a final column shows, in words ("today", "the last 12 h", "the newest 20"), in
    the reader's language."""
    today: bool = True
    """Whether a final column shows the venue's day (its rest is "on other days")."""

    def count(self, state: str) -> int:
        """How many cards a column holds."""
        return len(self.columns.get(state, []))

    def more(self, state: str) -> str:
        """A final column's rest in words (`1,234 on other days`, `998+ more`), or the
        empty string when it shows every row of its state."""
        rest, bounded = self.rest.get(state, (0, False))
        if not rest and not bounded:
            return ""
        say = speech()
        count = f"{say.number(rest) if not say.english else f'{rest:,}'}{'+' if bounded else ''}"
        if self.today:
            return say.plural(
                "%(count)s on other day", "%(count)s on other days", rest, count=count
            )
        return say("%(count)s more", count=count)

    @property
    def others(self) -> tuple[str, ...]:
        """The states rows hold that no column of the manifest's flow shows: a value the
        manifest does not list (the venue's own software wrote it, or a replace renamed
        it), or one its enum lists that no move reaches; by name."""
        held = (s for s, cards in self.columns.items() if cards and s not in self.states)
        return tuple(sorted(held, key=lambda s: (s is None, str(s))))

    def listed(self, state: str | None) -> bool:
        """Whether the manifest names this state."""
        return state in self.known


def states_of(spec: Table) -> tuple[str, ...]:
    """Every state of a table in the order of its flow: the initial state, then each state
    as the moves reach it (breadth first, undos aside), the final states (no move leaves
    them) last."""
    assert spec.states is not None
    moves = spec.states.moves
    found = [spec.states.initial]
    for state in found:  # grows as it goes: each state's moves, in the order listed
        for move in moves.get(state, []):
            listed = MoveSpec(to=move) if isinstance(move, str) else move
            if not listed.undo and listed.to not in found:
                found.append(listed.to)
    for state, listed_moves in moves.items():  # states only an undo reaches, if any
        for name in (state, *(m if isinstance(m, str) else m.to for m in listed_moves)):
            if name not in found:
                found.append(name)
    return (*(s for s in found if moves.get(s)), *(s for s in found if not moves.get(s)))


def known_states(spec: Table) -> frozenset[str]:
    """Every state a table's manifest names: its flow's and its enum state column's values.
    A row holding any other is shown as it is, said to be not in the manifest, and offered
    no move."""
    return frozenset((*states_of(spec), *state_names(spec)))


def final_states(spec: Table) -> frozenset[str]:
    """The states no move leaves (picked up, cancelled): a board shows their recent rows."""
    assert spec.states is not None
    moves = spec.states.moves
    return frozenset(s for s in states_of(spec) if not moves.get(s))


TIME_MAX = 10**11
"""Past any epoch second a card's time holds: a final card's order counts down from it."""


def due_order(card: Card) -> str:
    """Where a card stands in its column, as text that sorts so (the browser places a pushed
    card by it too): an open card by the time it is for, oldest first (those without one
    after), then by key; a final card newest first."""
    key = str(card.key)
    number = int(key) if key.isdigit() and len(key) <= 20 else 0
    value = card.time[1] if card.time else None
    if isinstance(value, datetime):
        seconds = int(value.timestamp()) if value.tzinfo else int(value.toordinal() * 86400)
    elif value is not None:
        seconds = int(value.toordinal() * 86400)
    else:
        seconds = None
    if card.final:
        stamp = f"{TIME_MAX - seconds:012d}" if seconds is not None else ""
        return f"{0 if stamp else 1}|{stamp}|{10**20 - number:021d}|{key}"
    stamp = f"{seconds + TIME_MAX:012d}" if seconds is not None else ""
    return f"{0 if stamp else 1}|{stamp}|{number:020d}|{key}"


def card_columns(spec: Table) -> list[Column]:
    """The fields a card shows: its board's `card`, else the defaults (no key, state, time,
    link, rule, contact details or secret: `core.manifest.board_rules`)."""
    return list(card_spec(spec).columns)


def make_card(store: Store, table: str, row: Row, tables: Any) -> Card:
    """A row as its card (a table without states, a settings or hours row: state "")."""
    spec = store.spec(table)
    shown = card_spec(spec)
    state = row[spec.states.column] if spec.states is not None else ""
    return Card(
        table,
        row[spec.key],
        state,
        tuple((c.ref, row.get(c.ref)) for c in shown.columns),
        waiting_on(rules_of(store, table), row, tables, speech()),
        (shown.time.ref, row.get(shown.time.ref)) if shown.time is not None else None,
        spec.states is not None and state in final_states(spec),
    )


def filter_fault(spec: Table, q: str, state: str) -> str | None:
    """Why no row could match a board's search or state filter (a NUL, a state the board
    lacks), or None. Asked, the database would refuse either in its own words."""
    fault = text_fault(q)
    if fault is not None:
        return f"the search holds {fault}"
    if state and state not in states_of(spec):
        return f"the board has no state {echo(state)!r}"
    return None


@dataclass(frozen=True)
class Scope:
    """What a final state's column shows: the rows its window and filters let through,
    newest first, at most `limit` of them; `words` says which."""

    where: tuple[sa.ColumnElement[bool], ...]
    order: tuple[sa.ColumnElement[Any], ...]
    limit: int
    words: str
    today: bool = False


def newest(limit: int) -> str:
    """A final column's window when it shows the newest rows: "the newest 20"."""
    say = speech()
    return say("the newest %(count)s", count=limit)


def venue_day(now: datetime, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """The venue's day of `now` on its clock: its midnight and the next (as instants)."""
    local = now.astimezone(zone).date()
    start = datetime.combine(local, time(), zone)
    end = datetime.combine(local + timedelta(days=1), time(), zone)
    return start.astimezone(UTC), end.astimezone(UTC)


def final_scope(store: Store, table: str, now: datetime, q: str = "", state: str = "") -> Scope:
    """A final column's rows: with its board's time, those whose time is on the venue's day
    (or within the board's `final_hours` of now); searched or filtered to a state, those of
    any day; without a time, the newest by key."""
    spec = store.spec(table)
    t = store.table(table)
    shown = card_spec(spec)
    key = t.c[spec.key]
    where: list[sa.ColumnElement[bool]] = [search_clause(t, spec, q)] if q else []
    if shown.time is None:
        return Scope(tuple(where), (key.desc(),), FINAL_UNTIMED, newest(FINAL_UNTIMED))
    column = t.c[shown.time.ref]
    order = (column.desc().nulls_last(), key.desc())
    if q or state:
        return Scope(tuple(where), order, FINAL_LIMIT, newest(FINAL_LIMIT))
    if shown.final_hours is not None:
        span = timedelta(hours=shown.final_hours)
        start, end = now - span, now + span
        say = speech()
        words = say("the %(span)s either side of now", span=say.unit(shown.final_hours, "hour"))
    else:
        start, end = venue_day(now, store.zone)
        say = speech()
        words = say("today")
    low: Any = start
    high: Any = end
    if shown.time.type == "timestamp":
        low, high = (v.astimezone(store.zone).replace(tzinfo=None) for v in (start, end))
    elif shown.time.type == "date":
        low = start.astimezone(store.zone).date()
        high = low + timedelta(days=1) if shown.final_hours is None else end.date()
    where += [column >= low, column < high]
    return Scope(tuple(where), order, FINAL_LIMIT, words, shown.final_hours is None)


def held_states(conn: sa.Connection, t: sa.Table, column: sa.Column[Any]) -> list[Any]:
    """The states rows hold, by a loose scan of an index that leads with the state column
    (the timed moves' `(state, moment)`): one probe a state, whatever the history."""
    seed = sa.select(sa.select(column).order_by(column).limit(1).scalar_subquery().label("v"))
    found = seed.cte("held", recursive=True)
    step = sa.select(
        sa.select(column).where(column > found.c.v).order_by(column).limit(1).scalar_subquery()
    ).where(found.c.v.is_not(None))
    found = found.union_all(step)
    states = [v for (v,) in conn.execute(sa.select(found.c.v).where(found.c.v.is_not(None)))]
    if conn.execute(sa.select(sa.exists().where(column.is_(None)))).scalar():
        states.append(None)
    return states


def read_board(
    store: Store, table: str, q: str = "", state: str = "", now: datetime | None = None
) -> Board:
    """A table's cards by state, filtered by a search and a state (INVALID_REQUEST for a
    filter no row could match): every row of an open state, oldest first by the time it is
    for; a final state's rows of today (`final_scope`), newest first, with a bounded count
    of the rest. Its cost follows the open rows and today's, not the table's history."""
    spec = store.spec(table)
    assert spec.states is not None
    fault = filter_fault(spec, q, state)
    if fault is not None:
        raise InvalidRequest(fault, {"q": echo(q), "state": echo(state)})
    now = now or datetime.now(UTC)
    t = store.table(table)
    column = t.c[spec.states.column]
    finals = final_states(spec)
    states = states_of(spec)
    scope = final_scope(store, table, now, q, state)
    board = Board(
        table,
        states,
        {s: [] for s in states},
        known_states(spec),
        finals,
        {},
        scope.words,
        scope.today,
    )
    shown = card_spec(spec)
    key = t.c[spec.key]
    open_order = [key]
    if shown.time is not None:
        open_order.insert(0, t.c[shown.time.ref].asc().nulls_last())
    # Each statement its own transaction: a board read holds no lock between them (a
    # replace's migration of the same tables waits for one statement, never deadlocks).
    with autocommit(store.engine).connect() as conn:
        tables = store.read_clock_tables(conn)
        held = [state] if state else held_states(conn, t, column)
        opened = [s for s in held if s not in finals]
        rows: list[Any] = []
        if opened:
            listed = [s for s in opened if s is not None]
            where = column.in_(listed) if listed else sa.false()
            if None in opened:
                where = sa.or_(where, column.is_(None))
            query = sa.select(t).where(where).order_by(*open_order).limit(BOARD_LIMIT)
            if q:
                query = query.where(search_clause(t, spec, q))
            rows += conn.execute(query).mappings()
        for final in (s for s in states if s in finals and (not state or s == state)):
            query = sa.select(t).where(column == final, *scope.where)
            found = list(conn.execute(query.order_by(*scope.order).limit(scope.limit)).mappings())
            rows += found
            search = search_clause(t, spec, q) if q else None
            board.rest[final] = _rest(conn, t, column, final, search, len(found))
        for row in rows:
            card = make_card(store, table, dict(row), tables)
            board.columns.setdefault(card.state, []).append(card)
    for cards in board.columns.values():
        cards.sort(key=due_order)
    return board


def _rest(
    conn: sa.Connection, t: sa.Table, column: sa.Column[Any], state: str, search: Any, shown: int
) -> tuple[int, bool]:
    """How many rows of a final state its column does not show (read to COUNT_BOUND)."""
    where = [column == state] + ([search] if search is not None else [])
    query = sa.select(sa.literal(1)).select_from(t).where(*where).limit(COUNT_BOUND)
    total = conn.execute(sa.select(sa.func.count()).select_from(query.subquery())).scalar_one()
    return max(total - shown, 0), total >= COUNT_BOUND


def visible(store: Store, table: str, now: datetime, q: str, state: str) -> sa.ColumnElement[bool]:
    """Whether a row is on a board with this search and filter: an open state's row, or a
    final state's within its column's scope."""
    spec = store.spec(table)
    assert spec.states is not None
    t = store.table(table)
    column = t.c[spec.states.column]
    scope = final_scope(store, table, now, q, state)
    finals = sorted(final_states(spec))
    shown = sa.or_(
        column.is_(None), column.not_in(finals), sa.and_(column.in_(finals), *scope.where)
    )
    if q:
        shown = sa.and_(shown, search_clause(t, spec, q))
    if state:
        shown = sa.and_(shown, column == state)
    return shown


def matches(
    store: Store, table: str, key: Any, q: str, state: str, now: datetime | None = None
) -> Card | None:
    """The row's card when it is on a board with this search and filter, else None."""
    spec = store.spec(table)
    assert spec.states is not None
    if filter_fault(spec, q, state) is not None:
        return None
    t = store.table(table)
    query = sa.select(t).where(t.c[spec.key] == store.coerce_key(table, key))
    query = query.where(visible(store, table, now or datetime.now(UTC), q, state))
    with store.engine.connect() as conn:
        row = conn.execute(query).mappings().first()
        if row is None:
            return None
        return make_card(store, table, dict(row), store.read_clock_tables(conn))


def state_counts(
    store: Store, table: str, q: str = "", now: datetime | None = None
) -> dict[str, int]:
    """How many cards each of the board's columns holds (with the board's search): an open
    state's rows, a final state's in its scope (at most its limit); each read through the
    state's index, never the whole table."""
    spec = store.spec(table)
    assert spec.states is not None
    if filter_fault(spec, q, "") is not None:
        return {}
    t = store.table(table)
    column = t.c[spec.states.column]
    finals = final_states(spec)
    opened = [s for s in states_of(spec) if s not in finals]
    scope = final_scope(store, table, now or datetime.now(UTC), q)
    query = sa.select(column, sa.func.count()).where(column.in_(opened)).group_by(column)
    if q:
        query = query.where(search_clause(t, spec, q))
    with store.engine.connect() as conn:
        counts = {s: n for s, n in conn.execute(query)}
        for final in sorted(finals):
            bounded = sa.select(sa.literal(1)).select_from(t).where(column == final, *scope.where)
            counts[final] = conn.execute(
                sa.select(sa.func.count()).select_from(bounded.limit(scope.limit).subquery())
            ).scalar_one()
    return counts


@dataclass(frozen=True)
class RowView:
    """A row page: the row, its card (state, waiting move), the moves open, its audit."""

    card: Card
    row: Row
    moves: tuple[MoveSpec, ...]
    history: tuple[dict[str, Any], ...]
    listed: bool = True
    """Whether the manifest names the row's state (False: no move leaves it here)."""

    @property
    def dom_id(self) -> str:
        """The row page's stable id."""
        return f"detail-{self.card.table}-{self.card.key}"


def open_moves(spec: Table, state: str, roles: Collection[str] | None) -> tuple[MoveSpec, ...]:
    """The moves from `state` a person holding `roles` may make."""
    if spec.states is None:
        return ()
    roles = frozenset(roles or ())
    found = []
    for move in spec.states.moves.get(state, []):
        listed = MoveSpec(to=move) if isinstance(move, str) else move
        kept = set(listed.roles or ())
        if not kept or kept & roles:
            found.append(listed)
    return tuple(found)


def read_row_view(store: Store, table: str, key: Any, roles: frozenset[str]) -> RowView | None:
    """What a row page shows, or None when there is no such row."""
    spec = store.spec(table)
    with store.engine.connect() as conn:
        row = store.read_row(conn, table, key)
        if row is None:
            return None
        card = make_card(store, table, row, store.read_clock_tables(conn))
        history = conn.execute(
            sa.select(audit)
            .where(
                audit.c.app == store.app.name,
                audit.c.table_name == table,
                audit.c.row_key == str(row[spec.key]),
            )
            .order_by(audit.c.id.desc())
            .limit(AUDIT_LIMIT)
        ).mappings()
        entries = tuple(dict(e) for e in history)
    listed = spec.states is None or card.state in known_states(spec)
    return RowView(card, row, open_moves(spec, card.state, roles), entries, listed)


def editable_columns(spec: Table) -> Sequence[Column]:
    """The columns a person may edit on a screen: not the key, the state, or a rule's column."""
    state = spec.states.column if spec.states else None
    return [c for c in spec.columns if c.ref not in (spec.key, state) and c.rules is None]
