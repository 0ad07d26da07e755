"""Refusals of timed moves, moments and moves that could never pass, each with its sentence."""

from __future__ import annotations

from typing import Any

import pytest

from tests.core.manifest_cases import (
    CHECK_IN_AFTER,
    LEAD,
    NEVER_PASSES,
    ORDERS,
    STAYS,
    TICKETS,
    Expected,
    Mutation,
    append,
    both,
    drop,
    node,
    put,
    refused,
)

WEEKDAY_RULE = "an hours table's weekday is an enum of exactly mon, tue, wed, thu, fri, sat, sun"


def _many_timed(doc: dict[str, Any]) -> None:
    """Nine more states, each with a timed move out: eleven timed moves on orders."""
    states = node(doc, *ORDERS)
    extra = [f"hold_{n}" for n in range(9)]
    node(doc, "tables", "orders", "columns", 7, "values").extend(extra)
    for state in extra:
        states["moves"][state] = ["cancelled"]
        states["timed"].append({"from": state, "to": "cancelled", "at": {"column": "pickup_at"}})


def _nine_set_columns(doc: dict[str, Any]) -> None:
    columns = node(doc, "tables", "orders", "columns")
    names = [f"extra_{n}" for n in range(9)]
    columns.extend({"ref": n, "type": "text", "nullable": True} for n in names)
    node(doc, *ORDERS, "timed", 0)["set"] = dict.fromkeys(names)


# (example, mutation, [(where, sentence), …])
BAD: dict[str, tuple[str, Mutation, Expected]] = {
    # --- timed moves ---
    "second_timed_move_leaving_a_state": (
        "takeaway",
        append(*ORDERS, "timed",
               value={"from": "placed", "to": "confirmed", "at": {"column": "pickup_at"}}),
        [("tables.orders.states.timed[2].from",
          'timed[0] already leaves "placed": at most one timed move leaves each state')],
    ),
    "timed_move_the_table_does_not_list": (
        "takeaway",
        put(*ORDERS, "timed", 0, "to", value="picked_up"),
        [("tables.orders.states.timed[0].to",
          '"orders" lists no move from "placed" to "picked_up":'
          " a timed move makes a move the table lists")],
    ),
    "more_than_eight_timed_moves": (
        "takeaway",
        _many_timed,
        [("tables.orders.states.timed", '"orders" has 11 timed moves: a table has at most eight')],
    ),
    "timed_at_uses_via": (
        "tickets",
        put(*TICKETS, "timed", 0, "at", value={"via": "event_id", "column": "doors_at"}),
        [("tables.tickets.states.timed[0].at.via",
          'a timed move reads its own row only: drop "via" and copy the time onto "tickets"')],
    ),
    "timed_at_uses_via_in_a_fallback": (
        "tickets",
        put(*TICKETS, "timed", 0, "at", "or", value=[{"via": "event_id", "column": "ends_at"}]),
        [("tables.tickets.states.timed[0].at.or[0].via",
          'a timed move reads its own row only: drop "via" and copy the time onto "tickets"')],
    ),
    "set_with_no_column": (
        "takeaway",
        put(*ORDERS, "timed", 0, "set", value={}),
        [("tables.orders.states.timed[0].set",
          '"set" names one to eight columns; this one names 0')],
    ),
    "set_with_nine_columns": (
        "takeaway",
        _nine_set_columns,
        [("tables.orders.states.timed[0].set",
          '"set" names one to eight columns; this one names 9')],
    ),
    "set_names_the_state_column": (
        "takeaway",
        put(*ORDERS, "timed", 0, "set", value={"status": "cancelled"}),
        [("tables.orders.states.timed[0].set.status",
          '"status" is the state column: the move itself writes it')],
    ),
    "set_names_the_key": (
        "takeaway",
        put(*ORDERS, "timed", 0, "set", value={"id": 5}),
        [("tables.orders.states.timed[0].set.id",
          '"id" is the key of "orders": a timed move never changes it')],
    ),
    "set_names_a_stamp": (
        "takeaway",
        put(*ORDERS, "timed", 0, "set", value={"cancelled_at": None}),
        [("tables.orders.states.timed[0].set.cancelled_at",
          '"orders.cancelled_at" is written by a stamp: set another column')],
    ),
    "set_names_a_code": (
        "tickets",
        put(*TICKETS, "timed", 0, "set", value={"link_token": None}),
        [("tables.tickets.states.timed[0].set.link_token",
          '"tickets.link_token" is written by a code: set another column')],
    ),
    "set_value_of_the_wrong_type": (
        "takeaway",
        put(*ORDERS, "timed", 0, "set", value={"cancel_code": 5}),
        [("tables.orders.states.timed[0].set.cancel_code",
          '"orders.cancel_code" takes text of at most 20 characters, not 5')],
    ),
    "set_text_longer_than_its_column": (
        "takeaway",
        put(*ORDERS, "timed", 0, "set", value={"cancel_code": "closed_for_the_holidays"}),
        [("tables.orders.states.timed[0].set.cancel_code",
          '"orders.cancel_code" takes text of at most 20 characters,'
          ' not "closed_for_the_holidays"')],
    ),
    "set_null_for_a_column_that_may_not_be_empty": (
        "takeaway",
        put(*ORDERS, "timed", 0, "set", value={"email": None}),
        [("tables.orders.states.timed[0].set.email",
          '"orders.email" may not be empty: give it a value, or make it nullable')],
    ),
    # --- moments ---
    "moment_column_not_a_time": (
        "takeaway",
        put(*ORDERS, "timed", 0, "at", "column", value="total"),
        [("tables.orders.states.timed[0].at.column",
          '"orders.total" is numeric: a moment reads a date, timestamptz or timestamp column')],
    ),
    "date_with_no_time": (
        "hotel",
        drop(*STAYS, "timed", 0, "at", "time"),
        [("tables.stays.states.timed[0].at",
          '"stays.arrive" is a date, which has no clock: give it a "time"')],
    ),
    "shift_with_no_unit": (
        "hotel",
        put(*STAYS, "timed", 0, "at", "plus", value={}),
        [("tables.stays.states.timed[0].at.plus",
          "a shift names exactly one of minutes, hours or days; this one names none")],
    ),
    "shift_with_two_units": (
        "hotel",
        put(*STAYS, "timed", 0, "at", "plus", value={"days": 1, "hours": 2}),
        [("tables.stays.states.timed[0].at.plus",
          "a shift names exactly one of minutes, hours or days; this one names hours and days")],
    ),
    "shift_not_a_whole_number": (
        "tickets",
        put(*CHECK_IN_AFTER, "minus", value={"minutes": 1.5}),
        [("tables.tickets.states.moves.valid[1].requires.time.after.minus.minutes",
          "1.5 is not a whole number: write whole minutes, or use a smaller unit")],
    ),
    "shift_setting_not_a_whole_number_column": (
        "hotel",
        put(*STAYS, "late", 0, "within", "hours", "column", value="no_show_at"),
        [("tables.stays.states.late[0].within.hours.column",
          '"settings.no_show_at" is text: a shift is read from a whole-number column (integer)')],
    ),
    "stamp_amount_setting_not_a_whole_number_column": (
        "tickets",
        put("tables", "tickets", "columns", 11, "rules", "stamp", "set", "addMinutes", "hours",
            "column", value="door_on"),
        [("tables.tickets.columns[11].rules.stamp.set.addMinutes.hours.column",
          '"settings.door_on" is boolean: a shift is read from a whole-number column (integer)')],
    ),
    "plus_and_minus": (
        "hotel",
        put(*STAYS, "timed", 0, "at", "minus", value={"hours": 1}),
        [("tables.stays.states.timed[0].at", 'a moment shifts by "plus" or by "minus", not both')],
    ),
    "four_or_moments": (
        "tickets",
        put(*TICKETS, "timed", 0, "at", "or", value=[{"column": "valid_to"}] * 4),
        [("tables.tickets.states.timed[0].at.or",
          'a moment has at most three "or" moments, not 4')],
    ),
    "time_not_hh_mm": (
        "tickets",
        put(*CHECK_IN_AFTER, "time", value="25:00"),
        [("tables.tickets.states.moves.valid[1].requires.time.after.time",
          '"25:00" is no time of day: write HH:MM on a 24-hour clock, such as "09:30"')],
    ),
    "reminder_wall_time_not_hh_mm": (
        "takeaway",
        put(*LEAD, "at", value="9am"),
        [("outbox.producers[0].before.lead.at",
          '"9am" is no time of day: write HH:MM on a 24-hour clock, such as "09:30"')],
    ),
    "time_setting_too_short": (
        "hotel",
        both(put("tables", "settings", "columns", 1, "maxLength", value=4),
             drop("tables", "settings", "columns", 1, "default")),
        [("tables.stays.states.timed[0].at.time.column",
          '"settings.no_show_at" holds 4 characters: a time setting is a text column'
          " holding at least 5 characters (HH:MM)")],
    ),
    "time_setting_not_text": (
        "hotel",
        put(*STAYS, "timed", 0, "at", "time", "column", value="cancel_hours"),
        [("tables.stays.states.timed[0].at.time.column",
          '"settings.cancel_hours" is integer: a time setting is a text column'
          " holding at least 5 characters (HH:MM)")],
    ),
    "hours_weekday_not_an_enum": (
        "takeaway",
        put(*ORDERS, "timed", 0, "at", "time", "hours", "weekday", value="closes"),
        [("tables.orders.states.timed[0].at.time.hours.weekday",
          f'"opening_hours.closes" is text: {WEEKDAY_RULE}')],
    ),
    "hours_weekday_without_sunday": (
        "takeaway",
        put("tables", "opening_hours", "columns", 1, "values",
            value=["mon", "tue", "wed", "thu", "fri", "sat"]),
        [(f"tables.orders.states.timed[{n}].at.time.hours.weekday",
          f'"opening_hours.weekday" is enum: {WEEKDAY_RULE}')
         for n in (0, 1)],
    ),
    "hours_time_not_text": (
        "takeaway",
        put(*ORDERS, "timed", 0, "at", "time", "hours", "opens", value="open"),
        [("tables.orders.states.timed[0].at.time.hours.opens",
          '"opening_hours.open" is boolean: opening hours are text columns holding HH:MM')],
    ),
    "hours_table_missing": (
        "takeaway",
        put(*ORDERS, "timed", 0, "at", "time", "hours", "table", value="hours"),
        [("tables.orders.states.timed[0].at.time.hours.table", 'there is no table "hours"')],
    ),
    "hours_column_missing": (
        "takeaway",
        put(*ORDERS, "timed", 0, "at", "time", "hours", "closes", value="shuts"),
        [("tables.orders.states.timed[0].at.time.hours.closes",
          '"opening_hours" has no column "shuts"')],
    ),
    "reminder_lead_not_a_whole_number": (
        "takeaway",
        put(*LEAD, "column", value="name"),
        [("outbox.producers[0].before.lead.column",
          '"customers.name" is text: a lead is a whole number of hours')],
    ),
    "reminder_before_a_number": (
        "takeaway",
        put("outbox", "producers", 0, "before", "at", value="total"),
        [("outbox.producers[0].before.at",
          '"orders.total" is numeric: a reminder leads up to a timestamptz column')],
    ),
    # --- a move that could never pass ---
    "timed_move_that_waits_past_its_moment": (
        "tickets",
        put(*TICKETS, "moves", "offered", 0, value=NEVER_PASSES),
        [("tables.tickets.states.timed[0].at",
          'the move from "offered" to "valid" waits until after "offer_until" plus 30 minutes,'
          " later than its timed moment: it would be refused every time;"
          " time it no earlier than what it waits for")],
    ),
    "timed_move_22_hours_on_waiting_a_day": (
        # A calendar day is at least 23 hours, so +1 day is surely later than +22 hours.
        "tickets",
        both(put(*TICKETS, "moves", "offered", 0,
                 value={"to": "valid", "requires": {"time": {"after": {
                     "column": "offer_until", "plus": {"days": 1}}}}}),
             put(*TICKETS, "timed", 0, "at", "plus", value={"hours": 22})),
        [("tables.tickets.states.timed[0].at",
          'the move from "offered" to "valid" waits until after "offer_until" plus 1 days,'
          " later than its timed moment: it would be refused every time;"
          " time it no earlier than what it waits for")],
    ),
}  # fmt: skip


@pytest.mark.parametrize(("name", "mutate", "expected"), BAD.values(), ids=BAD.keys())
def test_bad_manifest_is_refused_with_its_sentence(
    name: str, mutate: Mutation, expected: Expected
) -> None:
    assert refused(name, mutate) == expected
