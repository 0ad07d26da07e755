"""checked_value: what no column holds is refused, for any writer; anything else passes."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest

from core.basics.errors import ValueRefused
from core.basics.values import checked_value, text_fault

PLUS_14, MINUS_12 = timezone(timedelta(hours=14)), timezone(timedelta(hours=-12))

REFUSED: dict[str, tuple[str, Any, str]] = {
    "nan": ("numeric", float("nan"), "takes a finite number"),
    "infinity": ("numeric", float("inf"), "takes a finite number"),
    "decimal-snan": ("numeric", Decimal("sNaN"), "takes a finite number"),
    "nan-as-text": ("numeric", "nan", "takes a finite number"),
    "minus-inf-as-text": ("numeric", "-Inf", "takes a finite number"),
    "infinity-in-an-integer": ("integer", float("inf"), "takes a finite number"),
    "nul": ("text", "a\x00b", "holds a NUL character"),
    "lone-high-surrogate": ("text", "A\ud800B", "holds half of a character"),
    "lone-low-surrogate": ("enum", "\udfff", "holds half of a character"),
    "nul-as-a-time": ("timestamptz", "2026-03-27T12:00\x00", "holds a NUL character"),
    "naive-time": ("timestamptz", datetime(2026, 3, 27, 12), "with its offset"),
    "past-the-last-day": ("timestamptz", datetime(9999, 12, 31, tzinfo=UTC), "to 9999-12-30"),
    "past-9999-in-utc": ("timestamptz", datetime(9999, 12, 31, 20, tzinfo=MINUS_12), "to 9999"),
    "year-0-in-utc": ("timestamptz", datetime(1, 1, 1, 10, tzinfo=PLUS_14), "from 0001-01-02"),
    "time-text-past-9999": ("timestamptz", "10000-01-01T00:00Z", "an ISO 8601 time"),
    "infinity-as-a-time": ("timestamptz", "infinity", "an ISO 8601 time"),
    "time-text-without-offset": ("timestamptz", "2026-03-27 12:00", "with its offset"),
    "date-text-past-9999": ("date", "10000-01-01", "a date YYYY-MM-DD"),
    "a-list": ("text", ["a"], "not a list or an object"),
    "an-object": ("numeric", {"a": 1}, "not a list or an object"),
}


@pytest.mark.parametrize(("kind", "value", "why"), REFUSED.values(), ids=REFUSED.keys())
def test_refused(kind: str, value: Any, why: str) -> None:
    with pytest.raises(ValueRefused) as refused:
        checked_value("col", kind, value)
    assert why in refused.value.message
    assert refused.value.details == {"column": "col", "reason": "type"}
    # The message names the column, never the value (which may not even print).
    refused.value.message.encode("utf-8")


ACCEPTED: dict[str, tuple[str, Any, Any]] = {
    "null": ("numeric", None, None),
    "a-number": ("numeric", Decimal("12.50"), Decimal("12.50")),
    "a-float": ("numeric", 1.5, 1.5),
    "numeric-text-left-to-the-database": ("numeric", "12.5", "12.5"),
    "text-the-database-refuses-itself": ("numeric", "twelve", "twelve"),
    "a-whole-number": ("integer", 2**40, 2**40),
    "emoji-and-accents": ("text", "café 🍰", "café 🍰"),
    "a-text-named-nan": ("text", "NaN", "NaN"),
    "true": ("boolean", True, True),
    "first-day": ("timestamptz", datetime(1, 1, 2, tzinfo=UTC), datetime(1, 1, 2, tzinfo=UTC)),
    "time-text-with-offset": (
        "timestamptz",
        "2026-03-27T12:00:00+01:00",
        datetime(2026, 3, 27, 11, tzinfo=UTC),
    ),
    "date-text": ("date", "2026-03-27", date(2026, 3, 27)),
    "the-last-date": ("date", date(9999, 12, 31), date(9999, 12, 31)),
}


@pytest.mark.parametrize(("kind", "value", "kept"), ACCEPTED.values(), ids=ACCEPTED.keys())
def test_accepted(kind: str, value: Any, kept: Any) -> None:
    assert checked_value("col", kind, value) == kept


def test_text_fault_names_what_the_text_holds() -> None:
    assert text_fault("fine") is None
    assert text_fault("\x00") == "a NUL character (\\u0000), which no database text may hold"
    assert text_fault("\ud83d") == "half of a character (a lone surrogate), which is no text"
    # A whole character outside the basic plane is no surrogate in Python's text.
    assert text_fault("\U0001f370") is None
