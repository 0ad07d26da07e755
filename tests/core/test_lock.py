"""The lock, judged without a database: the takeaway's cancelled and picked-up orders shut."""

from __future__ import annotations

import pytest

from core.basics.errors import (
    RowLocked,
)
from core.manifest.model import Table
from core.rules.lock import judge_lock
from tests.core.example_rows import (
    LOCK_WHEN,
    ORDERS,
    SETTINGS,
    order,
)
from tests.core.manifest_cases import example

# --- judge_lock ------------------------------------------------------------------


def test_a_cancelled_order_refuses_a_new_note_naming_the_column_and_the_lock() -> None:
    held = order("cancelled")
    with pytest.raises(RowLocked) as refused:
        judge_lock(ORDERS, held, {**held, "note": "ring twice"}, {"note": "ring twice"})
    assert refused.value.details == {"columns": ["note"], "when": LOCK_WHEN}


def test_a_placed_order_takes_a_new_note() -> None:
    held = order("placed")
    judge_lock(ORDERS, held, {**held, "note": "ring twice"}, {"note": "ring twice"})


def test_a_move_into_cancelled_may_not_bring_other_values() -> None:
    # Judged on the row as it would be, too: the write that cancels is already locked.
    held = order("placed")
    sent = {"note": "late", "items": "2 pies"}
    with pytest.raises(RowLocked) as refused:
        judge_lock(ORDERS, held, {**held, **sent, "status": "cancelled"}, sent)
    assert refused.value.details["columns"] == ["items", "note"]


def test_a_locked_order_lets_a_value_sent_as_it_already_is() -> None:
    held = order("picked_up", note="ring twice")
    judge_lock(ORDERS, held, held, {"note": "ring twice"})


def test_the_lock_leaves_the_state_column_to_moves() -> None:
    # "*" is every column but the state: a locked row's state is judged by its moves.
    held = order("cancelled")
    judge_lock(ORDERS, held, {**held, "status": "placed"}, {"status": "placed"})


def test_a_new_row_made_in_a_locked_state_is_refused() -> None:
    after = order("cancelled", note="imported")
    with pytest.raises(RowLocked) as refused:
        judge_lock(ORDERS, None, after, {"note": "imported"})
    assert refused.value.details["columns"] == ["note"]


def test_a_lock_naming_columns_keeps_only_those_shut() -> None:
    doc = example("takeaway")["tables"]["orders"]
    doc["lock"] = [{"when": LOCK_WHEN, "columns": ["items"]}]
    spec = Table.model_validate(doc)
    held = order("cancelled")
    judge_lock(spec, held, {**held, "note": "kept"}, {"note": "kept"})
    with pytest.raises(RowLocked) as refused:
        judge_lock(spec, held, {**held, "items": "1 pie"}, {"items": "1 pie"})
    assert refused.value.details["columns"] == ["items"]


def test_a_table_with_no_lock_takes_anything() -> None:
    judge_lock(
        SETTINGS, {"id": 1, "venue_name": "A"}, {"id": 1, "venue_name": "B"}, {"venue_name": "B"}
    )
