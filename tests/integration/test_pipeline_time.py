"""What a write waits for in time: requires, settings, create windows, late rules, the clock.

The venue is in London. British Summer Time 2026 starts Sunday 29 March at 01:00 UTC,
so a London wall time is UTC+0 before that instant and UTC+1 from it on.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import pytest
import sqlalchemy as sa

from core.basics.actors import Actor
from core.basics.errors import (
    AdminiumError,
    PublicTooEarly,
    PublicTooLate,
    RowNotDue,
    StateMoveRefused,
    StateTooLate,
    WriteConflict,
)
from core.writes.pipeline import change_row, create_row, make_timed_move
from core.writes.request import WriteRequest
from tests.integration.pipeline_fixtures import Venue, at

STAFF = Actor.person("sam@venue.test", {"staff"})

# Doors at 19:00 BST on Friday 12 June 2026 = 18:00 UTC; check-in opens 30 minutes
# earlier, 17:30 UTC. The ticket is valid to 23:00 BST = 22:00 UTC.
DOORS = at("2026-06-12 18:00")
VALID_TO = at("2026-06-12 22:00")


def new_ticket(venue: Venue, doors: datetime | None = DOORS, **values: Any) -> Any:
    event = venue.insert("events", doors_at=doors)
    values.setdefault("valid_to", VALID_TO)
    return venue.insert("tickets", event_id=event, status="valid", **values)


def check_in(venue: Venue, key: Any, now: datetime, actor: Actor = STAFF) -> None:
    change_row(venue.store, WriteRequest("tickets", actor, now, key=key, move_to="checked_in"))


@pytest.mark.parametrize(
    ("now", "refusal"),
    [
        (
            at("2026-06-12 17:29"),
            {"requires": "time", "bound": "after", "at": "2026-06-12T17:30:00+00:00"},
        ),
        (at("2026-06-12 17:30"), None),
        (at("2026-06-12 21:59"), None),
        (
            at("2026-06-12 22:00"),
            {"requires": "time", "bound": "before", "at": "2026-06-12T22:00:00+00:00"},
        ),
    ],
    ids=[
        "a-minute-before-after",
        "after-opens-at-its-moment",
        "just-before-before",
        "before-closes-at-its-moment",
    ],
)
def test_move_waits_for_its_window_read_via_the_event(
    venue: Venue, now: datetime, refusal: dict[str, Any] | None
) -> None:
    key = new_ticket(venue)
    if refusal is None:
        check_in(venue, key, now)
        assert venue.row("tickets", key)["status"] == "checked_in"
        return
    with venue.unchanged("tickets", key), pytest.raises(StateMoveRefused) as refused:
        check_in(venue, key, now)
    assert (refused.value.status, refused.value.details) == (409, refusal)


@pytest.mark.parametrize(
    ("doors", "valid_to", "bound"),
    [(None, VALID_TO, "after"), (DOORS, None, "before")],
    ids=["linked-doors-empty", "valid-to-empty"],
)
def test_moment_with_no_value_is_refused(
    venue: Venue, doors: datetime | None, valid_to: datetime | None, bound: str
) -> None:
    key = new_ticket(venue, doors, valid_to=valid_to)
    with venue.unchanged("tickets", key), pytest.raises(StateMoveRefused) as refused:
        check_in(venue, key, at("2026-06-12 19:00"))
    assert refused.value.details == {
        "requires": "time",
        "bound": bound,
        "at": None,
        "reason": "no-moment",
    }


def test_setting_condition_unmet_is_refused(venue: Venue) -> None:
    with venue.engine.begin() as conn:
        conn.execute(sa.text("UPDATE settings SET door_on = false"))
    key = new_ticket(venue)
    with venue.unchanged("tickets", key), pytest.raises(StateMoveRefused) as refused:
        check_in(venue, key, at("2026-06-12 19:00"))
    assert refused.value.details == {
        "requires": "setting",
        "table": "settings",
        "column": "door_on",
        "eq": True,
    }


# The guest's return opens 1 hour after sale_from (09:00 UTC -> 10:00 UTC) and closes at
# the event's doors, a linked row, so its closing names no time.
@pytest.mark.parametrize(
    ("sale_from", "now", "error", "params"),
    [
        (
            at("2026-06-01 09:00"),
            at("2026-06-01 09:30"),
            PublicTooEarly,
            {"from": "2026-06-01T10:00:00+00:00", "at": "2026-06-01T09:00:00+00:00"},
        ),
        (at("2026-06-01 09:00"), DOORS, PublicTooLate, {}),
        (None, at("2026-06-01 09:30"), PublicTooLate, {}),
        (at("2026-06-01 09:00"), at("2026-06-01 10:00"), None, None),
    ],
    ids=[
        "too-early-names-from-and-at",
        "closed-by-linked-row-names-no-time",
        "no-moment-names-no-time",
        "open",
    ],
)
def test_public_window_refusals_carry_params(
    venue: Venue,
    sale_from: datetime | None,
    now: datetime,
    error: type[AdminiumError] | None,
    params: dict[str, Any] | None,
) -> None:
    key = new_ticket(venue, sale_from=sale_from)
    guest = Actor.public()
    if error is None:
        change_row(venue.store, WriteRequest("tickets", guest, now, key=key, move_to="returned"))
        assert venue.row("tickets", key)["status"] == "returned"
        return
    with venue.unchanged("tickets", key), pytest.raises(error) as refused:
        change_row(venue.store, WriteRequest("tickets", guest, now, key=key, move_to="returned"))
    assert refused.value.status == 409
    assert refused.value.as_dict()["params"] == params


# A stay may be created until 15:00 (arrive_from) on the day after its arrival:
# arrive Monday 30 March 2026 -> 15:00 BST Tuesday 31 March = 14:00 UTC.
@pytest.mark.parametrize(
    ("arrive", "now", "refusal"),
    [
        (date(2026, 3, 30), at("2026-03-31 13:59"), None),
        (
            date(2026, 3, 30),
            at("2026-03-31 14:00"),
            {"requires": "time", "bound": "before", "at": "2026-03-31T14:00:00+00:00"},
        ),
        (
            None,
            at("2026-03-01 10:00"),
            {"requires": "time", "bound": "before", "at": None, "reason": "no-moment"},
        ),
    ],
    ids=["open-until-just-before", "closed-at-its-moment", "no-arrival-no-moment"],
)
def test_create_waits_for_its_window(
    venue: Venue, arrive: date | None, now: datetime, refusal: dict[str, Any] | None
) -> None:
    def create() -> Any:
        return create_row(venue.store, WriteRequest("stays", STAFF, now, values={"arrive": arrive}))

    if refusal is None:
        assert create().row["status"] == "booked"
        return
    with pytest.raises(StateMoveRefused) as refused:
        create()
    assert refused.value.details == refusal
    assert venue.audit() == []


# The late cancel rule: moment = arrive at 15:00 (arrive_from) = Monday 30 March 15:00 BST
# = 14:00 UTC; within cancel_hours = 48 elapsed hours -> the window opens Saturday
# 28 March 14:00 UTC (14:00 GMT on the wall, not 15:00: the clocks went forward between).
ARRIVE = date(2026, 3, 30)


def new_stay(venue: Venue, arrive: date = ARRIVE) -> Any:
    return venue.insert("stays", status="booked", arrive=arrive)


@pytest.mark.parametrize(
    ("actor", "now", "flagged"),
    [
        (STAFF, at("2026-03-28 14:00"), False),
        (STAFF, at("2026-03-28 14:01"), True),
        (STAFF, at("2026-03-31 09:00"), True),
        (Actor.importer(), at("2026-03-28 14:01"), False),
        (Actor.sample(), at("2026-03-29 14:01"), False),
    ],
    ids=[
        "exactly-within-away-is-not-late",
        "inside-window",
        "moment-passed",
        "import-never-late",
        "sample-never-late",
    ],
)
def test_late_flag(venue: Venue, actor: Actor, now: datetime, flagged: bool) -> None:
    key = new_stay(venue)
    result = change_row(
        venue.store, WriteRequest("stays", actor, now, key=key, move_to="cancelled")
    )
    assert result.late is flagged
    assert venue.row("stays", key)["late_cancel"] is flagged


def test_flag_sent_by_a_writer_is_dropped_when_not_late(venue: Venue) -> None:
    key = new_stay(venue)
    change_row(
        venue.store,
        WriteRequest(
            "stays",
            STAFF,
            at("2026-03-27 10:00"),
            key=key,
            move_to="cancelled",
            values={"late_cancel": True},
        ),
    )
    assert venue.row("stays", key)["late_cancel"] is False


def test_late_reads_the_moment_as_stored_not_the_write(venue: Venue) -> None:
    key = new_stay(venue)
    change_row(
        venue.store,
        WriteRequest(
            "stays",
            STAFF,
            at("2026-03-28 14:01"),
            key=key,
            move_to="cancelled",
            values={"arrive": date(2026, 5, 1)},
        ),
    )
    row = venue.row("stays", key)
    assert (row["late_cancel"], row["arrive"]) == (True, date(2026, 5, 1))


def test_late_window_with_an_unreadable_length_is_not_late(venue: Venue) -> None:
    with venue.engine.begin() as conn:
        conn.execute(sa.text("UPDATE settings SET cancel_hours = NULL"))
    key = new_stay(venue)
    result = change_row(
        venue.store,
        WriteRequest("stays", STAFF, at("2026-03-30 12:00"), key=key, move_to="cancelled"),
    )
    assert result.late is False


def test_late_window_that_opened_while_the_write_was_made_is_a_conflict(venue: Venue) -> None:
    key = new_stay(venue)
    with venue.unchanged("stays", key), pytest.raises(WriteConflict) as conflict:
        change_row(
            venue.store,
            WriteRequest(
                "stays",
                STAFF,
                at("2026-03-28 13:59"),
                key=key,
                move_to="cancelled",
                commit_clock=lambda: at("2026-03-28 14:01"),
            ),
        )
    assert conflict.value.details == {
        "reason": "late-window-opened",
        "at": "2026-03-28T14:00:00+00:00",
    }


def test_late_window_still_shut_at_commit_passes(venue: Venue) -> None:
    key = new_stay(venue)
    change_row(
        venue.store,
        WriteRequest(
            "stays",
            STAFF,
            at("2026-03-28 13:58"),
            key=key,
            move_to="cancelled",
            commit_clock=lambda: at("2026-03-28 13:59"),
        ),
    )
    assert venue.row("stays", key)["status"] == "cancelled"


# withdrawn: refuse (public, the default) within 24 hours of arrive at 15:00
# = 14:00 UTC on 30 March -> the window opens 29 March 14:00 UTC.
def test_refuse_public_turns_away_a_guest_and_names_the_moment(venue: Venue) -> None:
    key = new_stay(venue)
    with venue.unchanged("stays", key), pytest.raises(PublicTooLate) as refused:
        change_row(
            venue.store,
            WriteRequest(
                "stays", Actor.public(), at("2026-03-29 14:30"), key=key, move_to="withdrawn"
            ),
        )
    assert refused.value.params == {"at": "2026-03-30T14:00:00+00:00"}


@pytest.mark.parametrize(
    ("actor", "now"),
    [(STAFF, at("2026-03-29 14:30")), (Actor.public(), at("2026-03-29 13:59"))],
    ids=["staff-inside-window", "guest-before-window"],
)
def test_refuse_public_lets_staff_and_early_guests_through(
    venue: Venue, actor: Actor, now: datetime
) -> None:
    key = new_stay(venue)
    change_row(venue.store, WriteRequest("stays", actor, now, key=key, move_to="withdrawn"))
    assert venue.row("stays", key)["status"] == "withdrawn"


# dropped: refuse everyone within 1 calendar day of arrive at 15:00. Arrive Sunday
# 29 March: 15:00 BST = 14:00 UTC; one day earlier on the wall is 15:00 GMT Saturday
# 28 March = 15:00 UTC (24 elapsed hours would be 14:00 UTC).
@pytest.mark.parametrize(
    ("now", "refused"),
    [(at("2026-03-28 14:59"), False), (at("2026-03-28 15:01"), True)],
    ids=["an-hour-inside-24h-but-not-a-calendar-day", "inside-the-day"],
)
def test_refuse_everyone_turns_away_staff(venue: Venue, now: datetime, refused: bool) -> None:
    key = new_stay(venue, date(2026, 3, 29))
    if not refused:
        change_row(venue.store, WriteRequest("stays", STAFF, now, key=key, move_to="dropped"))
        assert venue.row("stays", key)["status"] == "dropped"
        return
    with venue.unchanged("stays", key), pytest.raises(StateTooLate) as late:
        change_row(venue.store, WriteRequest("stays", STAFF, now, key=key, move_to="dropped"))
    assert (late.value.code, late.value.status) == ("STATE_TOO_LATE", 409)
    assert late.value.details == {"at": "2026-03-29T14:00:00+00:00"}


# The clock's timed move: an order for Friday 27 March 12:30 (GMT = UTC) is cancelled at
# Friday's closing hour, 21:00 GMT = 21:00 UTC.
def new_order(venue: Venue, status: str = "placed") -> Any:
    return venue.insert("orders", status=status, pickup_at=at("2026-03-27 12:30"))


def clock_move(venue: Venue, key: Any, now: datetime) -> Any:
    rule = venue.store.spec("orders").states.timed[0]  # type: ignore[union-attr,index]
    return make_timed_move(venue.store, "orders", key, rule, now=now)


def test_timed_move_at_closing_sets_its_values_and_stamps(venue: Venue) -> None:
    key = new_order(venue)
    now = at("2026-03-27 21:00")
    clock_move(venue, key, now)
    row = venue.row("orders", key)
    assert (row["status"], row["cancel_code"], row["cancelled_at"]) == ("cancelled", "closed", now)
    assert venue.audit()[0]["actor"] == "Timed move"


@pytest.mark.parametrize(
    ("status", "now", "details"),
    [
        (
            "placed",
            at("2026-03-27 20:59"),
            {"reason": "not-due", "at": "2026-03-27T21:00:00+00:00"},
        ),
        ("confirmed", at("2026-03-27 21:00"), {"reason": "left-from", "state": "confirmed"}),
    ],
    ids=["moment-not-passed", "row-left-from"],
)
def test_timed_move_rejudges_the_held_row(
    venue: Venue, status: str, now: datetime, details: dict[str, Any]
) -> None:
    key = new_order(venue, status)
    with venue.unchanged("orders", key), pytest.raises(RowNotDue) as not_due:
        clock_move(venue, key, now)
    assert not_due.value.details == details
