"""What the board and row screens read: cards by state, one row, its audit history."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

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
from web.errors import InvalidRequest
from web.language import speech

BOARD_LIMIT = 2000
"""How many rows a board shows at most (the newest first)."""
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

    @property
    def order(self) -> str:
        """Its place in its column (see `due_order`)."""
        return due_order(self)


@dataclass(frozen=True)
class Board:
    """A table's cards grouped by state, in the order the manifest lists the states; a
    state rows hold that the board has no column for gets a column of its own after them."""

    table: str
    states: tuple[str, ...]
    columns: dict[str, list[Card]] = field(default_factory=dict)
    known: frozenset[str] = frozenset()
    """Every state the manifest names (`known_states`)."""

    def count(self, state: str) -> int:
        """How many cards a column holds."""
        return len(self.columns.get(state, []))

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


def due_order(card: Card) -> str:
    """Where a card stands in its column, as text that sorts so (the browser places a pushed
    card by it too): by when its timed move is due, those with none after, oldest key first."""
    key = str(card.key)
    number = int(key) if key.isdigit() and len(key) <= 20 else 0
    due = card.due.isoformat() if card.due is not None else ""
    return f"{0 if due else 1}|{due}|{number:020d}|{key}"


def card_columns(spec: Table) -> list[Column]:
    """The fields a card shows: its board's `card`, else the defaults (no key, state, time,
    link, rule, contact details or secret: `core.manifest.board_rules`)."""
    return list(card_spec(spec).columns)


def make_card(store: Store, table: str, row: Row, tables: Any) -> Card:
    """A row as its card (a table without states, a settings or hours row: state "")."""
    spec = store.spec(table)
    shown = card_spec(spec)
    return Card(
        table,
        row[spec.key],
        row[spec.states.column] if spec.states is not None else "",
        tuple((c.ref, row.get(c.ref)) for c in shown.columns),
        waiting_on(rules_of(store, table), row, tables, speech()),
        (shown.time.ref, row.get(shown.time.ref)) if shown.time is not None else None,
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


def read_board(store: Store, table: str, q: str = "", state: str = "") -> Board:
    """A table's cards by state, filtered by a search and a state (INVALID_REQUEST for a
    filter no row could match)."""
    spec = store.spec(table)
    assert spec.states is not None
    fault = filter_fault(spec, q, state)
    if fault is not None:
        raise InvalidRequest(fault, {"q": echo(q), "state": echo(state)})
    t = store.table(table)
    query = sa.select(t).order_by(t.c[spec.key].desc()).limit(BOARD_LIMIT)
    if q:
        query = query.where(search_clause(t, spec, q))
    if state:
        query = query.where(t.c[spec.states.column] == state)
    states = states_of(spec)
    board = Board(table, states, {s: [] for s in states}, known_states(spec))
    with store.engine.connect() as conn:
        tables = store.read_clock_tables(conn)
        for row in conn.execute(query).mappings():
            card = make_card(store, table, dict(row), tables)
            board.columns.setdefault(card.state, []).append(card)
    for cards in board.columns.values():
        cards.sort(key=due_order)
    return board


def matches(store: Store, table: str, key: Any, q: str, state: str) -> Card | None:
    """The row's card when it is on a board with this search and filter, else None."""
    spec = store.spec(table)
    assert spec.states is not None
    if filter_fault(spec, q, state) is not None:
        return None
    t = store.table(table)
    query = sa.select(t).where(t.c[spec.key] == store.coerce_key(table, key))
    if q:
        query = query.where(search_clause(t, spec, q))
    if state:
        query = query.where(t.c[spec.states.column] == state)
    with store.engine.connect() as conn:
        row = conn.execute(query).mappings().first()
        if row is None:
            return None
        return make_card(store, table, dict(row), store.read_clock_tables(conn))


def state_counts(store: Store, table: str, q: str = "") -> dict[str, int]:
    """How many rows each state holds (with the board's search)."""
    spec = store.spec(table)
    assert spec.states is not None
    if filter_fault(spec, q, "") is not None:
        return {}
    t = store.table(table)
    column = t.c[spec.states.column]
    query = sa.select(column, sa.func.count()).group_by(column)
    if q:
        query = query.where(search_clause(t, spec, q))
    with store.engine.connect() as conn:
        return {state: n for state, n in conn.execute(query)}


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
