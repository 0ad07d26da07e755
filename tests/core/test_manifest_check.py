"""The manifest check: the examples pass, the spec's sentences are exact, near misses pass."""

from __future__ import annotations

import pytest

from core.manifest.check import Refusal, check_manifest, check_manifest_text
from tests.core.manifest_cases import (
    EXAMPLE_NAMES,
    EXAMPLES,
    NEVER_PASSES,
    ORDERS,
    STAYS,
    TICKETS,
    Mutation,
    append,
    both,
    drop,
    put,
    refused,
)


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_passes(name: str) -> None:
    assert check_manifest_text((EXAMPLES / f"{name}.json").read_text(encoding="utf-8")) == []


# --- the two sentences of the spec, character for character -------------------------------


def test_undo_sentence_is_the_specs() -> None:
    undo = {"from": "ready", "to": "preparing", "at": {"column": "pickup_at"}}
    assert refused("takeaway", append(*ORDERS, "timed", value=undo)) == [
        (
            "tables.orders.states.timed[2].to",
            'the move from "ready" to "preparing" is an undo, which only a person makes',
        )
    ]


def test_settings_sentence_is_the_specs() -> None:
    own_time = {"table": "stays", "column": "arrival_time"}
    assert refused("hotel", put(*STAYS, "timed", 0, "at", "time", value=own_time)) == [
        (
            "tables.stays.states.timed[0].at.time",
            "“stays” may hold many rows, so “stays.arrival_time” is no setting: read settings"
            " from the app’s one-row settings table (outbox.settings.table), or from a table"
            " that links nowhere, that no table links to, and that keeps no states or limits",
        )
    ]


GOOD: dict[str, tuple[str, Mutation]] = {
    "setting_from_a_table_standing_alone": (
        "hotel",
        both(
            put("tables", "house_rules", value={"key": "id", "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "no_show_at", "type": "text", "maxLength": 5}]}),
            put(*STAYS, "timed", 0, "at", "time", "table", value="house_rules"),
        ),
    ),
    "a_time_kept_on_the_row": (
        "hotel",
        put(*STAYS, "timed", 0, "at", "time", value={"column": "arrival_time"}),
    ),
    "wait_past_the_moment_with_a_time_of_day": (
        # The spec refuses only when neither moment has a time of day.
        "tickets",
        both(put(*TICKETS, "moves", "offered", 0, value=NEVER_PASSES),
             put(*TICKETS, "timed", 0, "at", "time", value="23:00")),
    ),
    "wait_past_the_moment_with_a_fallback": (
        "tickets",
        both(put(*TICKETS, "moves", "offered", 0, value=NEVER_PASSES),
             put(*TICKETS, "timed", 0, "at", "or", value=[{"column": "valid_to"}])),
    ),
    "wait_a_day_timed_25_hours_on": (
        # A calendar day is at most 25 hours: +1 day is not surely later than +25 hours.
        "tickets",
        both(put(*TICKETS, "moves", "offered", 0,
                 value={"to": "valid", "requires": {"time": {"after": {
                     "column": "offer_until", "plus": {"days": 1}}}}}),
             put(*TICKETS, "timed", 0, "at", "plus", value={"hours": 25})),
    ),
    "three_or_moments": (
        "tickets",
        put(*TICKETS, "timed", 0, "at", "or", value=[{"column": "valid_to"}] * 3),
    ),
    "eight_set_columns_at_most": (
        "takeaway",
        put(*ORDERS, "timed", 0, "set", value={"cancel_code": "closed", "note": None}),
    ),
    "a_schema_of_its_own": ("takeaway", put("schema", value="takeaway")),
    "a_schema_named_admin": ("takeaway", put("schema", value="admin")),
    "a_schema_with_pg_inside": ("takeaway", put("schema", value="shop_pg_data")),
    "late_refuse_everyone": (
        "hotel",
        both(put(*STAYS, "late", 0, "mode", value="refuse"),
             drop(*STAYS, "late", 0, "flag"),
             put(*STAYS, "late", 0, "refuse", value="everyone")),
    ),
}  # fmt: skip


@pytest.mark.parametrize(("name", "mutate"), GOOD.values(), ids=GOOD.keys())
def test_close_but_fine_manifest_passes(name: str, mutate: Mutation) -> None:
    assert refused(name, mutate) == []


# --- the text --------------------------------------------------------------------------------


def test_malformed_json_names_line_and_column() -> None:
    text = '{\n  "name": "takeaway",\n  "tables": {,}\n}\n'
    # Line 3 is `  "tables": {,}`; the comma is its 14th character.
    assert check_manifest_text(text) == [
        Refusal(
            "line 3, column 14",
            "this is not JSON: expecting property name enclosed in double quotes",
        )
    ]


def test_manifest_that_is_not_an_object_is_refused() -> None:
    assert check_manifest([1, 2]) == [Refusal("manifest", "write an object {…} here, not [1, 2]")]


def test_refusal_reads_where_then_sentence() -> None:
    assert str(Refusal("tables.orders.key", "x")) == "tables.orders.key: x"


def test_a_number_beyond_a_float_is_refused_where_it_stands() -> None:
    # JSON has no limit on numbers; Python reads 1e400 as Infinity, which no column holds.
    text = '{"name": "x", "tables": {"t": {"key": "id", "columns": [{"ref": "id", "type":'
    text += ' "serial"}, {"ref": "n", "type": "numeric", "default": 1e400}]}}}'
    assert check_manifest_text(text) == [
        Refusal(
            "tables.t.columns[1].default",
            "Infinity is no number a column holds: write a finite number",
        )
    ]
