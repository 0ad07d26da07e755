"""What a manifest rule points at besides time: a column of the one settings row
(`SettingRef`, an `Amount` that may be one, a `SettingCondition`), a weekly opening-hours
table (`HoursRef`, `HoursEdge`), a column's watched values (`ValueWatch`, `ChangeWatch`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from core.manifest.base import Model, Name, Number, Scalar, tag_of

# --- settings -------------------------------------------------------------------


class SettingRef(Model):
    """A column of the one settings row: `{"table": "settings", "column": "offer_hours"}`."""

    table: Name
    column: Name


def amount_tag(value: Any) -> str | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "~number"
    return tag_of({SettingRef: "~setting"}, value, lambda _: "~setting")


Amount = Annotated[
    Annotated[Number, Tag("~number")] | Annotated[SettingRef, Tag("~setting")],
    Discriminator(
        amount_tag,
        custom_error_type="amount",
        custom_error_message="an amount is a whole number or a setting {table, column}",
    ),
]
"""A shift's amount: a whole number, or a whole-number column of the settings row."""


# --- opening hours --------------------------------------------------------------


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


# --- watched values -------------------------------------------------------------


class ValueWatch(Model):
    """A column taking one of these values: `{"column": "status", "values": ["offered"]}`."""

    column: Name
    values: list[Scalar] = Field(min_length=1)


class ChangeWatch(Model):
    """A column whose value changes: `{"column": "pending_email", "changed": true}`."""

    column: Name
    changed: Literal[True]


class SettingCondition(Model):
    """A condition on a column of the settings row: `{"table", "column", "eq"}`."""

    table: Name
    column: Name
    eq: Scalar
