"""Which move a writer may make, judged without a database: listed, undo, roles (the
takeaway's guest cancellation and manager's undo)."""

from __future__ import annotations

import pytest

from core.basics.actors import Actor
from core.basics.errors import (
    StateChanged,
    StateMoveForbidden,
    StateMoveNotListed,
    UndoRefused,
)
from core.rules.moves import judge_move
from tests.core.example_rows import (
    MANAGER,
    ORDERS,
    SETTINGS,
    STAFF,
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
