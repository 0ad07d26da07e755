"""The app manifest as a typed model: the structural half of the check.

Every shape the spec shows is kept exactly as shown. Each model forbids unknown
fields, so a typo never passes silently, and is strict: `"5"` is no number and
`1` is no `true`. Rules that need the whole document (cross references, the
refusal sentences) live in `core.manifest.check`.

Unions are tagged by a small function rather than tried member by member, so a
mistake inside one is reported once, at its place. The tags start with `~`;
`core.manifest.structure` drops them from locations.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from core.manifest.base import (
    NAME_PATTERN,
    WALL_TIME_PATTERN,
    Model,
    Name,
    Number,
    Scalar,
    WallTime,
    tag_of,
)

__all__ = ["NAME_PATTERN", "WALL_TIME_PATTERN", "Model", "Name", "Scalar", "WallTime"]


# --- settings and shifts -------------------------------------------------------


class SettingRef(Model):
    """A column of the one settings row: `{"table": "settings", "column": "offer_hours"}`."""

    table: Name
    column: Name


def _amount_tag(value: Any) -> str | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "~number"
    return tag_of({SettingRef: "~setting"}, value, lambda _: "~setting")


Amount = Annotated[
    Annotated[Number, Tag("~number")] | Annotated[SettingRef, Tag("~setting")],
    Discriminator(
        _amount_tag,
        custom_error_type="amount",
        custom_error_message="an amount is a whole number or a setting {table, column}",
    ),
]
"""A shift's amount: a whole number, or a whole-number column of the settings row."""


class Shift(Model):
    """A shift of exactly one of minutes, hours or days (the check enforces 'exactly one')."""

    minutes: Amount | None = None
    hours: Amount | None = None
    days: Amount | None = None


# --- time of day ----------------------------------------------------------------


class HoursRef(Model):
    """A weekly opening-hours table: which columns hold the weekday, the yes/no and the times."""

    table: Name
    weekday: Name
    open: Name | None = None
    opens: Name
    closes: Name


class HoursEdge(Model):
    """The venue's opening or closing hour on the moment's weekday."""

    hours: HoursRef
    edge: Literal["opens", "closes"]


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
    "serial", "integer", "numeric", "text", "boolean", "date", "timestamptz", "enum"
]


class ValueWatch(Model):
    """A column taking one of these values: `{"column": "status", "values": ["offered"]}`."""

    column: Name
    values: list[Scalar] = Field(min_length=1)


class ChangeWatch(Model):
    """A column whose value changes: `{"column": "pending_email", "changed": true}`."""

    column: Name
    changed: Literal[True]


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
    max_length: int | None = Field(default=None, alias="maxLength", ge=1)
    values: list[Name] | None = None
    references: Name | None = None
    public: bool = False
    default: Scalar = None
    rules: ColumnRules | None = None
    title: str | None = Field(default=None, min_length=1, max_length=120)
    """What people see for the column; without it, its name with spaces for underscores."""


# --- states and moves -----------------------------------------------------------


class SettingCondition(Model):
    """A condition on a column of the settings row: `{"table", "column", "eq"}`."""

    table: Name
    column: Name
    eq: Scalar


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


# --- limits, holds and postings (WHAT-A-MOVE-SETS-OFF.md) ------------------------


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


def _posting_on_tag(value: Any) -> str | None:
    if isinstance(value, str):
        return "~create"
    return tag_of({ValueWatch: "~watch"}, value, lambda _: "~watch")


PostingOn = Annotated[
    Annotated[Literal["create"], Tag("~create")] | Annotated[ValueWatch, Tag("~watch")],
    Discriminator(
        _posting_on_tag,
        custom_error_type="posting_on",
        custom_error_message='a posting is made on "create" or on {"column", "values"}',
    ),
]


class Posting(Model):
    """The row's `amount` taken from the ledger account its `via` points at, on create or
    on a move into given values; a hold given back by a move into `givesBack`."""

    ledger: Name
    via: Name
    amount: Name
    on: PostingOn
    gives_back: list[Name] | None = Field(default=None, alias="givesBack")


class Board(Model):
    """What a table's board and wall card shows: which columns, and which is its time."""

    card: list[Name] | None = Field(default=None, max_length=6)
    """The columns a card shows, in order (the key and the time are shown anyway)."""
    time: Name | None = None
    """The column that holds the time the row is for (`pickup_at`), shown large."""


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


# --- ledgers --------------------------------------------------------------------


Bound = Annotated[
    Annotated[Number, Tag("~number")] | Annotated[SettingRef, Tag("~setting")],
    Discriminator(
        _amount_tag,
        custom_error_type="bound",
        custom_error_message="a ledger's bound is a number or a setting {table, column}",
    ),
]
"""A ledger's `min` or `max`: a number, or a number column of the settings row."""


class Ledger(Model):
    """A table of accounts and its balance column, kept between `min` and `max`."""

    name: Name
    table: Name
    balance: Name
    min: Bound | None = None
    max: Bound | None = None


# --- the outbox -----------------------------------------------------------------


class OutboxSettings(Model):
    """The app's one-row settings table."""

    table: Name


class LeadFallback(Model):
    """Where a lead is read when the linked row gives none: a setting."""

    table: Name
    column: Name


class Lead(Model):
    """How long before the moment a reminder goes (hours), and optionally at which wall time."""

    via: Name | None = None
    table: Name
    column: Name
    fallback: LeadFallback | None = None
    max: int | None = Field(default=None, ge=1)
    at: WallTime | None = None


class Before(Model):
    """The moment a reminder leads up to: a timestamptz column of `table`."""

    table: Name
    at: Name
    lead: Lead


class Reminder(Model):
    """An email sent a lead of hours before a row's moment."""

    kind: Literal["reminder"]
    link: Name | None = None
    before: Before
    to: Name | None = None
    subject: str | None = None
    body: str | None = None
    states: list[Name] | None = None
    """The states of `before.table` in which a row is reminded; without it, every state
    with a move out of it (a row in a final state is never reminded)."""


class Message(Model):
    """An email queued when a row's column takes one of the watched values."""

    kind: Literal["message"]
    table: Name
    on: ValueWatch
    to: Name
    subject: str = Field(min_length=1)
    body: str = Field(min_length=1)


def _producer_tag(value: Any) -> str | None:
    if isinstance(value, Reminder | Message):
        return f"~{value.kind}"
    if isinstance(value, dict) and value.get("kind") in ("reminder", "message"):
        return f"~{value['kind']}"
    return None


Producer = Annotated[
    Annotated[Reminder, Tag("~reminder")] | Annotated[Message, Tag("~message")],
    Discriminator(
        _producer_tag,
        custom_error_type="producer",
        custom_error_message='a producer\'s "kind" is "reminder" or "message"',
    ),
]


class Outbox(Model):
    """The app's emails: its settings table and its producers."""

    settings: OutboxSettings | None = None
    producers: list[Producer] = Field(default_factory=list)


# --- automations ----------------------------------------------------------------


class Automation(Model):
    """A rule that watches a table and posts each change it hears to a webhook of the
    connection (its URL and secret are kept in the control plane, never here); `on` left
    out: every change of the table; sample rows only with `samples`."""

    name: Name
    table: Name
    on: ValueWatch | None = None
    webhook: Name
    samples: bool = False


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
