"""Words for staff: a refusal in plain words first with what to do and its code apart
(`core.rules.refusals.staff_refusal`), who moved a row last (`core.time.words.mover_words`),
and times to the minute. Expected sentences are written out by hand; times are worked out
from the calendar (Friday 10 July 2026, London on BST, UTC+1)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from core.manifest.model import Table
from core.rules.refusals import staff_refusal
from core.time.words import day_time_words, mover_words

LONDON = ZoneInfo("Europe/London")
ORDERS = Table.model_validate(
    {
        "key": "id",
        "columns": [
            {"ref": "id", "type": "serial"},
            {"ref": "status", "type": "enum", "values": ["placed", "cancelled", "no_show"]},
            {"ref": "note", "type": "text", "nullable": True},
            {"ref": "address", "type": "text", "nullable": True},
            {"ref": "customer_id", "type": "integer", "nullable": True, "title": "Customer"},
        ],
        "states": {
            "column": "status",
            "initial": "placed",
            "moves": {"placed": ["cancelled", "no_show"]},
            "titles": {"no_show": "No show"},
        },
    }
)
PARTS = Table.model_validate(
    {"key": "id", "title": "Parts", "columns": [{"ref": "id", "type": "serial"}]}
)
TABLES = {"orders": ORDERS, "parts": PARTS}
CHECK = {"reason": "check", "constraint": "cancelled_needs_note", "column": "note"}
DEV = "the database refused the value: orders.note must be filled when cancelled"


def said(code: str, details: dict[str, Any], **kw: Any) -> tuple[str, str, str]:
    found = staff_refusal(code, details, DEV, tables=TABLES, table="orders", zone=LONDON, **kw)
    return found.words, found.todo, found.code


@pytest.mark.parametrize(
    ("details", "row", "to", "words", "todo"),
    [
        pytest.param(
            {**CHECK, "comment": "must be filled when cancelled"},
            {"note": None},
            "cancelled",
            "Needs a note before it can be cancelled",
            "Fill in Note, then try again.",
            id="an_empty_field_a_move_needs",
        ),
        pytest.param(
            {**CHECK, "column": "address"},
            {"address": ""},
            "no_show",
            "Needs an address before it can be no show",
            "Fill in Address, then try again.",
            id="an_before_a_vowel_and_the_states_title",
        ),
        pytest.param(
            {**CHECK, "comment": "must be filled when cancelled"},
            {"note": "x"},
            "cancelled",
            "Note must be filled when cancelled",
            "Change Note, then try again.",
            id="the_venues_own_words_when_the_field_holds_a_value",
        ),
        pytest.param(
            {**CHECK},
            {"note": "x"},
            "cancelled",
            "Note breaks a rule of the table",
            "Change Note, then try again.",
            id="a_check_without_words",
        ),
        pytest.param(
            {"reason": "foreign-key", "column": "customer_id"},
            None,
            None,
            "Customer must name a row that exists",
            "Pick a customer that exists.",
            id="a_foreign_key_by_its_title",
        ),
        pytest.param(
            {"reason": "unique", "column": "note"},
            None,
            None,
            "Note is already taken by another row",
            "Choose another note.",
            id="a_unique_value",
        ),
    ],
)
def test_a_value_refused_reads_in_plain_words(
    details: dict[str, Any], row: Any, to: str | None, words: str, todo: str
) -> None:
    assert said("VALUE_REFUSED", details, row=row, to=to) == (words, todo, "VALUE_REFUSED")


def test_the_sentence_joins_the_words_and_what_to_do() -> None:
    found = staff_refusal(
        "VALUE_REFUSED", CHECK, DEV, tables=TABLES, table="orders", to="cancelled", row={}
    )
    assert (
        found.sentence == "Needs a note before it can be cancelled. Fill in Note, then try again."
    )


def test_a_linked_rows_refusal_names_that_row_first() -> None:
    details = {"reason": "check", "effect": {"table": "parts", "key": 3012}}
    assert said("VALUE_REFUSED", details)[0] == "Parts #3012: A field breaks a rule of the table"


def test_a_time_refusal_says_the_venues_time() -> None:
    # 20:00 UTC on Friday 10 July 2026 is 21:00 BST.
    closed = {"requires": "time", "bound": "before", "at": "2026-07-10T20:00:00+00:00"}
    assert said("STATE_MOVE_REFUSED", closed)[0] == "Closed at Fri 21:00"
    opens = {"requires": "time", "bound": "after", "at": "2026-07-10T17:30:00+00:00"}
    assert said("STATE_MOVE_REFUSED", opens)[0] == "Not open yet: it opens at Fri 18:30"
    none = {"requires": "time", "bound": "after", "at": None, "reason": "no-moment"}
    assert said("STATE_MOVE_REFUSED", none)[0] == "Waits for a time this row does not have"


def test_the_lock_and_a_held_row_say_what_happened() -> None:
    locked = {"columns": ["note"], "when": {"column": "status", "values": ["cancelled"]}}
    assert said("ROW_LOCKED", locked)[0] == "Note is locked in this state"
    assert said("WRITE_CONFLICT", {}) == (
        "Someone else was changing it at that moment",
        "Try again in a moment.",
        "WRITE_CONFLICT",
    )


def test_a_code_without_words_of_its_own_keeps_its_message_capitalised() -> None:
    assert said("SOMETHING_NEW", {})[0] == DEV[:1].upper() + DEV[1:]


NOW = datetime(2026, 7, 10, 22, 5, tzinfo=UTC)  # Fri 23:05 BST


def test_the_clock_moved_it_with_its_code() -> None:
    at = datetime(2026, 7, 10, 22, 0, tzinfo=UTC)  # Fri 23:00 BST
    assert mover_words("clock", "Timed move", at, NOW, LONDON, [("Cancel code", "closed")]) == (
        "moved by the clock at 23:00 (Cancel code: closed)"
    )


def test_a_person_moved_it_the_day_before() -> None:
    at = datetime(2026, 7, 9, 18, 40, tzinfo=UTC)  # Thu 19:40 BST
    assert mover_words("person", "ann@venue.test", at, NOW, LONDON) == (
        "moved by ann@venue.test at Thu 19:40"
    )


def test_times_are_to_the_minute_on_the_venues_day() -> None:
    # 23:30 UTC on Friday is 00:30 BST on Saturday: another venue day than 23:05 Friday.
    assert day_time_words(datetime(2026, 7, 10, 23, 30, 59, tzinfo=UTC), NOW, LONDON) == "Sat 00:30"
    assert day_time_words(datetime(2026, 7, 10, 21, 59, 59, tzinfo=UTC), NOW, LONDON) == "22:59"
