"""A table's `board`: which columns its cards show and which one is the time a row is for.

A board's card is read at a glance, and a wall's across a room by anyone in it (a guest at
the counter too): so a card never shows a customer's contact details or a secret, whether
the manifest names the columns or the defaults pick them. The check refuses a `board` that
names one; the defaults leave them out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from core.manifest.model import Board, Column, Table
from core.manifest.refusal import Refusal, where

CARD_FIELDS = 3
"""How many columns a card shows by default besides its key and its time."""
TIME_TYPES = ("timestamptz", "timestamp", "date")
"""The types a card's time may have."""
CONTACT_WORDS = frozenset(
    {
        "email",
        "mail",
        "phone",
        "mobile",
        "tel",
        "telephone",
        "sms",
        "whatsapp",
        "address",
        "street",
        "postcode",
        "zip",
        "contact",
        "fax",
    }
)
"""Parts of a column's name that say it holds how to reach a person."""
SECRET_WORDS = frozenset({"token", "password", "secret", "pin", "hash", "otp"})
"""Parts of a column's name that say it holds something that opens a door (a column a
`code` rule writes is one too, whatever its name)."""
DEFAULT_TYPES = ("text", "enum", "integer", "numeric", "boolean", "date")
"""The types a default card shows (no time of day: the card's time is said once)."""
DEFAULTS = Board()
"""A board's thresholds when the manifest names none (due soon 10 min before its time,
late at its time, the timed move forward within 30 min, final columns the venue's day)."""


def _words(name: str) -> set[str]:
    return {part for part in name.lower().split("_") if part}


def private_kind(column: Column) -> str | None:
    """Why a column never shows on a card ("contact details", "a secret"), or None."""
    words = _words(column.ref)
    if words & CONTACT_WORDS:
        return "contact details"
    if (column.rules is not None and column.rules.code is not None) or words & SECRET_WORDS:
        return "a secret"
    return None


@dataclass(frozen=True)
class CardSpec:
    """What a table's cards show: the columns in order, and the column of its time; how
    near its time an open ticket is due soon and past it late, how near its timed move
    comes forward, and the window of its final columns (hours either side of now; None:
    the venue's day)."""

    columns: tuple[Column, ...]
    time: Column | None
    soon: timedelta = timedelta(minutes=DEFAULTS.soon_minutes)
    late: timedelta = timedelta(minutes=DEFAULTS.late_minutes)
    near: timedelta = timedelta(minutes=DEFAULTS.move_near_minutes)
    final_hours: int | None = None


def _column(table: Table, name: str | None) -> Column | None:
    return next((c for c in table.columns if c.ref == name), None) if name else None


def default_time(table: Table) -> Column | None:
    """The time a row is for without a `board.time`: the column its first timed move's
    moment reads on the row itself (`pickup_at`), else its first date or timestamptz column
    no rule writes (a stamp records when something happened, not what the row is for)."""
    for timed in (table.states.timed or []) if table.states else []:
        column = _column(table, timed.at.column) if timed.at.via is None else None
        if column is not None and column.type in TIME_TYPES:
            return column
    return next((c for c in table.columns if c.type in TIME_TYPES and c.rules is None), None)


def default_card(table: Table, time: Column | None) -> tuple[Column, ...]:
    """The columns a card shows without a `board.card`: the first plain ones (not the key,
    the state, the time, a link to another row, a column a rule writes, contact details or
    a secret), of a type a glance reads."""
    state = table.states.column if table.states else None
    shown = [
        c
        for c in table.columns
        if c.ref not in (table.key, state, time.ref if time else None)
        and c.references is None
        and c.rules is None
        and c.type in DEFAULT_TYPES
        and private_kind(c) is None
    ]
    return tuple(shown[:CARD_FIELDS])


def card_spec(table: Table) -> CardSpec:
    """What the table's cards show: its `board` where it names them, else the defaults."""
    board = table.board or DEFAULTS
    time = _column(table, board.time) if board.time else default_time(table)
    if board.card is not None:
        named = [_column(table, name) for name in board.card]
        columns = tuple(c for c in named if c is not None)
    else:
        columns = default_card(table, time)
    return CardSpec(
        columns,
        time,
        timedelta(minutes=board.soon_minutes),
        timedelta(minutes=board.late_minutes),
        timedelta(minutes=board.move_near_minutes),
        board.final_hours,
    )


def check_board(out: list[Refusal], at: tuple[str | int, ...], name: str, table: Table) -> None:
    """Refuse a `board` that names a column the table lacks, one twice, the key or state (a
    card shows them anyway), contact details or a secret, or a time that is no time."""
    board = table.board
    if board is None:
        return

    def out_append(spot: tuple[str | int, ...], sentence: str) -> None:
        out.append(Refusal(where(*spot), sentence))

    if table.states is None:
        out_append(at, f'"{name}" keeps no states, so it has no board: give it "states" first')
        return
    state = table.states.column
    for index, ref in enumerate(board.card or []):
        spot = (*at, "card", index)
        column = _column(table, ref)
        if column is None:
            out_append(spot, f'"{name}" has no column "{ref}"')
        elif (board.card or []).index(ref) != index:
            out_append(spot, f'"{ref}" is listed twice')
        elif ref in (table.key, state):
            which = "key" if ref == table.key else "state"
            out_append(spot, f'"{ref}" is the table\'s {which}: every card shows it already')
        elif (kind := private_kind(column)) is not None:
            out_append(
                spot,
                f'"{name}.{ref}" holds {kind} (its name says so): a board and its wall are'
                " read by anyone in the room, so a card never shows it",
            )
    if board.time is not None:
        column = _column(table, board.time)
        if column is None:
            out_append((*at, "time"), f'"{name}" has no column "{board.time}"')
        elif column.type not in TIME_TYPES:
            out_append(
                (*at, "time"),
                f'"{name}.{board.time}" is {column.type}: a card\'s time is a timestamptz,'
                " a timestamp or a date column",
            )
    timed = {"soon_minutes", "late_minutes", "final_hours"} & board.model_fields_set
    if timed and card_spec(table).time is None:
        for field in sorted(timed):
            out_append(
                (*at, field),
                f'"{name}" has no time column for its cards (a "time", or a timestamptz,'
                f' timestamp or date column): "{field}" counts from a card\'s time',
            )
