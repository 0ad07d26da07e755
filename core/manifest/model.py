"""The app manifest as a typed model: the structural half of the check.

Every shape the spec shows is kept exactly as shown. Each model forbids unknown
fields, so a typo never passes silently. Rules that need the whole document
(cross references, the refusal sentences) live in `core.manifest.check`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

Name = Annotated[str, StringConstraints(pattern=r"^[a-z_][a-z0-9_]*$", max_length=63)]
"""A table, column or state name: lower-case SQL identifier."""

Scalar = str | int | float | bool | None


class Model(BaseModel):
    """Base of every manifest model: frozen, unknown fields refused."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


# --- settings and shifts -------------------------------------------------------


class SettingRef(Model):
    """A column of the one settings row: `{"table": "settings", "column": "offer_hours"}`."""

    table: Name
    column: Name


Amount = int | float | SettingRef
"""A shift's amount: a whole number, or a whole-number column of the settings row.

Floats are accepted by the structure so the check can refuse them with a sentence.
"""


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


TimeOfDay = str | HoursEdge | SettingRef | RowTime
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


class ColumnRules(Model):
    """Rules that write a column. Later rules (totals) join here."""

    stamp: Stamp | None = None
    code: Code | None = None


class Column(Model):
    """One column of a table."""

    ref: Name
    type: ColumnType
    nullable: bool = False
    max_length: int | None = Field(default=None, alias="maxLength", ge=1)
    values: list[str] | None = None
    references: Name | None = None
    public: bool = False
    default: Scalar = None
    rules: ColumnRules | None = None


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


class MoveSpec(Model):
    """A move written as an object: its target and what it needs."""

    to: Name
    requires: Requires | None = None
    undo: bool = False
    roles: list[str] | None = None


Move = Name | MoveSpec


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
    refuse: str | None = None


class States(Model):
    """The state column, its first state, the moves it lists, and its rules of time."""

    column: Name
    initial: Name
    moves: dict[Name, list[Move]]
    timed: list[Timed] | None = None
    late: list[Late] | None = None
    create: Create | None = None


class Table(Model):
    """One table of the app."""

    key: Name
    columns: list[Column] = Field(min_length=1)
    states: States | None = None


# --- the outbox -----------------------------------------------------------------


class OutboxSettings(Model):
    """The app's one-row settings table."""

    table: Name


class LeadFallback(Model):
    """Where a lead is read when the linked row gives none."""

    table: Name
    column: Name


class Lead(Model):
    """How long before the moment a reminder goes, and optionally at which wall time."""

    via: Name | None = None
    table: Name
    column: Name
    fallback: LeadFallback | None = None
    max: int | None = Field(default=None, ge=1)
    at: str | None = None


class Before(Model):
    """The moment a reminder leads up to."""

    table: Name
    at: Name
    lead: Lead


class Producer(Model):
    """A source of outbox emails: a reminder before a moment, or a message on a state."""

    kind: Literal["reminder", "message"]
    link: Name | None = None
    before: Before | None = None
    table: Name | None = None
    on: ValueWatch | None = None
    subject: str | None = None
    body: str | None = None
    to: Name | None = None


class Outbox(Model):
    """The app's emails: its settings table and its producers."""

    settings: OutboxSettings | None = None
    producers: list[Producer] = Field(default_factory=list)


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
    roles: list[str] = Field(default_factory=list)
    tables: dict[Name, Table] = Field(min_length=1)
    outbox: Outbox | None = None

    @property
    def settings_table(self) -> str | None:
        """The app's one-row settings table, if it names one."""
        return self.outbox.settings.table if self.outbox and self.outbox.settings else None


def load_app(data: Any) -> App:
    """Build the model from parsed JSON; raises pydantic.ValidationError on a bad shape."""
    return App.model_validate(data)
