"""The pipeline's moves: create in initial, listed moves, undo, roles, Adminium's columns, audit."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from core.basics.actors import Actor
from core.basics.errors import (
    ColumnReadOnly,
    RowNotFound,
    StateChanged,
    StateMoveForbidden,
    StateMoveNotListed,
    UndoRefused,
    ValueRefused,
)
from core.writes.pipeline import WriteResult, change_row, create_row, make_timed_move
from core.writes.request import WriteRequest
from tests.integration.pipeline_fixtures import Venue, at

NOW = at("2026-03-27 12:00")
PERSON = Actor.person("sam@venue.test", {"staff"})
MANAGER = Actor.person("kim@venue.test", {"manager"})


def new_order(venue: Venue, status: str = "placed", **values: Any) -> Any:
    return venue.insert("orders", status=status, pickup_at=at("2026-03-27 12:30"), **values)


def test_create_lands_in_initial_and_is_audited(venue: Venue) -> None:
    result = create_row(
        venue.store,
        WriteRequest(
            "orders", PERSON, NOW, values={"pickup_at": at("2026-03-27 12:30"), "note": "no onions"}
        ),
    )
    assert result.row["status"] == "placed"
    assert result.row["note"] == "no onions"
    (entry,) = venue.audit()
    assert entry["actor"] == "sam@venue.test"
    assert entry["actor_kind"] == "person"
    assert (entry["move_from"], entry["move_to"]) == (None, "placed")
    assert entry["before"] is None
    assert entry["after"]["note"] == "no onions"
    assert entry["row_key"] == str(result.key)
    assert entry["at"] == NOW
    (event,) = result.events
    assert event.as_dict() == {
        "connection": "test",
        "app": "venue",
        "table": "orders",
        "key": result.key,
        "state": "placed",
        "actor": "sam@venue.test",
    }


def timed_move_without_key(venue: Venue) -> WriteResult:
    rule = venue.store.spec("orders").states.timed[0]  # type: ignore[union-attr,index]
    return make_timed_move(venue.store, "orders", None, rule, now=at("2026-03-27 21:00"))


@pytest.mark.parametrize(
    ("write", "words"),
    [
        pytest.param(
            lambda venue, key: create_row(
                venue.store, WriteRequest("orders", PERSON, NOW, key=key, values={"note": "x"})
            ),
            "without a key",
            id="create_names_no_key",
        ),
        pytest.param(
            lambda venue, key: change_row(
                venue.store, WriteRequest("orders", PERSON, NOW, values={"note": "x"})
            ),
            "names the key",
            id="change_names_its_key",
        ),
        pytest.param(
            lambda venue, key: timed_move_without_key(venue),
            "names the key",
            id="timed_move_names_its_key",
        ),
    ],
)
def test_each_entry_point_is_asked_for_its_own_kind_of_write(
    venue: Venue, write: Any, words: str
) -> None:
    key = new_order(venue)
    with venue.unchanged("orders", key), pytest.raises(ValueError, match=words):
        write(venue, key)
    assert venue.audit() == []


def test_listed_move_writes_state_and_audits_before_and_after(venue: Venue) -> None:
    key = new_order(venue)
    result = change_row(
        venue.store, WriteRequest("orders", PERSON, NOW, key=key, move_to="confirmed")
    )
    assert venue.row("orders", key)["status"] == "confirmed"
    (entry,) = venue.audit()
    assert (entry["move_from"], entry["move_to"]) == ("placed", "confirmed")
    assert entry["before"]["status"] == "placed"
    assert entry["after"]["status"] == "confirmed"
    assert result.events[0].state == "confirmed"


def test_update_without_move_audits_values_and_no_move(venue: Venue) -> None:
    key = new_order(venue)
    change_row(
        venue.store, WriteRequest("orders", PERSON, NOW, key=str(key), values={"note": "ring"})
    )
    (entry,) = venue.audit()
    assert (entry["move_from"], entry["move_to"]) == (None, None)
    assert (entry["before"]["note"], entry["after"]["note"]) == (None, "ring")


@pytest.mark.parametrize(
    ("actor", "audited_as"),
    [
        (Actor.clock(), "Timed move"),
        (Actor.importer(), "Import"),
        (Actor.sample(), "Sample data"),
    ],
    ids=["clock", "import", "sample"],
)
def test_each_actor_is_named_in_the_audit(venue: Venue, actor: Actor, audited_as: str) -> None:
    key = new_order(venue)
    change_row(venue.store, WriteRequest("orders", actor, NOW, key=key, move_to="confirmed"))
    assert venue.audit()[0]["actor"] == audited_as


def test_move_not_listed_is_refused_and_nothing_written(venue: Venue) -> None:
    key = new_order(venue)
    with venue.unchanged("orders", key), pytest.raises(StateMoveNotListed) as refused:
        change_row(venue.store, WriteRequest("orders", PERSON, NOW, key=key, move_to="ready"))
    assert refused.value.status == 409
    assert refused.value.details == {"from": "placed", "to": "ready"}


def test_unknown_row_is_not_found(venue: Venue) -> None:
    with pytest.raises(RowNotFound) as missing:
        change_row(venue.store, WriteRequest("orders", PERSON, NOW, key=999, move_to="confirmed"))
    assert (missing.value.code, missing.value.status) == ("NOT_FOUND", 404)


@pytest.mark.parametrize(
    ("actor", "seen", "reason"),
    [
        (PERSON, None, "seen-state-needed"),
        (Actor.clock(), "confirmed", "person-only"),
        (Actor.importer(), "confirmed", "person-only"),
    ],
    ids=["person-without-seen-state", "clock", "import"],
)
def test_undo_is_refused_unless_a_person_names_the_state(
    venue: Venue, actor: Actor, seen: str | None, reason: str
) -> None:
    key = new_order(venue, "confirmed")
    with venue.unchanged("orders", key), pytest.raises(UndoRefused) as refused:
        change_row(
            venue.store,
            WriteRequest("orders", actor, NOW, key=key, move_to="placed", seen_state=seen),
        )
    assert refused.value.code == "STATE_UNDO_REFUSED"
    assert refused.value.details == {"from": "confirmed", "to": "placed", "reason": reason}


def test_undo_by_a_person_naming_the_state_they_saw(venue: Venue) -> None:
    key = new_order(venue, "confirmed")
    change_row(
        venue.store,
        WriteRequest("orders", PERSON, NOW, key=key, move_to="placed", seen_state="confirmed"),
    )
    assert venue.row("orders", key)["status"] == "placed"


def test_seen_state_no_longer_held_is_state_changed(venue: Venue) -> None:
    key = new_order(venue, "ready")
    with venue.unchanged("orders", key), pytest.raises(StateChanged) as changed:
        change_row(
            venue.store,
            WriteRequest(
                "orders", PERSON, NOW, key=key, values={"note": "x"}, seen_state="confirmed"
            ),
        )
    assert changed.value.details == {"seen": "confirmed", "state": "ready"}


@pytest.mark.parametrize(
    ("actor", "allowed"),
    [
        (MANAGER, True),
        (PERSON, False),
        (Actor.person("new@venue.test"), False),
        (Actor.clock(), True),
        (Actor.public(), False),
        (Actor.importer(), False),
    ],
    ids=["manager", "staff", "no-roles", "clock-passes", "public", "import"],
)
def test_move_kept_for_roles(venue: Venue, actor: Actor, allowed: bool) -> None:
    key = new_order(venue, "confirmed")
    if allowed:
        change_row(venue.store, WriteRequest("orders", actor, NOW, key=key, move_to="refunded"))
        assert venue.row("orders", key)["status"] == "refunded"
        return
    with venue.unchanged("orders", key), pytest.raises(StateMoveForbidden) as refused:
        change_row(venue.store, WriteRequest("orders", actor, NOW, key=key, move_to="refunded"))
    assert refused.value.status == 403
    assert refused.value.details == {"from": "confirmed", "to": "refunded", "roles": ["manager"]}


def test_public_makes_only_moves_listing_public(venue: Venue) -> None:
    key = new_order(venue)
    with venue.unchanged("orders", key), pytest.raises(StateMoveForbidden):
        change_row(
            venue.store, WriteRequest("orders", Actor.public(), NOW, key=key, move_to="cancelled")
        )


@pytest.mark.parametrize(
    ("actor", "values", "reason"),
    [
        (PERSON, {"status": "ready"}, "state"),
        (PERSON, {"id": 77}, "key"),
        (PERSON, {"cancelled_at": NOW}, "stamp"),
        (PERSON, {"colour": "red"}, "unknown"),
    ],
    ids=["state-column", "key", "stamp", "unknown"],
)
def test_columns_a_writer_may_not_send(
    venue: Venue, actor: Actor, values: dict[str, Any], reason: str
) -> None:
    key = new_order(venue)
    with venue.unchanged("orders", key), pytest.raises(ColumnReadOnly) as refused:
        change_row(venue.store, WriteRequest("orders", actor, NOW, key=key, values=values))
    assert refused.value.status == 422
    assert refused.value.details == {"column": next(iter(values)), "reason": reason}


def test_an_import_may_bring_a_stamp(venue: Venue) -> None:
    result = create_row(
        venue.store,
        WriteRequest(
            "orders",
            Actor.importer(),
            NOW,
            values={"pickup_at": at("2026-03-27 12:30"), "cancelled_at": at("2026-03-01 09:00")},
        ),
    )
    assert result.row["cancelled_at"] == at("2026-03-01 09:00")


def test_create_with_every_column_defaulted_makes_a_row(venue: Venue) -> None:
    # events has a serial key and one nullable column: nothing to send, still a new row.
    result = create_row(venue.store, WriteRequest("events", PERSON, NOW))
    assert result.key is not None
    assert venue.row("events", result.key)["doors_at"] is None
    assert [(e["table_name"], e["row_key"]) for e in venue.audit()] == [("events", str(result.key))]


def test_expected_value_gone_since_found_is_not_found(venue: Venue) -> None:
    key = new_order(venue, note="code-a")
    with venue.unchanged("orders", key), pytest.raises(RowNotFound):
        change_row(
            venue.store,
            WriteRequest(
                "orders", PERSON, NOW, key=key, move_to="confirmed", expect={"note": "code-b"}
            ),
        )
    result = change_row(
        venue.store,
        WriteRequest(
            "orders", PERSON, NOW, key=key, move_to="confirmed", expect={"note": "code-a"}
        ),
    )
    assert result.row["status"] == "confirmed"


def sample_marks(venue: Venue) -> list[tuple[str, str]]:
    with venue.engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT table_name, row_key FROM adminium.sample_rows"))
        return [tuple(r) for r in rows]


def test_sample_row_is_marked_in_its_own_write(venue: Venue) -> None:
    made = create_row(
        venue.store,
        WriteRequest("orders", Actor.sample(), NOW, values={"pickup_at": at("2026-03-27 12:30")}),
    )
    person = create_row(
        venue.store,
        WriteRequest("orders", PERSON, NOW, values={"pickup_at": at("2026-03-27 13:00")}),
    )
    moved = change_row(
        venue.store, WriteRequest("orders", Actor.clock(), NOW, key=made.key, move_to="confirmed")
    )
    assert moved.row["status"] == "confirmed"
    assert sample_marks(venue) == [("orders", str(made.key))]
    assert person.key != made.key


def test_refused_sample_write_leaves_no_mark(venue: Venue) -> None:
    with pytest.raises(ValueRefused):
        create_row(
            venue.store,
            WriteRequest(
                "orders",
                Actor.sample(),
                NOW,
                values={"pickup_at": at("2026-03-27 12:30"), "note": "x" * 41},
            ),
        )
    assert sample_marks(venue) == []
