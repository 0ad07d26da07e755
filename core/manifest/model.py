"""The app manifest as a typed model: the structural half of the check.

Every shape the spec shows is kept exactly as shown. Each model forbids unknown
fields, so a typo never passes silently, and is strict: `"5"` is no number and
`1` is no `true`. Rules that need the whole document (cross references, the
refusal sentences) live in `core.manifest.check`.

Unions are tagged by a small function rather than tried member by member, so a
mistake inside one is reported once, at its place. The tags start with `~`;
`core.manifest.structure` drops them from locations.

This module holds the app, its tables and what a table's rules of time are made of
(columns, states and moves, moments); what they point at lives in `core.manifest.refs`,
and the app's ledgers, outbox and automations in `ledger_model`, `outbox_model` and
`automation_model` beside it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from core.manifest.automation_model import Automation
from core.manifest.base import (
    NAME_PATTERN,
    TEXT_MOST,
    WALL_TIME_PATTERN,
    Model,
    Name,
    Scalar,
    WallTime,
    tag_of,
)
from core.manifest.ledger_model import Ledger, Posting
from core.manifest.outbox_model import Outbox
from core.manifest.refs import (
    Amount,
    ChangeWatch,
    HoursEdge,
    SettingCondition,
    SettingRef,
    ValueWatch,
)

__all__ = ["NAME_PATTERN", "WALL_TIME_PATTERN", "Model", "Name", "Scalar", "WallTime"]


# --- shifts -------------------------------------------------------------------


class Shift(Model):
    """A shift of exactly one of minutes, hours or days (the check enforces 'exactly one')."""

    minutes: Amount | None = None
    hours: Amount | None = None
    days: Amount | None = None


# --- time of day ----------------------------------------------------------------


class RowTime(Model):
    """A text column of the same row (or of the linked row, with via) holding a wall time."""

    column: Name


def _time_tag(value: Any) -> str | None:
    if isinstance(value, str):
        return "~clock"

    def pick(data: dict[str, Any]) -> str:
        if "hours" in data or "edge" in data:
            return "~hours"
        return "~setting" if "table" in data else "~row"

    return tag_of({HoursEdge: "~hours", SettingRef: "~setting", RowTime: "~row"}, value, pick)


TimeOfDay = Annotated[
    Annotated[WallTime, Tag("~clock")]
    | Annotated[HoursEdge, Tag("~hours")]
    | Annotated[SettingRef, Tag("~setting")]
    | Annotated[RowTime, Tag("~row")],
    Discriminator(
        _time_tag,
        custom_error_type="time_of_day",
        custom_error_message=(
            'a time is "HH:MM", a setting {table, column}, an hours edge {hours, edge}'
            " or a column of the row {column}"
        ),
    ),
]
"""`"HH:MM"`, a setting, an opening-hours edge, or a time kept on the row."""


# --- moments --------------------------------------------------------------------


class Moment(Model):
    """A point in time read from a row: column, via, time, plus or minus, or."""

    column: Name
    via: Name | None = None
    time: TimeOfDay | None = None
    plus: Shift | None = None
    minus: Shift | None = None
    or_: list[Moment] | None = Field(default=None, alias="or")


# --- columns --------------------------------------------------------------------

ColumnType = Literal[
    "serial",
    "integer",
    "numeric",
    "text",
    "boolean",
    "date",
    "timestamptz",
    "timestamp",
    "uuid",
    "enum",
]
"""A column's type; `core.store.types` names the PostgreSQL type each one is."""


class StampSet(Model):
    """What a stamp writes: the write's time shifted by an amount."""

    add_minutes: Shift = Field(alias="addMinutes")


class Stamp(Model):
    """Write the time into this column when `on` holds; with `set`, the time shifted."""

    on: ValueWatch
    set: StampSet | None = None


class Renew(Model):
    """When a code is made anew."""

    on: ChangeWatch


class Code(Model):
    """A random URL-safe code of `length`, made at creation, renewed on `renew.on`."""

    length: int = Field(ge=8, le=64)
    renew: Renew | None = None


class TotalRule(Model):
    """The sum of a number column (or, with `count`, the number) of the rows of `table`
    whose `via` points at this row, those whose `where` column holds one of its values."""

    table: Name
    via: Name
    sum: Name | None = None
    count: Literal[True] | None = None
    where: ValueWatch | None = None


class ColumnRules(Model):
    """Rules that write a column: a stamp, a code or a total."""

    stamp: Stamp | None = None
    code: Code | None = None
    total: TotalRule | None = None


class Column(Model):
    """One column of a table."""

    ref: Name
    type: ColumnType
    nullable: bool = False
    max_length: int | None = Field(default=None, alias="maxLength", ge=1, le=TEXT_MOST)
    precision: int | None = Field(default=None, ge=1, le=1000)
    """A numeric's digits in all, as numeric(precision, scale) keeps them."""
    scale: int | None = Field(default=None, ge=0, le=1000)
    """A numeric's digits after the point: a value with more is refused, never rounded."""
    zone: Literal["venue"] | None = None
    """Whose clock a `timestamp` (wall time with no zone) is read on: the venue's."""
    values: list[Name] | None = None
    references: Name | None = None
    public: bool = False
    default: Scalar = None
    rules: ColumnRules | None = None
    title: str | None = Field(default=None, min_length=1, max_length=120)
    """What people see for the column; without it, its name with spaces for underscores."""


# --- states and moves -----------------------------------------------------------


class TimeWindow(Model):
    """A move open only after one moment, before another, or between the two."""

    after: Moment | None = None
    before: Moment | None = None


class Requires(Model):
    """What a move (or a create) waits for."""

    time: TimeWindow | None = None
    setting: list[SettingCondition] | None = None


class Effect(Model):
    """A linked row moved with this move: with `table`, every row of it whose `via` points
    at this row; without, the one row this row's `via` points at. Each goes to `to`."""

    table: Name | None = None
    via: Name
    to: Name


class MoveSpec(Model):
    """A move written as an object: its target, what it needs, undo, who may make it, and
    the linked rows it moves."""

    to: Name
    requires: Requires | None = None
    undo: bool = False
    roles: list[Name] | None = None
    effects: list[Effect] | None = None


def _move_tag(value: Any) -> str | None:
    if isinstance(value, str):
        return "~state"
    return tag_of({MoveSpec: "~move"}, value, lambda _: "~move")


Move = Annotated[
    Annotated[Name, Tag("~state")] | Annotated[MoveSpec, Tag("~move")],
    Discriminator(
        _move_tag,
        custom_error_type="move",
        custom_error_message='a move is a state name or an object {"to": …}',
    ),
]


class Create(Model):
    """What a new row waits for."""

    requires: Requires | None = None


class Timed(Model):
    """A listed move Adminium makes by itself once the row's moment has passed."""

    from_: Name = Field(alias="from")
    to: Name
    at: Moment
    set: dict[Name, Scalar] | None = None


class Late(Model):
    """A move made close to a moment: flagged or turned away."""

    to: Name
    from_: list[Name] | None = Field(default=None, alias="from")
    moment: Moment
    within: Shift
    mode: Literal["flag", "refuse"]
    flag: Name | None = None
    refuse: Literal["public", "everyone"] | None = None


class States(Model):
    """The state column, its first state, the moves it lists, and its rules of time."""

    column: Name
    initial: Name
    moves: dict[Name, list[Move]]
    timed: list[Timed] | None = None
    late: list[Late] | None = None
    create: Create | None = None
    titles: dict[Name, Annotated[str, Field(min_length=1, max_length=120)]] | None = None
    """What people see for each state named here (`{"picked_up": "Collected"}`)."""


class LockRule(Model):
    """Columns kept shut while `when` holds: `{"when": {...}, "columns": ["*"]}`.

    `"*"` is every column but the state column, which only moves change. What `set`,
    stamps and codes write goes through the lock.
    """

    when: ValueWatch
    columns: list[Literal["*"] | Name] = Field(min_length=1)


# --- limits and holds (WHAT-A-MOVE-SETS-OFF.md) ----------------------------------


class Limit(Model):
    """How many rows may count at once: those whose `count` column holds one of its values,
    per group of equal `per` columns (none: the whole table), at most `max`."""

    name: Name
    count: ValueWatch
    per: list[Name] = Field(default_factory=list)
    max: Amount


class Hold(Model):
    """The states in which a row's posting is a hold, kept until the moment `until` names."""

    states: list[Name] = Field(min_length=1)
    until: Moment


class AllDay(Model):
    """What a board adds up across its open tickets, a strip on its wall ("all day: 12 ×
    ramen, 7 × pad thai"): the values of `count`, a column of a linked lines `table` (whose
    `via` column names the ticket) or of the board's own table (`core.manifest.all_day_rules`)."""

    count: Name
    """The column whose values are counted (`item`)."""
    table: Name | None = None
    """A lines table linked to the board's (`order_lines`); without it, the board's own."""
    via: Name | None = None
    """The lines table's column that names the ticket (`order_id`); needed with `table`."""
    quantity: Name | None = None
    """An integer or numeric column added up instead of counting one per line (or ticket)."""
    where: ValueWatch | None = None
    """Only the lines (or tickets) whose column holds one of these values (lines not void)."""
    states: list[Name] | None = Field(default=None, min_length=1)
    """The board's states whose tickets count; without it, each state a forward move leaves."""


class Board(Model):
    """What a table's board and wall card shows: which columns, and which is its time."""

    card: list[Name] | None = Field(default=None, max_length=6)
    """The columns a card shows, in order (the key and the time are shown anyway)."""
    time: Name | None = None
    """The column that holds the time the row is for (`pickup_at`), shown large."""
    all_day: AllDay | None = None
    """What the board adds up across its open tickets (its wall's all-day strip)."""


class Table(Model):
    """One table of the app. Later rules (effects, totals) join here."""

    key: Name
    title: str | None = Field(default=None, min_length=1, max_length=120)
    """What people see for the table; without it, its name with spaces for underscores."""
    columns: list[Column] = Field(min_length=1)
    states: States | None = None
    lock: list[LockRule] | None = None
    limits: list[Limit] | None = None
    hold: Hold | None = None
    postings: list[Posting] | None = None
    board: Board | None = None
    """What its board's cards show (`core.manifest.board_rules`); defaults without it."""


# --- the app --------------------------------------------------------------------


class App(Model):
    """An app: its tables, the roles its moves may be kept for, and its outbox.

    `schema` is the PostgreSQL schema of the connection's database that holds the
    app's tables (`public` unless named), so several apps can share one database.
    """

    schema_: str | None = Field(default=None, alias="$schema")
    name: Name
    title: str | None = None
    schema_name: Name = Field(default="public", alias="schema")
    roles: list[Name] = Field(default_factory=list)
    tables: dict[Name, Table] = Field(min_length=1)
    outbox: Outbox | None = None
    ledgers: list[Ledger] | None = None
    automations: list[Automation] | None = None

    @property
    def settings_table(self) -> str | None:
        """The app's one-row settings table, if it names one."""
        return self.outbox.settings.table if self.outbox and self.outbox.settings else None


def load_app(data: Any) -> App:
    """Build the model from parsed JSON; raises pydantic.ValidationError on a bad shape."""
    return App.model_validate(data)
