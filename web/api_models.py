"""The pydantic models of each table's values, built from the manifest's columns: the API
validates a writer's `values` with them, and the OpenAPI document is their JSON Schema.

One model per table and kind of write (`create`, `update`, `guest`), its fields the
columns that writer may send, each typed as the server takes it: whole numbers within 32
bits, finite numbers, true or false, text without NUL (and within `maxLength`), one of an
enum's values, ISO 8601 dates, times with their offset inside the years the pipeline
takes (`core.basics.values`; a `timestamp` takes a wall time without one too), UUIDs.
`null` only for a nullable column; on a create, a column that is neither nullable nor
filled in by the server (a manifest default, a `uuid` key) must be sent. A name that is
no field of the model (an unknown column, the state, the key, a stamp, a code, a total)
passes to the pipeline, which refuses it as COLUMN_READ_ONLY; the schema says
`additionalProperties: false`.

What no schema can say stays with the data: a `references` column names a row that must
exist (VALUE_REFUSED `foreign-key` otherwise), and a venue's own CHECKs.
"""

from __future__ import annotations

import functools
import json
from datetime import timedelta
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidationError,
    WithJsonSchema,
    create_model,
)

from core.basics.errors import ValueRefused
from core.basics.values import EARLIEST, LATEST, checked_value
from core.manifest.model import Column, Table
from core.rules.columns import owned_columns

Kind = Literal["create", "update", "guest"]

INT_RANGE = (-(2**31), 2**31 - 1)
"""What an `integer` (and a `serial`) column holds: PostgreSQL's 32-bit integer."""

NO_NUL = r"^[^\x00]*$"
"""Text a database text may hold (no NUL; a lone surrogate is no JSON text either)."""


def _near_ends() -> str:
    """The dates (written with any offset) that may fall outside EARLIEST..LATEST in UTC:
    an offset moves a time by less than a day, so the day of each end and the day beyond."""
    days = [EARLIEST.date() - timedelta(days=1), EARLIEST.date(), LATEST.date()]
    days.append(LATEST.date() + timedelta(days=1))
    return "^(" + "|".join(d.isoformat() for d in days) + ")"


TIME_SCHEMA: dict[str, Any] = {"format": "date-time", "not": {"pattern": _near_ends()}}
"""A timestamptz: RFC 3339 with its offset, not within a day of the years' ends."""

WALL_TIME_SCHEMA: dict[str, Any] = {
    **TIME_SCHEMA,
    "description": "A time with its offset, stored as the wall time it shows on the venue's"
    " clock; a wall time with no offset (YYYY-MM-DDTHH:MM[:SS]) is taken as it is, on the"
    " venue's clock.",
}
"""A `timestamp` (`"zone": "venue"`): as a timestamptz, and a wall time without an offset
taken too (the schema names the form every client can send)."""

TYPE_WORDS = {
    "timestamptz": "takes an ISO 8601 time with its offset",
    "timestamp": "takes an ISO 8601 date and time (on the venue's clock without an offset)",
    "uuid": "takes a UUID",
    "date": "takes a date YYYY-MM-DD",
    "integer": "takes a whole number within 32 bits",
    "serial": "takes a whole number within 32 bits",
    "numeric": "takes a number",
    "boolean": "takes true or false",
    "text": "takes text",
    "enum": "takes one of its values",
}
"""What a refusal says a column takes, by its type."""


def _read_as(column: str, kind: str) -> AfterValidator:
    """The pipeline's own reading of a time or a date (core.basics.values), refusing as it does."""
    return AfterValidator(lambda text: (checked_value(column, kind, text), text)[1])


def _whole(value: int | float) -> int:
    """A JSON number with no fraction as the whole number it is (JSON's 3.0 is 3)."""
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError("a whole number")
        return int(value)
    return value


_INT32 = Annotated[StrictInt, Field(ge=INT_RANGE[0], le=INT_RANGE[1])]
WHOLE = Annotated[
    _INT32 | Annotated[StrictFloat, Field(ge=INT_RANGE[0], le=INT_RANGE[1])],
    AfterValidator(_whole),
    WithJsonSchema(TypeAdapter(_INT32).json_schema()),
]
"""A whole number within 32 bits: in JSON Schema an `integer` is any number without a
fraction (3.0 included), and so it is here."""


def _finite(value: int | float) -> Decimal:
    number = Decimal(str(value))
    if not number.is_finite():
        raise ValueError("a finite number")
    return number


def enum_values(spec: Table, column: Column) -> list[str]:
    """An enum column's values: its own, else the table's states (core.store.store's rule)."""
    if column.values:
        return list(column.values)
    states = spec.states
    if states is None:
        return []
    found = [states.initial, *states.moves]
    for moves in states.moves.values():
        found.extend(m if isinstance(m, str) else m.to for m in moves)
    return list(dict.fromkeys(found))


def value_type(spec: Table, column: Column) -> Any:
    """The annotation of one column's value (never null): the server's check and its schema."""
    kind = column.type
    if kind in ("integer", "serial"):
        return WHOLE
    if kind == "numeric":
        return Annotated[
            StrictInt | Annotated[float, Field(strict=True, allow_inf_nan=False)],
            AfterValidator(_finite),
        ]
    if kind == "boolean":
        return StrictBool
    if kind == "timestamptz":
        return Annotated[
            StrictStr, _read_as(column.ref, kind), Field(json_schema_extra=TIME_SCHEMA)
        ]
    if kind == "timestamp":
        return Annotated[
            StrictStr, _read_as(column.ref, kind), Field(json_schema_extra=WALL_TIME_SCHEMA)
        ]
    if kind == "date":
        return Annotated[
            StrictStr, _read_as(column.ref, kind), Field(json_schema_extra={"format": "date"})
        ]
    if kind == "uuid":
        return Annotated[
            StrictStr, _read_as(column.ref, kind), Field(json_schema_extra={"format": "uuid"})
        ]
    if kind == "enum":
        values = enum_values(spec, column)
        if values:
            return Literal[tuple(values)]
    return Annotated[StrictStr, Field(max_length=column.max_length, pattern=NO_NUL)]


def writable(spec: Table, kind: Kind) -> list[Column]:
    """The columns a writer of this kind may send (the pipeline refuses the others)."""
    owned = owned_columns(spec)
    found = []
    for column in spec.columns:
        if column.ref in owned:
            continue
        if column.ref == spec.key and (kind != "create" or column.type == "serial"):
            continue
        if kind == "guest" and not column.public:
            continue
        found.append(column)
    return found


def required(spec: Table, column: Column, kind: Kind) -> bool:
    """Whether a create must send the column: not nullable and nothing the server fills in
    (`core.rules.columns.left_out_values`: a manifest default, a `uuid` key's random UUID)."""
    filled = column.default is not None or (column.ref == spec.key and column.type == "uuid")
    return kind == "create" and not column.nullable and not filled


def left_out_words(spec: Table, column: Column) -> str | None:
    """What the server writes on a create for a column the writer leaves out, in words."""
    if column.default is not None:
        return f"Left out, the server writes its default, {json.dumps(column.default)}."
    if column.ref == spec.key and column.type == "uuid":
        return "Left out, the server makes a random UUID."
    return None


def scale_words(column: Column) -> str | None:
    """A numeric's scale in words: more decimals are refused, never rounded."""
    if column.type != "numeric" or column.precision is None:
        return None
    kept = f"numeric({column.precision},{column.scale or 0})"
    return (
        f"At most {column.scale or 0} decimals and {column.precision - (column.scale or 0)}"
        f" digits before the point ({kept}): a value with more is refused, never rounded."
    )


_SPEC_TEXTS: dict[int, tuple[Table, str]] = {}
"""A table spec's JSON by the spec object (held, so its id is not reused while here)."""


def _spec_text(spec: Table) -> str:
    """The spec's JSON, the key of the models built from it: dumped once per spec object
    (a manifest parsed again is a new object), not at each write."""
    kept = _SPEC_TEXTS.get(id(spec))
    if kept is not None and kept[0] is spec:
        return kept[1]
    if len(_SPEC_TEXTS) >= 1024:
        _SPEC_TEXTS.clear()
    text = spec.model_dump_json(by_alias=True)
    _SPEC_TEXTS[id(spec)] = (spec, text)
    return text


@functools.lru_cache(maxsize=1024)
def _model(table: str, spec_json: str, kind: Kind, partial: bool) -> type[BaseModel]:
    spec = Table.model_validate_json(spec_json)
    fields: dict[str, Any] = {}
    for number, column in enumerate(writable(spec, kind)):
        annotation = value_type(spec, column)
        if column.nullable:
            annotation = annotation | None
        said = [column.title] if column.title else []
        if column.references:
            said.append(f"the key of a row of {column.references}, which must exist")
        about = "; ".join(said) or None
        filled = left_out_words(spec, column) if kind == "create" else None
        more = [words for words in (scale_words(column), filled) if words]
        if more:
            about = " ".join([f"{about}." if about else "", *more]).strip()
        if required(spec, column, kind) and not partial:
            info = Field(alias=column.ref, title=column.ref, description=about)
        else:
            info = Field(default=None, alias=column.ref, title=column.ref, description=about)
        # Column names may be any SQL name, BaseModel's own attributes included: each
        # field has a name of its own and the column's name as its alias.
        fields[f"column_{number}"] = (annotation, info)
    config = ConfigDict(extra="forbid", strict=True, populate_by_name=False)
    model: type[BaseModel] = create_model(f"{table}.{kind}", __config__=config, **fields)
    return model


def values_model(table: str, spec: Table, kind: Kind, *, partial: bool = False) -> type[BaseModel]:
    """The model of a table's `values` for one kind of write (built once per manifest);
    `partial`: no column required (the pipeline refuses another name first)."""
    return _model(table, _spec_text(spec), kind, partial)


def values_schema(table: str, spec: Table, kind: Kind) -> dict[str, Any]:
    """The JSON Schema of a table's `values` for one kind of write: the model's own."""
    schema = values_model(table, spec, kind).model_json_schema(by_alias=True)
    schema.pop("title", None)
    columns = {c.ref: c for c in spec.columns}
    for name, field in schema["properties"].items():
        # The field's None stands only for "not sent". Left out of a create, a column with
        # a manifest default takes it from the server (the schema names it); any other
        # keeps its own (the database's default, or, on an update, what it holds).
        field.pop("default", None)
        column = columns.get(name)
        if kind == "create" and column is not None and column.default is not None:
            field["default"] = column.default
    return schema


def key_schema(spec: Table) -> dict[str, Any]:
    """The JSON Schema of the table's key (in a path or `after`): its column's value type."""
    column = next(c for c in spec.columns if c.ref == spec.key)
    model = create_model("key", key=(value_type(spec, column), ...))
    found: dict[str, Any] = model.model_json_schema()["properties"]["key"]
    found.pop("title", None)
    return found


def values_in(table: str, spec: Table, kind: Kind, raw: dict[str, Any]) -> dict[str, Any]:
    """A writer's JSON values checked by the table's model, as the columns take them.

    Names that are no field of the model pass unchanged: the pipeline refuses each with
    its own reason (unknown, state, key, stamp, code). A value the model refuses is
    VALUE_REFUSED: `not-null` for a null or a missing required column, `check` for a
    value not among an enum's, `type` for anything else (core.basics.values' words for times).
    """
    fields = values_model(table, spec, kind).model_fields
    names = {info.alias: name for name, info in fields.items()}
    known = {name: value for name, value in raw.items() if name in names}
    # A column this writer may not send is typed all the same, before any rule decides
    # what to drop: a late flag's `"yes"` is refused as no true or false, not dropped.
    others = _other_columns(table, _spec_text(spec), kind)
    for name, value in raw.items():
        if name in others and value is not None:
            try:
                others[name].validate_python(value)
            except ValidationError as error:
                raise _refusal(spec, error, {name: value}, name) from None
    # A name the pipeline refuses (COLUMN_READ_ONLY) is told before a column left out.
    model = values_model(table, spec, kind, partial=len(known) < len(raw))
    try:
        parsed = model.model_validate(known)
    except ValidationError as error:
        raise _refusal(spec, error, known) from None
    checked = {alias: getattr(parsed, names[alias]) for alias in known}
    return {name: checked.get(name, value) for name, value in raw.items()}


@functools.lru_cache(maxsize=1024)
def _other_columns(table: str, spec_json: str, kind: Kind) -> dict[str, TypeAdapter[Any]]:
    """The table's columns that are no field of the kind's model (the state, the key, a
    stamp, a code, a total, a late flag, a column a guest may not send), each with the
    adapter of its value's type."""
    spec = Table.model_validate_json(spec_json)
    writer = {column.ref for column in writable(spec, kind)}
    return {
        column.ref: TypeAdapter(value_type(spec, column), config=ConfigDict(strict=True))
        for column in spec.columns
        if column.ref not in writer
    }


def _refusal(
    spec: Table, error: ValidationError, known: dict[str, Any], name: str | None = None
) -> ValueRefused:
    """The first value the model (or, for `name`, its column's adapter) refused, as the
    pipeline would refuse it."""
    first = error.errors(include_url=False)[0]
    name = name if name is not None else str(first["loc"][0])
    column = next(c for c in spec.columns if c.ref == name)
    if first["type"] == "missing" or (name in known and known[name] is None):
        return ValueRefused(
            f"{name!r} takes a value: it is not nullable",
            {"column": name, "reason": "not-null"},
        )
    if column.type == "enum" and first["type"] == "literal_error":
        values = ", ".join(json.dumps(v) for v in enum_values(spec, column))
        return ValueRefused(f"{name!r} takes one of {values}", {"column": name, "reason": "check"})
    if first["type"] == "string_too_long":
        most = column.max_length
        words = f"takes at most {most} characters (the column is character varying({most}))"
        return ValueRefused(f"{name!r} {words}", {"column": name, "reason": "type"})
    return ValueRefused(f"{name!r} {TYPE_WORDS[column.type]}", {"column": name, "reason": "type"})
