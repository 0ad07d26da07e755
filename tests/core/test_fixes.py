"""What a set-aside row's fixes offer: a new moment only through a column a person may
write (a date column with a date picker), and the refused field first; refusals in words."""

from __future__ import annotations

from typing import Any

import pytest

from core.manifest.model import Moment, Table
from core.rules.refusals import value_words
from core.sweep.fixes import fix_fields, new_moment

STAYS: dict[str, Any] = {
    "key": "id",
    "columns": [
        {"ref": "id", "type": "serial"},
        {"ref": "status", "type": "enum", "values": ["booked", "dropped", "gone"]},
        {"ref": "arrive", "type": "date"},
        {"ref": "event_id", "type": "integer", "nullable": True},
        {"ref": "note", "type": "text", "nullable": True},
        {"ref": "late", "type": "boolean", "default": False},
        {
            "ref": "hold_until",
            "type": "timestamptz",
            "nullable": True,
            "rules": {"stamp": {"on": {"column": "status", "values": ["booked"]}}},
        },
    ],
    "states": {
        "column": "status",
        "initial": "booked",
        "moves": {"booked": ["dropped", "gone"]},
        "late": [
            {
                "to": "gone",
                "moment": {"column": "arrive", "time": "15:00"},
                "within": {"hours": 1},
                "mode": "flag",
                "flag": "late",
            }
        ],
    },
    "lock": [{"when": {"column": "note", "values": ["vip"]}, "columns": ["arrive"]}],
}
SPEC = Table.model_validate(STAYS)
ROW = {"id": 1, "status": "booked", "arrive": None, "note": None}


@pytest.mark.parametrize(
    ("moment", "row", "offered", "words"),
    [
        ({"column": "arrive", "time": "15:00"}, ROW, "arrive", "only its day counts"),
        ({"column": "hold_until"}, ROW, None, "hold_until is written by Adminium (a stamp)"),
        ({"via": "event_id", "column": "doors_at"}, ROW, None, "re-date that row instead"),
        (
            {"column": "arrive", "time": "15:00"},
            {**ROW, "note": "vip"},
            None,
            "arrive is locked while note is vip",
        ),
    ],
    ids=["date-column-offered", "stamp-offers-nothing", "linked-row", "locked"],
)
def test_new_moment_offers_only_a_column_a_person_may_write(
    moment: dict[str, Any], row: dict[str, Any], offered: str | None, words: str
) -> None:

    found = new_moment(Moment.model_validate(moment), SPEC, row, 0)
    assert (found.column.ref if found.column else None) == offered
    assert words in found.words


def test_a_date_column_gets_a_date_picker() -> None:

    found = new_moment(Moment.model_validate({"column": "arrive", "time": "15:00"}), SPEC, ROW, 0)
    assert found.input == "date"


def test_fallback_that_answered_is_the_one_offered() -> None:

    moment = Moment.model_validate(
        {"column": "hold_until", "or": [{"column": "arrive", "time": "15:00"}]}
    )
    assert new_moment(moment, SPEC, ROW, 0).column is None
    found = new_moment(moment, SPEC, ROW, 1)
    assert found.column is not None and found.column.ref == "arrive"


def test_refused_field_comes_first_named_by_details_or_words() -> None:
    columns = [c for c in SPEC.columns if c.ref in ("arrive", "note", "late")]
    fields, first = fix_fields("stays", SPEC, columns, "stays.note must be set (check x)", None)
    assert ([c.ref for c in fields], first) == (["note", "arrive"], "note")  # late: Adminium's
    fields, first = fix_fields("stays", SPEC, columns, "", "arrive")
    assert ([c.ref for c in fields], first) == (["arrive", "note"], "arrive")


@pytest.mark.parametrize(
    ("reason", "columns", "constraint", "comment", "said"),
    [
        (
            "check",
            ["note"],
            "needs_note",
            "must be filled when cancelled",
            "orders.note must be filled when cancelled (check needs_note)",
        ),
        ("check", ["note"], "ck", None, "orders.note breaks a rule of the table (check ck)"),
        ("not-null", ["note"], None, None, "orders.note must have a value (not null)"),
        (
            "unique",
            ["code"],
            "one_code",
            None,
            "orders.code is already taken by another row (unique one_code)",
        ),
        ("type", [], None, None, "orders: value too long for type character varying(40)"),
    ],
    ids=["check-with-comment", "check-without", "not-null", "unique", "type-keeps-the-reason"],
)
def test_refusal_words_name_the_field(
    reason: str, columns: list[str], constraint: str | None, comment: str | None, said: str
) -> None:
    primary = "value too long for type character varying(40)"
    assert value_words("orders", reason, columns, constraint, comment, primary) == said
