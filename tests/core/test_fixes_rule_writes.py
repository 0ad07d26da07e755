"""A set-aside row's fixes never offer a column its timed move writes itself (`set`): the
move would overwrite whatever the person wrote there."""

from __future__ import annotations

from typing import Any

from core.manifest.model import Table, Timed
from core.sweep.fixes import fix_fields, new_moment

ORDERS: dict[str, Any] = {
    "key": "id",
    "columns": [
        {"ref": "id", "type": "serial"},
        {"ref": "status", "type": "enum", "values": ["placed", "cancelled"]},
        {"ref": "pickup_at", "type": "timestamptz"},
        {"ref": "cancel_code", "type": "text", "nullable": True},
        {"ref": "note", "type": "text", "nullable": True},
    ],
    "states": {"column": "status", "initial": "placed", "moves": {"placed": ["cancelled"]}},
}
SPEC = Table.model_validate(ORDERS)
ROW = {"id": 1, "status": "placed", "pickup_at": None, "cancel_code": None, "note": None}
NO_SHOW = Timed.model_validate(
    {
        "from": "placed",
        "to": "cancelled",
        "at": {"column": "pickup_at", "plus": {"minutes": 30}},
        "set": {"cancel_code": "NO_SHOW"},
    }
)
EDITABLE = [c for c in SPEC.columns if c.ref in ("pickup_at", "cancel_code", "note")]


def test_fix_what_refused_it_leaves_out_the_rules_set_and_its_moment() -> None:
    message = "the database refused the value: orders.cancel_code must be short"
    fields, first = fix_fields("orders", SPEC, EDITABLE, message, "cancel_code", NO_SHOW)
    assert [c.ref for c in fields] == ["note"]
    assert first is None  # the named column is the rule's: nothing to put first


def test_without_the_rule_every_editable_field_stays() -> None:
    fields, _ = fix_fields("orders", SPEC, EDITABLE, "", None)
    assert [c.ref for c in fields] == ["pickup_at", "cancel_code", "note"]


def test_no_new_moment_through_a_column_the_rule_writes() -> None:
    written = Timed.model_validate(
        {**NO_SHOW.model_dump(by_alias=True), "at": {"column": "cancel_code"}}
    )
    found = new_moment(written.at, SPEC, ROW, 0, written)
    assert found.column is None
    assert found.words == (
        "cancel_code is written by the timed move itself: no new moment can be given here"
    )


def test_a_new_moment_through_its_own_column_is_still_offered() -> None:
    found = new_moment(NO_SHOW.at, SPEC, ROW, 0, NO_SHOW)
    assert found.column is not None and found.column.ref == "pickup_at"
