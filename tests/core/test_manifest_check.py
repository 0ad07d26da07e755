"""The manifest check: the examples pass, and each refusal of the issue gets its sentence."""

from __future__ import annotations

from typing import Any

import pytest

from core.manifest.check import Refusal, check_manifest, check_manifest_text
from tests.core.manifest_cases import (
    EXAMPLE_NAMES,
    EXAMPLES,
    Mutation,
    append,
    both,
    drop,
    example,
    node,
    put,
)

ORDERS = ("tables", "orders", "states")
TICKETS = ("tables", "tickets", "states")
STAYS = ("tables", "stays", "states")
CHECK_IN_AFTER = (*TICKETS, "moves", "valid", 1, "requires", "time", "after")
LEAD = ("outbox", "producers", 0, "before", "lead")
WEEKDAY_RULE = "an hours table's weekday is an enum of exactly mon, tue, wed, thu, fri, sat, sun"
ORDER_STATES = "placed, confirmed, preparing, ready, picked_up, cancelled"


def refused(name: str, mutate: Mutation) -> list[tuple[str, str]]:
    """The refusals of an example after one mutation, as (where, sentence) pairs."""
    doc = example(name)
    mutate(doc)
    return [(r.where, r.sentence) for r in check_manifest(doc)]


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_passes(name: str) -> None:
    assert check_manifest_text((EXAMPLES / f"{name}.json").read_text(encoding="utf-8")) == []


# --- the two sentences of the spec, character for character -------------------------------


def test_undo_sentence_is_the_specs() -> None:
    undo = {"from": "ready", "to": "preparing", "at": {"column": "pickup_at"}}
    assert refused("takeaway", append(*ORDERS, "timed", value=undo)) == [
        (
            "tables.orders.states.timed[2].to",
            'the move from "ready" to "preparing" is an undo, which only a person makes',
        )
    ]


def test_settings_sentence_is_the_specs() -> None:
    own_time = {"table": "stays", "column": "arrival_time"}
    assert refused("hotel", put(*STAYS, "timed", 0, "at", "time", value=own_time)) == [
        (
            "tables.stays.states.timed[0].at.time",
            "“stays” may hold many rows, so “stays.arrival_time” is no setting: read settings"
            " from the app’s one-row settings table (outbox.settings.table), or from a table"
            " that links nowhere, that no table links to, and that keeps no states or limits",
        )
    ]


# --- a table of bad manifests ---------------------------------------------------------------


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


LATE_REFUSE = {
    "to": "cancelled",
    "moment": {"column": "arrive", "time": {"table": "settings", "column": "arrive_from"}},
    "within": {"hours": 48},
    "mode": "refuse",
}
LATE_CHECK_IN = {**LATE_REFUSE, "to": "checked_in", "mode": "flag", "flag": "late_cancel"}
NEVER_PASSES = {
    "to": "valid",
    "requires": {"time": {"after": {"column": "offer_until", "plus": {"minutes": 30}}}},
}

# (example, mutation, [(where, sentence), …])
BAD: dict[str, tuple[str, Mutation, list[tuple[str, str]]]] = {
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
          '"orders.total" is numeric: a moment reads a date or timestamptz column')],
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
    # --- settings ---
    "setting_from_a_linked_table": (
        "takeaway",
        put(*LEAD, "fallback", value={"table": "customers", "column": "reminder_hours"}),
        [("outbox.producers[0].before.lead.fallback",
          "“customers” may hold many rows, so “customers.reminder_hours” is no setting: read"
          " settings from the app’s one-row settings table (outbox.settings.table), or from a"
          " table that links nowhere, that no table links to, and that keeps no states or limits")],
    ),
    "setting_condition_of_the_wrong_type": (
        "tickets",
        put(*TICKETS, "moves", "valid", 1, "requires", "setting", 0, "eq", value="yes"),
        [("tables.tickets.states.moves.valid[1].requires.setting[0].eq",
          '"settings.door_on" takes true or false, not "yes"')],
    ),
    # --- late rules ---
    "second_late_rule_for_a_move": (
        "hotel",
        append(*STAYS, "late", value=LATE_REFUSE),
        [("tables.stays.states.late[1].to",
          'late[0] already judges the move to "cancelled": one late rule per move')],
    ),
    "late_from_a_state_without_the_move": (
        "hotel",
        put(*STAYS, "late", 0, "from", value=["checked_in"]),
        [("tables.stays.states.late[0].from[0]",
          '"stays" lists no move from "checked_in" to "cancelled":'
          ' "from" names states that have it')],
    ),
    "late_within_two_units": (
        "hotel",
        put(*STAYS, "late", 0, "within", value={"hours": 48, "days": 2}),
        [("tables.stays.states.late[0].within",
          "a shift names exactly one of minutes, hours or days; this one names hours and days")],
    ),
    "late_flag_missing": (
        "hotel",
        drop(*STAYS, "late", 0, "flag"),
        [("tables.stays.states.late[0]",
          'mode "flag" needs a "flag": a yes/no column of "stays" set when the move is late')],
    ),
    "late_flag_not_yes_no": (
        "hotel",
        put(*STAYS, "late", 0, "flag", value="guest_name"),
        [("tables.stays.states.late[0].flag",
          '"stays.guest_name" is text: a late flag is a yes/no (boolean) column')],
    ),
    "late_flag_is_the_state_column": (
        "hotel",
        put(*STAYS, "late", 0, "flag", value="status"),
        [("tables.stays.states.late[0].flag",
          '"status" is the state column: flag a late move in a yes/no column of its own')],
    ),
    "late_flag_written_by_a_stamp": (
        "hotel",
        put(*STAYS, "late", 0, "flag", value="cancelled_at"),
        [("tables.stays.states.late[0].flag",
          '"stays.cancelled_at" is written by a stamp: flag a late move in a column of its own')],
    ),
    "late_flag_of_another_late_rule": (
        "hotel",
        append(*STAYS, "late", value=LATE_CHECK_IN),
        [("tables.stays.states.late[1].flag",
          '"late_cancel" already flags late[0]: give each late rule a flag of its own')],
    ),
    "late_refuse_someone_else": (
        "hotel",
        both(put(*STAYS, "late", 0, "mode", value="refuse"),
             drop(*STAYS, "late", 0, "flag"),
             put(*STAYS, "late", 0, "refuse", value="staff")),
        [("tables.stays.states.late[0].refuse",
          '"staff" is not allowed here: write "public" or "everyone"')],
    ),
    # --- references and unknown fields ---
    "foreign_key_to_a_missing_table": (
        "hotel",
        put("tables", "stays", "columns", 1, "references", value="room"),
        [("tables.stays.columns[1].references", 'there is no table "room"')],
    ),
    "via_a_missing_column": (
        "tickets",
        put(*CHECK_IN_AFTER, "via", value="evnt_id"),
        [("tables.tickets.states.moves.valid[1].requires.time.after.via",
          '"tickets" has no column "evnt_id"')],
    ),
    "via_a_column_that_is_no_foreign_key": (
        "tickets",
        put(*CHECK_IN_AFTER, "via", value="seat"),
        [("tables.tickets.states.moves.valid[1].requires.time.after.via",
          '"tickets.seat" is no foreign key: "via" names a column with references')],
    ),
    "via_reads_a_column_the_linked_table_lacks": (
        "tickets",
        put(*CHECK_IN_AFTER, "column", value="door_at"),
        [("tables.tickets.states.moves.valid[1].requires.time.after.column",
          '"events" has no column "door_at"')],
    ),
    "unknown_field_in_a_timed_move": (
        "takeaway",
        both(put(*ORDERS, "timed", 0, "sett", value={"cancel_code": "closed"}),
             drop(*ORDERS, "timed", 0, "set")),
        [("tables.orders.states.timed[0].sett", 'unknown field "sett": did you mean "set"?')],
    ),
    "unknown_field_at_the_top": (
        "hotel",
        put("titel", value="Hotel"),
        [("titel", 'unknown field "titel": did you mean "title"?')],
    ),
    "unknown_column_type": (
        "takeaway",
        put("tables", "orders", "columns", 2, "type", value="txt"),
        [("tables.orders.columns[2].type",
          '"txt" is not allowed here: write "serial", "integer", "numeric", "text", "boolean",'
          ' "date", "timestamptz" or "enum"')],
    ),
    # --- states ---
    "timed_from_an_unknown_state": (
        "takeaway",
        put(*ORDERS, "timed", 0, "from", value="plaed"),
        [("tables.orders.states.timed[0].from",
          f'"orders" has no state "plaed": its states are {ORDER_STATES}')],
    ),
    "initial_an_unknown_state": (
        "hotel",
        put(*STAYS, "initial", value="reserved"),
        [("tables.stays.states.initial",
          '"stays" has no state "reserved": its states are booked, checked_in, checked_out,'
          " cancelled, no_show")],
    ),
    "move_to_a_state_the_enum_lacks": (
        "takeaway",
        put(*ORDERS, "moves", "ready", 0, value="collected"),
        [("tables.orders.states.moves.ready[0]",
          f'"orders" has no state "collected": its states are {ORDER_STATES}')],
    ),
    "state_column_missing": (
        "takeaway",
        put(*ORDERS, "column", value="state"),
        [("tables.orders.states.column", '"orders" has no column "state"')],
    ),
    "move_kept_for_an_unknown_role": (
        "takeaway",
        put(*ORDERS, "moves", "ready", 1, "roles", value=["owner"]),
        [("tables.orders.states.moves.ready[1].roles[0]",
          '"owner" is not a role of the app: write one of staff, manager, or "public" for guests')],
    ),
}  # fmt: skip


@pytest.mark.parametrize(("name", "mutate", "expected"), BAD.values(), ids=BAD.keys())
def test_bad_manifest_is_refused_with_its_sentence(
    name: str, mutate: Mutation, expected: list[tuple[str, str]]
) -> None:
    assert refused(name, mutate) == expected


# Mutations that look close to a refusal but are fine.
GOOD: dict[str, tuple[str, Mutation]] = {
    "setting_from_a_table_standing_alone": (
        "hotel",
        both(
            put("tables", "house_rules", value={"key": "id", "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "no_show_at", "type": "text", "maxLength": 5}]}),
            put(*STAYS, "timed", 0, "at", "time", "table", value="house_rules"),
        ),
    ),
    "a_time_kept_on_the_row": (
        "hotel",
        put(*STAYS, "timed", 0, "at", "time", value={"column": "arrival_time"}),
    ),
    "wait_past_the_moment_with_a_time_of_day": (
        # The spec refuses only when neither moment has a time of day.
        "tickets",
        both(put(*TICKETS, "moves", "offered", 0, value=NEVER_PASSES),
             put(*TICKETS, "timed", 0, "at", "time", value="23:00")),
    ),
    "wait_past_the_moment_with_a_fallback": (
        "tickets",
        both(put(*TICKETS, "moves", "offered", 0, value=NEVER_PASSES),
             put(*TICKETS, "timed", 0, "at", "or", value=[{"column": "valid_to"}])),
    ),
    "wait_a_day_timed_25_hours_on": (
        # A calendar day is at most 25 hours: +1 day is not surely later than +25 hours.
        "tickets",
        both(put(*TICKETS, "moves", "offered", 0,
                 value={"to": "valid", "requires": {"time": {"after": {
                     "column": "offer_until", "plus": {"days": 1}}}}}),
             put(*TICKETS, "timed", 0, "at", "plus", value={"hours": 25})),
    ),
    "three_or_moments": (
        "tickets",
        put(*TICKETS, "timed", 0, "at", "or", value=[{"column": "valid_to"}] * 3),
    ),
    "eight_set_columns_at_most": (
        "takeaway",
        put(*ORDERS, "timed", 0, "set", value={"cancel_code": "closed", "note": None}),
    ),
    "late_refuse_everyone": (
        "hotel",
        both(put(*STAYS, "late", 0, "mode", value="refuse"),
             drop(*STAYS, "late", 0, "flag"),
             put(*STAYS, "late", 0, "refuse", value="everyone")),
    ),
}  # fmt: skip


@pytest.mark.parametrize(("name", "mutate"), GOOD.values(), ids=GOOD.keys())
def test_close_but_fine_manifest_passes(name: str, mutate: Mutation) -> None:
    assert refused(name, mutate) == []


# --- the text --------------------------------------------------------------------------------


def test_malformed_json_names_line_and_column() -> None:
    text = '{\n  "name": "takeaway",\n  "tables": {,}\n}\n'
    # Line 3 is `  "tables": {,}`; the comma is its 14th character.
    assert check_manifest_text(text) == [
        Refusal(
            "line 3, column 14",
            "this is not JSON: expecting property name enclosed in double quotes",
        )
    ]


def test_manifest_that_is_not_an_object_is_refused() -> None:
    assert check_manifest([1, 2]) == [Refusal("manifest", "write an object {…} here, not [1, 2]")]


def test_refusal_reads_where_then_sentence() -> None:
    assert str(Refusal("tables.orders.key", "x")) == "tables.orders.key: x"
