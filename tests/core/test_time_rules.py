"""What a write waits for in time, judged without a database: requires, late rules, due.

The rules come from the example apps (tickets' check-in window, the hotel's late
cancellation), changed only where a case needs another mode. London's clocks in 2026:
forward at 2026-03-29 01:00 UTC (GMT -> BST), back at 2026-10-25 01:00 UTC (BST -> GMT).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from core.basics.actors import Actor
from core.basics.errors import (
    PublicTooEarly,
    PublicTooLate,
    RowNotDue,
    StateMoveRefused,
    StateTooLate,
)
from core.manifest.model import Late, Moment, Requires, States, load_app
from core.rules.time_rules import judge_due, judge_late, judge_requires, late_rule
from core.time.clock import venue_zone
from core.time.moments import MomentContext
from tests.core.manifest_cases import example

LONDON = venue_zone("Europe/London")
STAFF = Actor.person("ana@example.com", {"staff"})
GUEST = Actor.public()


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


def states_of(doc: dict[str, Any], table: str) -> States:
    """A table's states, from a manifest document built with the model."""
    states = load_app(doc).tables[table].states
    assert states is not None
    return states


def requires_of(doc: dict[str, Any], table: str, state: str, index: int) -> Requires:
    """What a listed move waits for."""
    move = states_of(doc, table).moves[state][index]
    assert not isinstance(move, str) and move.requires is not None
    return move.requires


# --- judge_requires: the tickets example's check-in ------------------------------

CHECK_IN_REQUIRES = requires_of(example("tickets"), "tickets", "valid", 1)

# Doors at 19:00 BST on Saturday 24 October 2026 (18:00 UTC): check-in opens 30 elapsed
# minutes before, 17:30 UTC; the ticket is valid until 23:00 UTC that night.
DOORS = utc(2026, 10, 24, 18, 0)
VALID_TO = utc(2026, 10, 24, 23, 0)
OPENS = utc(2026, 10, 24, 17, 30)


def ticket_ctx(
    *,
    valid_to: datetime | None = VALID_TO,
    doors_at: datetime | None = DOORS,
    event: bool = True,
    settings: list[dict[str, Any]] | None = None,
) -> MomentContext:
    return MomentContext(
        row={"id": 7, "event_id": 3, "status": "valid", "valid_to": valid_to},
        zone=LONDON,
        linked={"event_id": {"id": 3, "doors_at": doors_at} if event else None},
        tables={"settings": [{"id": 1, "door_on": True}] if settings is None else settings},
    )


def test_check_in_opens_exactly_at_half_an_hour_before_the_doors() -> None:
    judge_requires(CHECK_IN_REQUIRES, ticket_ctx(), OPENS, STAFF)


def test_staff_check_in_a_minute_early_names_the_after_bound() -> None:
    with pytest.raises(StateMoveRefused) as refused:
        judge_requires(CHECK_IN_REQUIRES, ticket_ctx(), utc(2026, 10, 24, 17, 29), STAFF)
    assert refused.value.details == {
        "requires": "time",
        "bound": "after",
        "at": "2026-10-24T17:30:00+00:00",
    }


def test_guest_check_in_early_names_the_opening_and_the_doors_it_is_counted_from() -> None:
    with pytest.raises(PublicTooEarly) as refused:
        judge_requires(CHECK_IN_REQUIRES, ticket_ctx(), utc(2026, 10, 24, 17, 0), GUEST)
    assert refused.value.params == {
        "from": "2026-10-24T17:30:00+00:00",
        "at": "2026-10-24T18:00:00+00:00",
    }


def test_check_in_passes_a_second_before_the_ticket_ends() -> None:
    judge_requires(CHECK_IN_REQUIRES, ticket_ctx(), utc(2026, 10, 24, 22, 59, 59), STAFF)


def test_staff_check_in_at_the_ticket_end_names_the_before_bound() -> None:
    with pytest.raises(StateMoveRefused) as refused:
        judge_requires(CHECK_IN_REQUIRES, ticket_ctx(), VALID_TO, STAFF)
    assert refused.value.details == {
        "requires": "time",
        "bound": "before",
        "at": "2026-10-24T23:00:00+00:00",
    }


def test_guest_check_in_at_the_ticket_end_is_too_late_at_the_rows_own_time() -> None:
    with pytest.raises(PublicTooLate) as refused:
        judge_requires(CHECK_IN_REQUIRES, ticket_ctx(), VALID_TO, GUEST)
    assert refused.value.params == {"at": "2026-10-24T23:00:00+00:00"}


def test_guest_window_closed_by_a_linked_row_names_no_time() -> None:
    # The same window with its `before` read from the event: the guest is told no time.
    doc = example("tickets")
    window = doc["tables"]["tickets"]["states"]["moves"]["valid"][1]["requires"]["time"]
    window["before"] = {"via": "event_id", "column": "doors_at", "plus": {"hours": 5}}
    requires = requires_of(doc, "tickets", "valid", 1)
    with pytest.raises(PublicTooLate) as refused:
        judge_requires(requires, ticket_ctx(), utc(2026, 10, 24, 23, 0), GUEST)
    assert refused.value.params == {}


def test_staff_check_in_with_no_event_row_is_refused_as_no_moment() -> None:
    with pytest.raises(StateMoveRefused) as refused:
        judge_requires(CHECK_IN_REQUIRES, ticket_ctx(event=False), utc(2026, 10, 24, 20), STAFF)
    assert refused.value.details == {
        "requires": "time",
        "bound": "after",
        "at": None,
        "reason": "no-moment",
    }


def test_guest_check_in_with_no_end_is_closed_without_a_time() -> None:
    with pytest.raises(PublicTooLate) as refused:
        judge_requires(CHECK_IN_REQUIRES, ticket_ctx(valid_to=None), utc(2026, 10, 24, 20), GUEST)
    assert refused.value.params == {}


@pytest.mark.parametrize(
    "settings",
    [
        pytest.param([{"id": 1, "door_on": False}], id="door-off"),
        pytest.param([{"id": 1, "door_on": 1}], id="one-is-no-true"),
        pytest.param([{"id": 1, "door_on": None}], id="empty-setting"),
        pytest.param([{"id": 1, "door_on": True}, {"id": 2, "door_on": True}], id="two-rows"),
        pytest.param([], id="no-row"),
    ],
)
def test_check_in_in_its_window_waits_for_the_door_setting(settings: list[dict[str, Any]]) -> None:
    with pytest.raises(StateMoveRefused) as refused:
        judge_requires(
            CHECK_IN_REQUIRES, ticket_ctx(settings=settings), utc(2026, 10, 24, 20), STAFF
        )
    assert refused.value.details == {
        "requires": "setting",
        "table": "settings",
        "column": "door_on",
        "eq": True,
    }


@pytest.mark.parametrize(
    ("held", "passes"),
    [
        pytest.param("open", True, id="same-text"),
        pytest.param("closed", False, id="other-text"),
        pytest.param(True, False, id="true-is-no-text"),
    ],
)
def test_a_setting_condition_on_text_passes_only_on_the_same_text(held: Any, passes: bool) -> None:
    requires = Requires.model_validate(
        {"setting": [{"table": "settings", "column": "door", "eq": "open"}]}
    )
    ctx = MomentContext(row={"id": 1}, zone=LONDON, tables={"settings": [{"id": 1, "door": held}]})
    if passes:
        judge_requires(requires, ctx, utc(2026, 10, 24), STAFF)
    else:
        with pytest.raises(StateMoveRefused):
            judge_requires(requires, ctx, utc(2026, 10, 24), STAFF)


# --- judge_requires across the clock change: the hotel example's check-in --------

HOTEL_CHECK_IN = requires_of(example("hotel"), "stays", "booked", 0)


def stay_ctx(arrive: date, arrive_from: str = "15:00") -> MomentContext:
    return MomentContext(
        row={"id": 1, "arrive": arrive, "status": "booked"},
        zone=LONDON,
        tables={"settings": [{"id": 1, "arrive_from": arrive_from, "cancel_hours": 48}]},
    )


@pytest.mark.parametrize(
    ("arrive", "arrive_from", "opens"),
    [
        # 15:00 BST on the day the clocks go forward is 14:00 UTC.
        pytest.param(date(2026, 3, 29), "15:00", utc(2026, 3, 29, 14), id="spring-day-bst"),
        # 01:30 that morning is skipped (01:00 GMT -> 02:00 BST): read as the hour after,
        # 02:30 BST, which is 01:30 UTC.
        pytest.param(date(2026, 3, 29), "01:30", utc(2026, 3, 29, 1, 30), id="spring-gap"),
        # 01:30 on 25 October is passed twice: the first, BST, is 00:30 UTC.
        pytest.param(date(2026, 10, 25), "01:30", utc(2026, 10, 25, 0, 30), id="autumn-fold"),
        # After the clocks go back, 15:00 GMT is 15:00 UTC.
        pytest.param(date(2026, 10, 25), "15:00", utc(2026, 10, 25, 15), id="autumn-day-gmt"),
    ],
)
def test_hotel_check_in_opens_at_arrive_from_on_the_venue_clock(
    arrive: date, arrive_from: str, opens: datetime
) -> None:
    ctx = stay_ctx(arrive, arrive_from)
    judge_requires(HOTEL_CHECK_IN, ctx, opens, STAFF)
    with pytest.raises(StateMoveRefused) as refused:
        judge_requires(HOTEL_CHECK_IN, ctx, opens - timedelta(seconds=1), STAFF)
    assert refused.value.details["at"] == opens.isoformat()


# --- late_rule and judge_late: the hotel example's late cancellation --------------

STAYS_STATES = states_of(example("hotel"), "stays")
LATE_CANCEL: Late = (STAYS_STATES.late or [])[0]


def test_late_rule_judges_a_cancellation_from_booked() -> None:
    assert late_rule(STAYS_STATES, "booked", "cancelled") is LATE_CANCEL


@pytest.mark.parametrize(
    ("state_from", "to"),
    [
        pytest.param("checked_in", "cancelled", id="from-not-listed"),
        pytest.param("booked", "no_show", id="another-move"),
    ],
)
def test_late_rule_is_none_for_other_moves(state_from: str, to: str) -> None:
    assert late_rule(STAYS_STATES, state_from, to) is None


def test_late_rule_without_from_judges_the_move_from_any_state() -> None:
    states = STAYS_STATES.model_copy(
        update={"late": [LATE_CANCEL.model_copy(update={"from_": None})]}
    )
    assert late_rule(states, "checked_in", "cancelled") is not None


# Arrival Monday 26 October 2026 from 15:00, GMT by then: the moment is 15:00 UTC. The
# window opens 48 elapsed hours before, 2026-10-24 15:00 UTC, which is 16:00 BST on the
# Saturday wall clock: the clocks went back in between, so not 15:00 wall time.
ARRIVE = date(2026, 10, 26)
MOMENT = utc(2026, 10, 26, 15)
WINDOW_OPENS = utc(2026, 10, 24, 15)


def test_cancellation_as_the_window_opens_is_not_late() -> None:
    verdict = judge_late(LATE_CANCEL, stay_ctx(ARRIVE), WINDOW_OPENS, STAFF)
    assert (verdict.late, verdict.moment, verdict.opens) == (False, MOMENT, WINDOW_OPENS)


def test_cancellation_at_saturday_1530_wall_time_is_not_late_across_the_clock_change() -> None:
    # 15:30 BST is 14:30 UTC: 48.5 real hours before the arrival, though 47.5 wall hours.
    verdict = judge_late(LATE_CANCEL, stay_ctx(ARRIVE), utc(2026, 10, 24, 14, 30), STAFF)
    assert verdict.late is False


def test_cancellation_a_second_into_the_window_is_late() -> None:
    verdict = judge_late(LATE_CANCEL, stay_ctx(ARRIVE), utc(2026, 10, 24, 15, 0, 1), STAFF)
    assert (verdict.late, verdict.moment, verdict.opens) == (True, MOMENT, WINDOW_OPENS)


def test_cancellation_after_the_arrival_has_passed_is_late() -> None:
    verdict = judge_late(LATE_CANCEL, stay_ctx(ARRIVE), utc(2026, 10, 27, 9), GUEST)
    assert verdict.late is True


@pytest.mark.parametrize("actor", [Actor.importer(), Actor.sample()], ids=["import", "sample"])
def test_import_and_sample_data_are_never_late(actor: Actor) -> None:
    verdict = judge_late(LATE_CANCEL, stay_ctx(ARRIVE), utc(2026, 10, 26, 14), actor)
    assert (verdict.late, verdict.moment, verdict.opens) == (False, None, None)


def test_the_clock_is_judged_late_as_staff_are() -> None:
    verdict = judge_late(LATE_CANCEL, stay_ctx(ARRIVE), utc(2026, 10, 26, 14), Actor.clock())
    assert verdict.late is True


def test_a_stay_with_no_arrival_is_not_late() -> None:
    ctx = MomentContext(row={"id": 1, "arrive": None}, zone=LONDON, tables=stay_ctx(ARRIVE).tables)
    verdict = judge_late(LATE_CANCEL, ctx, utc(2026, 10, 26, 14), STAFF)
    assert (verdict.late, verdict.moment) == (False, None)


def test_a_window_whose_length_is_unreadable_is_not_late() -> None:
    # cancel_hours empty: the moment still reads (arrive_from is set), the window does not.
    ctx = MomentContext(
        row={"id": 1, "arrive": ARRIVE},
        zone=LONDON,
        tables={"settings": [{"id": 1, "arrive_from": "15:00", "cancel_hours": None}]},
    )
    verdict = judge_late(LATE_CANCEL, ctx, utc(2026, 10, 26, 14), STAFF)
    assert (verdict.late, verdict.moment, verdict.opens) == (False, MOMENT, None)


def refusing(refuse: str | None, moment: dict[str, Any] | None = None) -> Late:
    """The hotel's late rule in mode refuse (and, if given, another moment)."""
    update: dict[str, Any] = {"mode": "refuse", "flag": None, "refuse": refuse}
    if moment is not None:
        update["moment"] = Moment.model_validate(moment)
    return LATE_CANCEL.model_copy(update=update)


def test_refuse_public_turns_a_late_guest_away_naming_the_moment() -> None:
    with pytest.raises(PublicTooLate) as refused:
        judge_late(refusing("public"), stay_ctx(ARRIVE), utc(2026, 10, 25, 12), GUEST)
    assert refused.value.params == {"at": "2026-10-26T15:00:00+00:00"}


def test_refuse_public_lets_late_staff_through_marked_late() -> None:
    verdict = judge_late(refusing("public"), stay_ctx(ARRIVE), utc(2026, 10, 25, 12), STAFF)
    assert verdict.late is True


def test_refuse_everyone_turns_late_staff_away_naming_the_moment() -> None:
    with pytest.raises(StateTooLate) as refused:
        judge_late(refusing("everyone"), stay_ctx(ARRIVE), utc(2026, 10, 25, 12), STAFF)
    assert refused.value.details == {"at": "2026-10-26T15:00:00+00:00"}


def test_refuse_with_a_linked_moment_turns_a_guest_away_without_a_time() -> None:
    rule = refusing("public", {"via": "room_id", "column": "ready_at"})
    ctx = MomentContext(
        row={"id": 1, "room_id": 4},
        zone=LONDON,
        linked={"room_id": {"id": 4, "ready_at": MOMENT}},
        tables=stay_ctx(ARRIVE).tables,
    )
    with pytest.raises(PublicTooLate) as refused:
        judge_late(rule, ctx, utc(2026, 10, 25, 12), GUEST)
    assert refused.value.params == {}


def test_refuse_lets_a_guest_through_before_the_window() -> None:
    verdict = judge_late(refusing("public"), stay_ctx(ARRIVE), utc(2026, 10, 20, 12), GUEST)
    assert verdict.late is False


# --- judge_due: the hotel example's no-show ----------------------------------------

NO_SHOW = (STAYS_STATES.timed or [])[0]


def no_show_ctx() -> MomentContext:
    # Arrival Saturday 24 October: the no-show is 10:00 the next day, Sunday, on the wall
    # clock although the clocks went back that night, so 10:00 GMT = 10:00 UTC.
    return MomentContext(
        row={"id": 1, "arrive": date(2026, 10, 24), "status": "booked"},
        zone=LONDON,
        tables={"settings": [{"id": 1, "no_show_at": "10:00"}]},
    )


def test_no_show_is_due_at_ten_the_next_morning_after_the_clocks_go_back() -> None:
    judge_due(NO_SHOW, no_show_ctx(), utc(2026, 10, 25, 10))


def test_no_show_a_second_early_is_not_due() -> None:
    with pytest.raises(RowNotDue) as refused:
        judge_due(NO_SHOW, no_show_ctx(), utc(2026, 10, 25, 9, 59, 59))
    assert refused.value.details == {"reason": "not-due", "at": "2026-10-25T10:00:00+00:00"}


def test_a_stay_with_no_moment_is_not_due() -> None:
    ctx = MomentContext(row={"id": 1, "arrive": None}, zone=LONDON)
    with pytest.raises(RowNotDue) as refused:
        judge_due(NO_SHOW, ctx, utc(2026, 10, 26))
    assert refused.value.details == {"reason": "not-due", "at": None}
