"""Every number a manifest holds has a bound the check names, and no JSON value in a number's
place makes the check raise (issue 33 item 2: a 400-digit shift raised OverflowError)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from core.manifest.check import Refusal, check_manifest, check_manifest_text
from tests.core.manifest_cases import EXAMPLE_NAMES, example, node

SHIFT = "is too long: a shift of at most 3,650 days (87,600 hours, 5,256,000 minutes)"
AFTER = ("tables", "tickets", "states", "moves", "valid", 1, "requires", "time", "after")
AFTER_AT = "tables.tickets.states.moves.valid[1].requires.time.after"


def _refusals(name: str, *path: str | int, value: Any) -> list[Refusal]:
    doc = example(name)
    node(doc, *path[:-1])[path[-1]] = value
    return check_manifest(doc)


def test_a_shift_of_400_digits_is_refused_with_the_shift_bound() -> None:
    days = int("9" * 400)
    refusals = _refusals("tickets", *AFTER, "minus", value={"days": days})
    assert refusals == [Refusal(f"{AFTER_AT}.minus.days", f"a number of 400 digits {SHIFT}")]


def test_a_number_python_cannot_read_in_manifest_text_is_one_refusal() -> None:
    text = json.dumps(example("tickets")).replace(
        '{"minutes": 30}', '{"days": 1' + "0" * 5000 + "}"
    )
    assert check_manifest_text(text) == [
        Refusal(
            "manifest",
            "a number of more than 4,300 digits is beyond the largest number a manifest holds:"
            " write one from -9,007,199,254,740,991 to 9,007,199,254,740,991",
        )
    ]


def test_a_shift_one_past_ten_years_is_refused_in_each_unit() -> None:
    for unit, most in (("days", 3650), ("hours", 87_600), ("minutes", 5_256_000)):
        assert _refusals("tickets", *AFTER, "minus", value={unit: most}) == []
        refusals = _refusals("tickets", *AFTER, "minus", value={unit: most + 1})
        assert refusals == [Refusal(f"{AFTER_AT}.minus.{unit}", f"{most + 1:,} {unit} {SHIFT}")]


def test_a_number_past_what_json_keeps_exactly_is_refused_anywhere() -> None:
    refusals = _refusals("takeaway", "tables", "orders", "limits", 0, "max", value=2**53)
    assert refusals == [
        Refusal(
            "tables.orders.limits[0].max",
            "9007199254740992 is beyond the largest number a manifest holds: write one from"
            " -9,007,199,254,740,991 to 9,007,199,254,740,991 (the whole numbers every JSON"
            " reader keeps exactly)",
        )
    ]


def test_a_default_past_postgresql_integer_is_refused() -> None:
    path = ("tables", "settings", "columns", 2)
    doc = example("takeaway")
    column = node(doc, *path)
    assert column["type"] == "integer", column
    column["default"] = 2**31
    assert check_manifest(doc) == [
        Refusal(
            "tables.settings.columns[2].default",
            f'"settings.{column["ref"]}" takes a whole number from -2,147,483,648 to'
            " 2,147,483,647, not 2147483648",
        )
    ]


def test_max_length_past_postgresql_varchar_is_refused() -> None:
    path = ("tables", "customers", "columns", 1, "maxLength")
    assert _refusals("takeaway", *path, value=10_485_760) == []
    assert _refusals("takeaway", *path, value=10_485_761) == [
        Refusal(
            "tables.customers.columns[1].maxLength",
            "10485761 is too large: write at most 10,485,760",
        )
    ]


# --- the property: any JSON value where a manifest holds a number --------------------------

UNITS = ("minutes", "hours", "days")
AMOUNT_KEYS = frozenset({*UNITS, "max", "min"})
MOMENT_KEYS = frozenset({"at", "until", "after", "before", "moment"})


def _positions(doc: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Where a number stands, or may stand: each number, each setting read as an amount,
    and a shift of each unit on each moment."""
    found: list[tuple[Any, ...]] = []
    if isinstance(doc, int | float) and not isinstance(doc, bool):
        found.append(at)
    elif isinstance(doc, dict):
        if at and at[-1] in AMOUNT_KEYS and set(doc) == {"table", "column"}:
            found.append(at)
        if at and at[-1] in MOMENT_KEYS and "column" in doc:
            found += [(*at, side, unit) for side in ("plus", "minus") for unit in UNITS]
        for key, value in doc.items():
            found += _positions(value, (*at, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            found += _positions(value, (*at, index))
    return found


def _put(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    for part in path[:-1]:
        doc = doc.setdefault(part, {}) if isinstance(doc, dict) else doc[part]
    if isinstance(doc, dict) and path[-2:-1] and path[-2] in ("plus", "minus"):
        doc.clear()  # a shift names one unit: the one drawn
    doc[path[-1]] = value


# Past 4,300 digits Python prints no int (nor can hypothesis show one it draws): made by map.
BEYOND_PRINTING = st.integers(1, 3).map(lambda k: (-1) ** k * 10 ** (4000 + 1000 * k))
HUGE = (
    st.integers(min_value=-(10**400), max_value=10**400)
    | BEYOND_PRINTING
    | st.sampled_from(
        [int("9" * 400), -int("9" * 400), 2**53, 2**63, 2**1024, 3651, 87_601, 5_256_001]
    )
)
NUMBERS = (
    HUGE
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([0, -1, 0.5, -0.0, 1e308, -1e308, 5e-324, 1e16])
)
JSON = st.recursive(
    st.none() | st.booleans() | NUMBERS | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def numbered(draw: st.DrawFn) -> Any:
    """An example with one to three of its number places given any JSON value."""
    doc = example(draw(st.sampled_from(EXAMPLE_NAMES)))
    places = _positions(doc)
    for _ in range(draw(st.integers(1, 3))):
        _put(doc, draw(st.sampled_from(places)), draw(NUMBERS | JSON))
    return doc


@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@seed(33)
@given(numbered())
def test_any_json_in_a_number_place_gets_ok_or_refusals(doc: Any) -> None:
    refusals = check_manifest(doc)
    assert isinstance(refusals, list)
    for refusal in refusals:
        assert isinstance(refusal, Refusal) and refusal.where and refusal.sentence
        json.dumps([refusal.where, refusal.sentence])  # each can be answered as JSON


def test_the_positions_cover_each_kind_of_number() -> None:
    """The property reaches shifts, limits, ledger bounds, leads, lengths and defaults."""
    places = {p[-1] for name in EXAMPLE_NAMES for p in _positions(example(name))}
    assert {"minutes", "hours", "days", "max", "min", "maxLength", "length", "default"} <= places
