"""Rules for one column's own fields: an enum's values, a text's length, a numeric's
precision and scale, a timestamp's zone, its default, and a foreign key's type."""

from __future__ import annotations

from core.manifest.lookup import WHOLE_NUMBER_TYPES, Lookup, column_of, value_refusal
from core.manifest.model import Column
from core.manifest.moment_rules import Out, Path, no_table
from core.manifest.refusal import Refusal, where


def check_column(lk: Lookup, out: Out, at: Path, name: str, column: Column) -> None:
    """A column's own fields: values for an enum, a length for text, a numeric's precision
    and scale, a timestamp's zone, a default it can take, a foreign key of the right type."""
    held = f'"{name}.{column.ref}" is {column.type}'
    if column.type == "enum" and not column.values:
        out.append(Refusal(where(*at), f'{held}: list its "values"'))
    if column.type != "enum" and column.values is not None:
        out.append(Refusal(where(*at, "values"), f'{held}: "values" is for enum columns'))
    for index, value in enumerate(column.values or []):
        if (column.values or []).index(value) != index:
            out.append(Refusal(where(*at, "values", index), f'"{value}" is listed twice'))
    if column.type != "text" and column.max_length is not None:
        out.append(Refusal(where(*at, "maxLength"), f'{held}: "maxLength" is for text columns'))
    _check_numeric(out, at, held, column)
    _check_zone(out, at, held, column)
    if column.default is not None:
        sentence = value_refusal(name, column, column.default)
        if sentence:
            out.append(Refusal(where(*at, "default"), sentence))
    if column.references is not None:
        _check_reference(lk, out, at, name, column)


def _check_numeric(out: Out, at: Path, held: str, column: Column) -> None:
    """`precision` and `scale` are a numeric's, both given as numeric(precision, scale) is."""
    for part, value in (("precision", column.precision), ("scale", column.scale)):
        if value is not None and column.type != "numeric":
            out.append(Refusal(where(*at, part), f'{held}: "{part}" is for numeric columns'))
    if column.type != "numeric" or column.scale is None:
        return
    if column.precision is None:
        sentence = (
            f'{held} with a "scale" but no "precision": write both, as numeric(precision,'
            f' scale) keeps them (such as "precision": 10, "scale": {column.scale})'
        )
        out.append(Refusal(where(*at, "scale"), sentence))
    elif column.scale > column.precision:
        sentence = (
            f"{held} of {column.precision} digits in all: it cannot keep {column.scale}"
            ' after the point; write a "scale" of at most its "precision"'
        )
        out.append(Refusal(where(*at, "scale"), sentence))


def _check_zone(out: Out, at: Path, held: str, column: Column) -> None:
    """A `timestamp` keeps wall time with no zone: it says whose clock (`"zone": "venue"`)."""
    if column.type == "timestamp" and column.zone is None:
        sentence = (
            f"{held}, a date and wall time with no zone of its own: say whose clock it is"
            ' with "zone": "venue" (read on the connection\'s time zone), or make the column'
            " timestamptz"
        )
        out.append(Refusal(where(*at), sentence))
    elif column.type != "timestamp" and column.zone is not None:
        out.append(Refusal(where(*at, "zone"), f'{held}: "zone" is for timestamp columns'))


def _check_reference(lk: Lookup, out: Out, at: Path, name: str, column: Column) -> None:
    target = lk.table(column.references or "")
    if target is None:
        out.append(Refusal(where(*at, "references"), no_table(column.references or "")))
        return
    key = column_of(target, target.key)
    if key is None:
        return
    wanted = "integer" if key.type in WHOLE_NUMBER_TYPES else key.type
    if column.type != wanted:
        sentence = (
            f'"{name}.{column.ref}" is {column.type} but "{column.references}.{key.ref}"'
            f" is {key.type}: a foreign key to it is {wanted}"
        )
        out.append(Refusal(where(*at, "type"), sentence))
