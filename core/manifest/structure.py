"""The structural half of the check: JSON text and the model's errors as refusals."""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from core.basics.values import text_fault
from core.manifest import base, model
from core.manifest.refusal import Refusal, shown, where

_KINDS = {
    "string_type": "text",
    "int_type": "a whole number",
    "bool_type": "true or false",
    "dict_type": "an object {…}",
    "model_type": "an object {…}",
    "model_attributes_type": "an object {…}",
    "list_type": "a list […]",
}


def _field_names() -> list[str]:
    """Every field name the manifest knows, as written in JSON."""
    names: set[str] = set()
    for value in vars(model).values():
        if isinstance(value, type) and issubclass(value, BaseModel):
            names.update(f.alias or n for n, f in value.model_fields.items())
    return sorted(names)


FIELD_NAMES = _field_names()


def _unknown(err: ErrorDetails) -> str:
    name = str(err["loc"][-1]) if err["loc"] else ""
    guess = difflib.get_close_matches(name, FIELD_NAMES, n=1, cutoff=0.75)
    if guess:
        return f'unknown field "{name}": did you mean "{guess[0]}"?'
    return f'unknown field "{name}": remove it, or check its spelling in the reference'


def _pattern(err: ErrorDetails) -> str:
    if err.get("ctx", {}).get("pattern") == base.WALL_TIME_PATTERN:
        value = shown(err["input"])
        return f'{value} is no time of day: write HH:MM on a 24-hour clock, such as "09:30"'
    return (
        f"{shown(err['input'])} is no name: use lower-case letters, digits and _,"
        " starting with a letter or _"
    )


def _literal(err: ErrorDetails) -> str:
    expected = str(err.get("ctx", {}).get("expected", "")).replace("'", '"')
    return f"{shown(err['input'])} is not allowed here: write {expected}"


def _bounded(err: ErrorDetails) -> str:
    ctx = err.get("ctx", {})
    if "ge" in ctx:
        return f"{shown(err['input'])} is too small: write at least {ctx['ge']:,}"
    if "le" in ctx:
        return f"{shown(err['input'])} is too large: write at most {ctx['le']:,}"
    if "min_length" in ctx:
        return f"this needs at least {ctx['min_length']} entry"
    return f"{shown(err['input'])} is longer than {ctx.get('max_length')} characters"


_SENTENCES: dict[str, Callable[[ErrorDetails], str]] = {
    "extra_forbidden": _unknown,
    "missing": lambda err: f'"{err["loc"][-1]}" is required here',
    "string_pattern_mismatch": _pattern,
    "literal_error": _literal,
    "greater_than_equal": _bounded,
    "less_than_equal": _bounded,
    "too_short": _bounded,
    "string_too_long": _bounded,
    "string_too_short": lambda err: "this may not be empty",
}


def _composite_key(err: ErrorDetails) -> str | None:
    """A table's key written as several columns: the sentence that says what to do instead."""
    loc, given = err["loc"], err["input"]
    if len(loc) != 3 or loc[0] != "tables" or loc[2] != "key" or not isinstance(given, list):
        return None
    return (
        f"{shown(given)} is a key of {len(given)} columns: Adminium finds a row by one column,"
        f" so add a single-column key to {shown(loc[1])} (such as"
        ' "id uuid PRIMARY KEY DEFAULT gen_random_uuid()", or a UNIQUE column it has) and'
        " name that column here"
    )


def _sentence(err: ErrorDetails) -> str:
    composite = _composite_key(err)
    if composite is not None:
        return composite
    kind = err["type"]
    if kind in _SENTENCES:
        return _SENTENCES[kind](err)
    if kind in _KINDS:
        return f"write {_KINDS[kind]} here, not {shown(err['input'])}"
    if kind == "producer" and isinstance(err["input"], dict):
        return f"{err['msg']}, not {shown(err['input'].get('kind'))}"
    if kind in {"scalar", "number", "amount", "time_of_day", "move", "producer"}:
        return f"{err['msg']}, not {shown(err['input'])}"
    message = err["msg"]
    return message[:1].lower() + message[1:]


def _location(loc: tuple[int | str, ...]) -> str:
    # Union tags ("~hours") and pydantic's "[key]" marker are not places in the document.
    parts = [p for p in loc if not (isinstance(p, str) and (p.startswith("~") or p == "[key]"))]
    return where(*parts)


def structural_refusals(error: ValidationError) -> list[Refusal]:
    """Each of the model's errors as a refusal at its place, in document order."""
    return [Refusal(_location(e["loc"]), _sentence(e)) for e in error.errors()]


def content_refusals(data: Any) -> list[Refusal]:
    """Text (names too) and numbers no database holds, anywhere in parsed JSON, in order.

    A NUL or half of a character in a title, a default or a name, or a number beyond
    what a float holds (`1e400` reads as Infinity), would pass the model and fail only
    where the manifest is saved, installed or written from.
    """
    out: list[Refusal] = []
    # Walked with a stack of its own: parsed JSON may be nested as deep as a parser allows.
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), data)]
    while stack:
        at, value = stack.pop()
        name = at[-1] if at and isinstance(at[-1], str) else None
        if name is not None and (fault := text_fault(name)) is not None:
            out.append(Refusal(where(*at), f"the name {shown(name)} holds {fault}: remove it"))
        if isinstance(value, dict):
            stack.extend(((*at, key), inner) for key, inner in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend(((*at, i), inner) for i, inner in reversed(list(enumerate(value))))
        elif isinstance(value, str) and (fault := text_fault(value)) is not None:
            out.append(Refusal(where(*at), f"{shown(value)} holds {fault}: remove it"))
        elif isinstance(value, float) and not math.isfinite(value):
            sentence = f"{json.dumps(value)} is no number a column holds: write a finite number"
            out.append(Refusal(where(*at), sentence))
        elif _number(value) and abs(value) > base.LARGEST_NUMBER:
            out.append(Refusal(where(*at), _too_large(at, value)))
    return out


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


SHIFTS = frozenset({"plus", "minus", "within", "addMinutes"})


def _too_large(at: tuple[str | int, ...], value: int | float) -> str:
    """The sentence for a number past every bound: a shift's own, else the manifest's."""
    if len(at) >= 2 and at[-2] in SHIFTS and at[-1] in base.SHIFT_MOST:
        return f"{number_shown(value)} is {base.SHIFT_WORDS}"
    return (
        f"{number_shown(value)} is beyond the largest number a manifest holds:"
        f" write one from -{base.LARGEST_NUMBER:,} to {base.LARGEST_NUMBER:,}"
        " (the whole numbers every JSON reader keeps exactly)"
    )


def number_shown(value: int | float) -> str:
    """A number for a sentence; one too long to print whole (Python writes no int of more
    than 4,300 digits as text) is said by its count of digits."""
    if isinstance(value, int) and value.bit_length() > 128:
        if value.bit_length() < 14_000:  # at most 4,215 digits: printed to be counted
            return f"a number of {len(str(abs(value))):,} digits"
        digits = int((value.bit_length() - 1) * math.log10(2)) + 1
        return f"a number of some {digits:,} digits"
    return shown(value)


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def decode_text(data: bytes, name: str) -> tuple[str | None, list[Refusal]]:
    """A manifest file's bytes as text; bytes that are not UTF-8 are one refusal naming the file."""
    try:
        # An editor's byte order mark is no mistake of the author's: it is read past.
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        column = len(data[line_start : exc.start].decode("utf-8-sig")) + 1
        sentence = (
            f"this is not UTF-8 text: the byte 0x{data[exc.start]:02x} at line {line},"
            f" column {column} is no UTF-8; save the file as UTF-8"
        )
        return None, [Refusal(name, sentence).printable()]


def parse_text(text: str) -> tuple[Any, list[Refusal]]:
    """Parse manifest text; malformed JSON is one refusal naming its line and column."""
    try:
        return json.loads(text, parse_constant=_no_constant), []
    except json.JSONDecodeError as exc:
        sentence = f"this is not JSON: {exc.msg[:1].lower()}{exc.msg[1:]}"
        return None, [Refusal(f"line {exc.lineno}, column {exc.colno}", sentence)]
    except ValueError as exc:
        if "integer string conversion" in str(exc):  # Python reads no int of 4,300+ digits
            sentence = (
                "a number of more than 4,300 digits is beyond the largest number a manifest"
                f" holds: write one from -{base.LARGEST_NUMBER:,} to {base.LARGEST_NUMBER:,}"
            )
            return None, [Refusal("manifest", sentence)]
        return None, [Refusal("manifest", f"{exc} is not a JSON number: write a number or a text")]
    except RecursionError:
        return None, [Refusal("manifest", "the document is nested too deeply to read")]
