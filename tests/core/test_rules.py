"""What a write may send and which move it may make, judged without a database.

The takeaway example's orders carry the lock (cancelled and picked-up orders shut), a
guest's cancellation and a manager's undo; the tickets example its stamps and codes.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from core.actors import Actor
from core.clock import venue_zone
from core.errors import (
    ColumnReadOnly,
    RowLocked,
    StateChanged,
    StateMoveForbidden,
    StateMoveNotListed,
    UndoRefused,
)
from core.manifest.model import Table, load_app
from core.rules import (
    code_values,
    firing_stamps,
    judge_lock,
    judge_move,
    owned_columns,
    stamp_values,
    writer_values,
)
from tests.core.manifest_cases import example

TAKEAWAY = load_app(example("takeaway"))
ORDERS = TAKEAWAY.tables["orders"]
SETTINGS = TAKEAWAY.tables["settings"]
TICKETS = load_app(example("tickets")).tables["tickets"]
STAFF = Actor.person("ana@example.com", {"staff"})
MANAGER = Actor.person("max@example.com", {"manager"})
LOCK_WHEN = {"column": "status", "values": ["cancelled", "picked_up"]}


def order(status: str, **values: Any) -> dict[str, Any]:
    return {"id": 42, "status": status, "note": None, "cancel_code": None, **values}


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


# --- judge_move ------------------------------------------------------------------


def test_a_listed_move_answers_its_spec() -> None:
    move = judge_move(ORDERS, "placed", "confirmed", None, STAFF)
    assert (move.to, move.undo, move.roles) == ("confirmed", False, None)


def test_a_move_the_table_does_not_list_is_refused() -> None:
    with pytest.raises(StateMoveNotListed) as refused:
        judge_move(ORDERS, "placed", "ready", None, STAFF)
    assert refused.value.details == {"from": "placed", "to": "ready"}


def test_a_move_from_a_state_with_no_moves_is_refused() -> None:
    with pytest.raises(StateMoveNotListed):
        judge_move(ORDERS, "cancelled", "placed", None, MANAGER)


def test_a_table_that_keeps_no_states_has_no_moves() -> None:
    with pytest.raises(StateMoveNotListed) as refused:
        judge_move(SETTINGS, None, "open", None, STAFF)
    assert refused.value.details == {"from": None, "to": "open"}


def test_a_writer_who_saw_another_state_is_told_the_row_moved() -> None:
    with pytest.raises(StateChanged) as refused:
        judge_move(ORDERS, "confirmed", "preparing", "placed", STAFF)
    assert refused.value.details == {"seen": "placed", "state": "confirmed"}


def test_a_manager_naming_the_state_they_saw_makes_the_undo() -> None:
    move = judge_move(ORDERS, "ready", "preparing", "ready", MANAGER)
    assert (move.to, move.undo) == ("preparing", True)


@pytest.mark.parametrize(
    ("actor", "seen", "reason"),
    [
        pytest.param(MANAGER, None, "seen-state-needed", id="person-naming-nothing"),
        pytest.param(Actor.clock(), "ready", "person-only", id="clock"),
        pytest.param(Actor.importer(), "ready", "person-only", id="import"),
        pytest.param(Actor.public(), "ready", "person-only", id="guest"),
    ],
)
def test_an_undo_is_a_persons_naming_what_they_saw(
    actor: Actor, seen: str | None, reason: str
) -> None:
    with pytest.raises(UndoRefused) as refused:
        judge_move(ORDERS, "ready", "preparing", seen, actor)
    assert refused.value.details == {"from": "ready", "to": "preparing", "reason": reason}


def test_staff_may_not_make_the_managers_undo() -> None:
    with pytest.raises(StateMoveForbidden) as refused:
        judge_move(ORDERS, "ready", "preparing", "ready", STAFF)
    assert refused.value.details == {"from": "ready", "to": "preparing", "roles": ["manager"]}


def test_a_guest_may_cancel_a_placed_order() -> None:
    assert judge_move(ORDERS, "placed", "cancelled", None, Actor.public()).to == "cancelled"


def test_a_guest_may_not_cancel_a_confirmed_order() -> None:
    # The move from confirmed lists no roles: open to every person, never to a guest.
    with pytest.raises(StateMoveForbidden) as refused:
        judge_move(ORDERS, "confirmed", "cancelled", None, Actor.public())
    assert refused.value.details["roles"] == []


def test_a_person_with_no_listed_role_may_not_make_a_move_kept_for_roles() -> None:
    with pytest.raises(StateMoveForbidden):
        judge_move(ORDERS, "placed", "cancelled", None, Actor.person("kit@example.com", {"door"}))


def test_the_clock_makes_a_move_kept_for_roles() -> None:
    assert judge_move(ORDERS, "placed", "cancelled", None, Actor.clock()).to == "cancelled"


# --- owned_columns and writer_values ----------------------------------------------


def test_adminium_owns_the_state_stamps_and_codes() -> None:
    assert owned_columns(TICKETS) == {
        "link_token": "code",
        "offer_until": "stamp",
        "checked_in_at": "stamp",
        "status": "state",
    }


def test_the_hotel_late_flag_is_owned_and_dropped_when_sent() -> None:
    stays = load_app(example("hotel")).tables["stays"]
    assert owned_columns(stays)["late_cancel"] == "flag"
    kept = writer_values(stays, {"late_cancel": True, "nights": 2}, STAFF, creating=False)
    assert kept == {"nights": 2}


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        pytest.param({"colour": "red"}, "unknown", id="no-such-column"),
        pytest.param({"status": "ready"}, "state", id="state"),
        pytest.param({"cancelled_at": datetime(2026, 1, 1, tzinfo=UTC)}, "stamp", id="stamp"),
        pytest.param({"id": 9}, "key", id="serial-key"),
    ],
)
def test_a_person_may_not_write_what_adminium_owns(values: dict[str, Any], reason: str) -> None:
    with pytest.raises(ColumnReadOnly) as refused:
        writer_values(ORDERS, values, STAFF, creating=True)
    assert refused.value.details == {"column": next(iter(values)), "reason": reason}


@pytest.mark.parametrize("actor", [Actor.importer(), Actor.sample()], ids=["import", "sample"])
def test_an_import_and_sample_data_may_bring_stamps_and_codes(actor: Actor) -> None:
    at = datetime(2026, 10, 24, 18, tzinfo=UTC)
    kept = writer_values(
        TICKETS, {"checked_in_at": at, "link_token": "x" * 16}, actor, creating=True
    )
    assert kept == {"checked_in_at": at, "link_token": "x" * 16}


# --- stamps and codes --------------------------------------------------------------


def test_an_offer_stamps_offer_until_offer_hours_later() -> None:
    held = {"id": 1, "status": "valid", "pending_email": None}
    after = {**held, "status": "offered"}
    names = firing_stamps(TICKETS, held, after)
    assert names == ["offer_until"]
    now = datetime(2026, 10, 24, 0, 30, tzinfo=UTC)
    tables = {"settings": [{"id": 1, "offer_hours": 48}]}
    # 48 elapsed hours across the night the clocks go back: 26 October 00:30 UTC.
    stamps = stamp_values(TICKETS, names, now, tables, venue_zone("Europe/London"))
    assert stamps == {"offer_until": datetime(2026, 10, 26, 0, 30, tzinfo=UTC)}


def test_a_write_that_keeps_the_state_stamps_nothing() -> None:
    held = {"id": 1, "status": "offered"}
    assert firing_stamps(TICKETS, held, {**held, "pending_name": "Bo"}) == []


def test_a_new_pending_email_renews_the_link_code() -> None:
    held = {"id": 1, "link_token": "a" * 16, "pending_email": None}
    codes = code_values(TICKETS, held, {**held, "pending_email": "bo@example.com"})
    assert set(codes) == {"link_token"} and len(codes["link_token"]) == 16
    assert codes["link_token"] != "a" * 16


def test_a_new_row_gets_a_code_unless_it_brings_one() -> None:
    assert set(code_values(TICKETS, None, {"link_token": None})) == {"link_token"}
    assert code_values(TICKETS, None, {"link_token": "b" * 16}) == {}


def test_a_write_that_keeps_the_pending_email_keeps_the_link_code() -> None:
    held = {"id": 1, "link_token": "a" * 16, "pending_email": "bo@example.com"}
    assert code_values(TICKETS, held, {**held, "pending_name": "Bo"}) == {}
