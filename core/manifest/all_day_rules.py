"""A board's `all_day`: what it adds up across its open tickets, as a strip on its wall.

The strip is read across the room like the cards, so what it counts is never contact
details or a secret (`board_rules.private_kind`). It counts the values of one column: of a
lines table linked to the board's table (`order_lines.item`, each line naming its ticket in
`via`), or of the board's own table. A `quantity` column is added up instead of counting
one per line; `where` keeps only some lines (not void); `states` names the tickets that
count, else every state a forward move leaves (`open_states`).
"""

from __future__ import annotations

from core.manifest.board_rules import private_kind
from core.manifest.ledger_rules import WatchCheck
from core.manifest.lookup import Lookup, column_of, state_names
from core.manifest.model import MoveSpec, Table
from core.manifest.moment_rules import Out, Path, no_column, no_table
from core.manifest.refusal import Refusal, listing, shown, where

COUNTED_TYPES = ("text", "enum", "integer", "boolean")
"""The types whose values a strip names ("12 × ramen")."""
QUANTITY_TYPES = ("integer", "numeric")
"""The types a quantity may have."""


def open_states(table: Table) -> tuple[str, ...]:
    """The states a forward move (no undo) leaves: a ticket in one is still open."""
    if table.states is None:
        return ()
    return tuple(
        state
        for state, moves in table.states.moves.items()
        if any(not (isinstance(m, MoveSpec) and m.undo) for m in moves)
    )


def counted_states(table: Table) -> tuple[str, ...]:
    """The states whose tickets a board's all-day strip counts."""
    all_day = table.board.all_day if table.board else None
    if all_day is not None and all_day.states:
        return tuple(all_day.states)
    return open_states(table)


def check_all_day(
    lk: Lookup, out: Out, at: Path, name: str, table: Table, check_watch: WatchCheck
) -> None:
    """Refuse an `all_day` that counts a column its table lacks, one no strip can name (a
    time, contact details, a secret), lines not linked to the board's table, a quantity
    that is no number, a `where` on a column the lines lack, or a state the board lacks."""
    all_day = table.board.all_day if table.board else None
    if all_day is None or table.states is None:
        return

    def refuse(spot: tuple[str | int, ...], sentence: str) -> None:
        out.append(Refusal(where(*at, *spot), sentence))

    counted, counted_name = table, name
    if all_day.table is not None:
        lines = lk.table(all_day.table)
        if lines is None:
            refuse(("table",), no_table(all_day.table))
            return
        counted, counted_name = lines, all_day.table
        if all_day.via is None:
            refuse(
                ("via",),
                f'"{all_day.table}" is a lines table: "via" names its column that holds the'
                f' "{name}" ticket each line is for',
            )
        else:
            via = column_of(lines, all_day.via)
            if via is None:
                refuse(("via",), no_column(all_day.table, all_day.via))
            elif via.references != name:
                refuse(
                    ("via",),
                    f'"{all_day.table}.{all_day.via}" does not reference "{name}": a line'
                    " names its ticket by a column with references",
                )
    elif all_day.via is not None:
        refuse(("via",), '"via" links a lines table: name the lines "table" too')
    column = column_of(counted, all_day.count)
    if column is None:
        refuse(("count",), no_column(counted_name, all_day.count))
    elif column.type not in COUNTED_TYPES:
        refuse(
            ("count",),
            f'"{counted_name}.{all_day.count}" is {column.type}: an all-day strip counts'
            " the values of a text, enum, integer or boolean column",
        )
    elif (kind := private_kind(column)) is not None:
        refuse(
            ("count",),
            f'"{counted_name}.{all_day.count}" holds {kind} (its name says so): a wall is'
            " read by anyone in the room, so its strip never shows it",
        )
    if all_day.quantity is not None:
        quantity = column_of(counted, all_day.quantity)
        if quantity is None:
            refuse(("quantity",), no_column(counted_name, all_day.quantity))
        elif quantity.type not in QUANTITY_TYPES:
            refuse(
                ("quantity",),
                f'"{counted_name}.{all_day.quantity}" is {quantity.type}: a quantity is an'
                " integer or numeric column",
            )
    if all_day.where is not None:
        check_watch(out, (*at, "where"), counted_name, counted, all_day.where)
    states = state_names(table)
    for index, state in enumerate(all_day.states or []):
        if state not in states:
            refuse(
                ("states", index),
                f'"{name}" has no state {shown(state)}: its states are {listing(states)}',
            )
