"""Values no column holds, whoever writes them: the rule the pipeline applies to each value.

PostgreSQL text never holds NUL; a lone surrogate (half of a UTF-16 pair, valid in
JSON) is no character and cannot be sent as UTF-8; NaN and Infinity are no amount; a
time too close to the ends of the years 1 to 9999 may be stored but cannot be read back
on every clock. The driver or the database would refuse each in its own words, or store
a row nobody can read: the pipeline refuses them first, as VALUE_REFUSED.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from core.basics.errors import ValueRefused

EARLIEST = datetime(1, 1, 2, tzinfo=UTC)
LATEST = datetime(9999, 12, 30, 23, 59, 59, 999999, tzinfo=UTC)
"""The instants a timestamptz takes: a day inside Python's years 1 to 9999, so the
instant reads back on any venue's clock (offsets stay within a day)."""


def text_fault(text: str) -> str | None:
    """What a text holds that no database text may (a NUL, half of a character), or None."""
    if "\x00" in text:
        return "a NUL character (\\u0000), which no database text may hold"
    if any("\ud800" <= char <= "\udfff" for char in text):
        return "half of a character (a lone surrogate), which is no text"
    return None


def checked_value(
    column: str, kind: str, value: Any, *, scale: int | None = None, precision: int | None = None
) -> Any:
    """A writer's value for a column of manifest type `kind`, as the column takes it.

    Text is refused with a NUL or a lone surrogate, a number that is not finite (or, for a
    numeric of a `scale`, with more decimals than it keeps: never rounded), a time without
    its offset (a `timestamp` keeps wall time: with or without one) or out of range, and a
    UUID that is none (one given is kept in its canonical text). A time or date given as
    ISO 8601 text (an import's JSON) is read here, so it meets the same rule as one given
    as a value.
    """
    if value is None:
        return None
    if isinstance(value, Mapping | list | tuple | set):
        raise _refused(column, "takes one value, not a list or an object")
    if isinstance(value, str):
        fault = text_fault(value)
        if fault is not None:
            raise ValueRefused(
                f"the value for {column!r} holds {fault}", {"column": column, "reason": "type"}
            )
        value = _read_text(column, kind, value)
    if isinstance(value, float | Decimal) and not _finite(value):
        raise _refused(column, "takes a finite number, not NaN or Infinity")
    if kind == "timestamptz" and isinstance(value, datetime):
        if value.utcoffset() is None:
            raise _refused(column, "takes a time with its offset")
        if not EARLIEST <= value <= LATEST:
            raise _refused(column, "takes a time from 0001-01-02 to 9999-12-30 (UTC)")
    if kind == "timestamp" and isinstance(value, datetime):
        aware = value if value.utcoffset() is not None else value.replace(tzinfo=UTC)
        if not EARLIEST <= aware <= LATEST:
            raise _refused(column, "takes a time from 0001-01-02 to 9999-12-30")
    if kind == "uuid":
        return _uuid(column, value)
    if kind == "numeric" and precision is not None:
        _fits_numeric(column, value, precision, scale or 0)
    return value


def _uuid(column: str, value: Any) -> str:
    """A UUID as its canonical text (lower case, with hyphens)."""
    if isinstance(value, uuid.UUID):
        return str(value)
    try:
        return str(uuid.UUID(value)) if isinstance(value, str) else _no_uuid(column)
    except ValueError:
        return _no_uuid(column)


def _no_uuid(column: str) -> str:
    raise _refused(column, "takes a UUID (such as 3f2b8c1e-7d4a-4e0b-9c5d-2a6f1e8b7c90)")


def _fits_numeric(column: str, value: Any, precision: int, scale: int) -> None:
    """A number that numeric(precision, scale) keeps as it is: at most `scale` decimals (the
    database would round the rest away) and `precision - scale` digits before the point."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal | str):
        return
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        return  # not a number: the database refuses it in its own words
    if not number.is_finite():
        return
    kept = f"numeric({precision},{scale})"
    details = {"column": column, "reason": "type", "scale": scale, "precision": precision}
    exponent = number.normalize().as_tuple().exponent
    assert isinstance(exponent, int)
    if -exponent > scale:
        raise ValueRefused(
            f"{column!r} keeps at most {scale} decimals (the column is {kept}), not {value}:"
            " it is refused rather than rounded",
            details,
        )
    whole = abs(number).to_integral_value(rounding="ROUND_DOWN")
    if whole and len(whole.as_tuple().digits) > precision - scale:
        raise ValueRefused(
            f"{column!r} keeps at most {precision - scale} digits before the point"
            f" (the column is {kept}), not {value}",
            details,
        )


def _read_text(column: str, kind: str, text: str) -> Any:
    """Text given for a time, a date or a number, read as the column will read it."""
    if kind == "timestamptz":
        try:
            return datetime.fromisoformat(text)
        except ValueError:
            raise _refused(column, "takes an ISO 8601 time with its offset") from None
    if kind == "timestamp":
        try:
            return datetime.fromisoformat(text)
        except ValueError:
            raise _refused(column, "takes an ISO 8601 date and time") from None
    if kind == "date":
        try:
            return date.fromisoformat(text)
        except ValueError:
            raise _refused(column, "takes a date YYYY-MM-DD") from None
    if kind == "numeric":
        # PostgreSQL reads 'NaN' and 'Infinity' as numeric; anything else it cannot read
        # it refuses itself.
        try:
            number = Decimal(text.strip())
        except InvalidOperation:
            return text
        if not number.is_finite():
            raise _refused(column, "takes a finite number, not NaN or Infinity")
    return text


def _finite(number: float | Decimal) -> bool:
    return number.is_finite() if isinstance(number, Decimal) else math.isfinite(number)


def _refused(column: str, why: str) -> ValueRefused:
    return ValueRefused(f"{column!r} {why}", {"column": column, "reason": "type"})
