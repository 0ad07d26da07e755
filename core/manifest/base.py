"""The building blocks of the manifest model: names, wall times, fixed values, the base class."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, PlainValidator, StringConstraints, WithJsonSchema
from pydantic_core import PydanticCustomError

NAME_PATTERN = r"^[a-z_][a-z0-9_]*$"
WALL_TIME_PATTERN = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"

LARGEST_NUMBER = 2**53 - 1
"""The bound on every number a manifest holds: 9,007,199,254,740,991, the largest whole
number every JSON reader keeps exactly (a float's 53 bits). Rules bound their own numbers
tighter (a shift, a text's length, a whole-number column's values)."""

SHIFT_DAYS = 3650
"""The longest shift (`plus`, `minus`, a stamp's `addMinutes`): 3,650 days, ten years."""
SHIFT_MOST = {"days": SHIFT_DAYS, "hours": SHIFT_DAYS * 24, "minutes": SHIFT_DAYS * 24 * 60}
SHIFT_WORDS = (
    f"too long: a shift of at most {SHIFT_DAYS:,} days ({SHIFT_DAYS * 24:,} hours,"
    f" {SHIFT_DAYS * 24 * 60:,} minutes)"
)

TEXT_MOST = 10_485_760
"""The most characters `maxLength` may give: PostgreSQL's longest character varying(n)."""

INTEGER_RANGE = (-(2**31), 2**31 - 1)
"""What a `serial` or `integer` column holds: PostgreSQL's integer."""

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
"""The weekday names an hours table uses, in `date.weekday()` order (Monday is 0)."""

Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN, max_length=63)]
"""A table, column, state or role name: lower-case SQL identifier."""

WallTime = Annotated[str, StringConstraints(pattern=WALL_TIME_PATTERN)]
"""A wall time written `HH:MM` on a 24-hour clock."""


def _scalar(value: Any) -> Any:
    """Accept a JSON text, number, true/false or null; refuse lists and objects."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise PydanticCustomError("scalar", "a value here is text, a number, true, false or null")


def _number(value: Any) -> Any:
    """Accept a JSON number (whole or not: the check refuses fractions with a sentence)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    raise PydanticCustomError("number", "an amount is a whole number or a setting {table, column}")


Scalar = Annotated[
    str | int | float | bool | None,
    PlainValidator(_scalar),
    WithJsonSchema({"type": ["string", "number", "boolean", "null"]}),
]
"""A fixed value: text, a number, true or false, or null."""

Number = Annotated[int | float, PlainValidator(_number), WithJsonSchema({"type": "number"})]


def tag_of(tags: dict[type, str], value: Any, pick: Any) -> str | None:
    """The union member a value is meant as: by its model class, else by `pick(dict)`."""
    for cls, tag in tags.items():
        if isinstance(value, cls):
            return tag
    return pick(value) if isinstance(value, dict) else None


class Model(BaseModel):
    """Base of every manifest model: frozen, strict, unknown fields refused."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, strict=True)
