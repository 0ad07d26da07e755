"""Lookups over a loaded app the check's rules share: columns, links, states, settings."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from core.manifest.base import INTEGER_RANGE
from core.manifest.model import App, Column, MoveSpec, Table
from core.manifest.refusal import listing, shown

WHOLE_NUMBER_TYPES = frozenset({"serial", "integer"})
MOMENT_TYPES = frozenset({"date", "timestamptz", "timestamp"})
WALL_TIME_LENGTH = 5  # "HH:MM"


def written_by_rules(table: Table) -> dict[str, str]:
    """Columns another rule writes, each with that rule's name: stamps, codes and totals."""
    written: dict[str, str] = {}
    for column in table.columns:
        if column.rules and column.rules.stamp:
            written[column.ref] = "a stamp"
        if column.rules and column.rules.code:
            written[column.ref] = "a code"
        if column.rules and column.rules.total:
            written[column.ref] = "a total"
    return written


def total_columns(spec: Table) -> list[str]:
    """The table's columns written by a total."""
    return [c.ref for c in spec.columns if c.rules is not None and c.rules.total is not None]


def state_names(table: Table) -> list[str]:
    """The states a table knows: its enum state column's values, else every name its moves use."""
    states = table.states
    if states is None:
        return []
    column = column_of(table, states.column)
    if column is not None and column.type == "enum":
        return list(column.values or [])
    names: list[str] = []
    for source, targets in states.moves.items():
        for name in [source, *(move_target(m) for m in targets)]:
            if name not in names:
                names.append(name)
    return names


def move_target(move: str | MoveSpec) -> str:
    """Where a listed move goes."""
    return move if isinstance(move, str) else move.to


def listed_move(table: Table, source: str, target: str) -> str | MoveSpec | None:
    """The move the table lists from `source` to `target`, if any."""
    if table.states is None:
        return None
    for move in table.states.moves.get(source, []):
        if move_target(move) == target:
            return move
    return None


def column_of(table: Table, name: str) -> Column | None:
    """A table's column by name."""
    return next((column for column in table.columns if column.ref == name), None)


def describe(column: Column) -> str:
    """What a column holds, for a sentence."""
    if column.type in WHOLE_NUMBER_TYPES:
        return "a whole number"
    if column.type == "text":
        return f"text of at most {column.max_length} characters" if column.max_length else "text"
    if column.type == "numeric" and column.scale is not None:
        return f"a number of at most {column.scale} decimals"
    return {
        "numeric": "a number",
        "boolean": "true or false",
        "date": "a date (YYYY-MM-DD)",
        "timestamptz": "a date and time with its offset",
        "timestamp": "a date and time (YYYY-MM-DDTHH:MM)",
        "uuid": "a UUID",
        "enum": f"one of {listing(column.values or [])}",
    }.get(column.type, column.type)


def _parses(parse: Any, value: str) -> bool:
    try:
        parse(value)
    except ValueError:
        return False
    return True


def value_fits(column: Column, value: Any) -> bool:
    """Whether a fixed value fits a column (null is judged by `nullable` elsewhere)."""
    if isinstance(value, bool):
        return column.type == "boolean"
    if isinstance(value, int | float):
        if column.type in WHOLE_NUMBER_TYPES:
            low, high = INTEGER_RANGE
            return float(value).is_integer() and low <= value <= high
        return column.type == "numeric" and decimals_fit(value, column.scale)
    if not isinstance(value, str):
        return False
    if column.type == "text":
        return column.max_length is None or len(value) <= column.max_length
    if column.type == "enum":
        return value in (column.values or [])
    if column.type == "date":
        return _parses(date.fromisoformat, value)
    if column.type == "timestamptz":
        return _parses(datetime.fromisoformat, value)
    if column.type == "timestamp":
        return _parses(datetime.fromisoformat, value)
    if column.type == "uuid":
        return _parses(uuid.UUID, value)
    return False


def decimals_fit(value: int | float, scale: int | None) -> bool:
    """Whether a number has no more decimals than `scale` (any number, with no scale)."""
    if scale is None:
        return True
    exponent = Decimal(str(value)).normalize().as_tuple().exponent
    return not isinstance(exponent, int) or -exponent <= scale


def value_refusal(table: str, column: Column, value: Any) -> str | None:
    """The sentence for a fixed value its column cannot take, or None when it fits."""
    if value is None:
        if column.nullable:
            return None
        return f'"{table}.{column.ref}" may not be empty: give it a value, or make it nullable'
    if value_fits(column, value):
        return None
    held = describe(column)
    if column.type in WHOLE_NUMBER_TYPES and isinstance(value, int | float):
        low, high = INTEGER_RANGE
        held = f"a whole number from {low:,} to {high:,}"
    return f'"{table}.{column.ref}" takes {held}, not {shown(value)}'


@dataclass(frozen=True)
class Lookup:
    """The app with the lookups its rules need."""

    app: App
    referenced: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        names = {c.references for t in self.app.tables.values() for c in t.columns if c.references}
        object.__setattr__(self, "referenced", frozenset(n for n in names if n))

    def table(self, name: str) -> Table | None:
        """A table by name."""
        return self.app.tables.get(name)

    def column(self, table: str, name: str) -> Column | None:
        """A column by table and name."""
        found = self.app.tables.get(table)
        return column_of(found, name) if found else None

    def stands_alone(self, name: str) -> bool:
        """No foreign key of its own, none pointing at it, no states or limits (bookings later)."""
        table = self.app.tables[name]
        links = any(column.references for column in table.columns)
        kept = table.states is not None or bool(table.limits)
        return not links and name not in self.referenced and not kept

    def is_setting_table(self, name: str) -> bool:
        """Whether settings may be read from this table."""
        return name == self.app.settings_table or self.stands_alone(name)
