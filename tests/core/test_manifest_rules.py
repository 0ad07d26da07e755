"""Refusals of settings, late rules, references, states, columns and the outbox."""

from __future__ import annotations

import pytest

from tests.core.manifest_cases import (
    CHECK_IN_AFTER,
    LEAD,
    ORDERS,
    STAYS,
    TICKETS,
    Expected,
    Mutation,
    append,
    both,
    drop,
    put,
    refused,
)

ORDER_STATES = "placed, confirmed, preparing, ready, picked_up, cancelled"
LATE_REFUSE = {
    "to": "cancelled",
    "moment": {"column": "arrive", "time": {"table": "settings", "column": "arrive_from"}},
    "within": {"hours": 48},
    "mode": "refuse",
}
LATE_CHECK_IN = {**LATE_REFUSE, "to": "checked_in", "mode": "flag", "flag": "late_cancel"}
ADMINIUM_SCHEMA = (
    "{} is where Adminium keeps its own tables (users, password and token hashes, the"
    " audit): an app there would show and change them; give the app a schema of its own"
)
POSTGRESQL_SCHEMA = (
    "{} is where PostgreSQL keeps its own catalog: an app there would show and change"
    " the database's roles and settings; give the app a schema of its own"
)

# (example, mutation, [(where, sentence), …])
BAD: dict[str, tuple[str, Mutation, Expected]] = {
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
    # --- the lock ---
    "lock_watching_a_missing_column": (
        "takeaway",
        put("tables", "orders", "lock", 0, "when", "column", value="state"),
        [("tables.orders.lock[0].when.column", '"orders" has no column "state"')],
    ),
    "lock_watching_an_unknown_state": (
        "takeaway",
        put("tables", "orders", "lock", 0, "when", "values", 1, value="collected"),
        [("tables.orders.lock[0].when.values[1]",
          f'"orders" has no state "collected": its states are {ORDER_STATES}')],
    ),
    "lock_keeping_a_missing_column_shut": (
        "takeaway",
        put("tables", "orders", "lock", 0, "columns", value=["notes"]),
        [("tables.orders.lock[0].columns[0]", '"orders" has no column "notes"')],
    ),
    "lock_naming_the_state_column": (
        "takeaway",
        put("tables", "orders", "lock", 0, "columns", value=["note", "status"]),
        [("tables.orders.lock[0].columns[1]",
          '"orders.status" is the state column: only a listed move changes it,'
          " so a lock never needs to name it")],
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
          ' "date", "timestamptz", "timestamp", "uuid" or "enum"')],
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
    "state_longer_than_its_text_column": (
        # "checked_in" is 10 characters; "valid" (5) and "offered" (7) fit in 9.
        "tickets",
        put("tables", "tickets", "columns", 7, "maxLength", value=9),
        [(f"tables.tickets.states.moves.{spot}",
          '"tickets.status" holds 9 characters, too few for "checked_in"')
         for spot in ("valid[1]", "offered[1]")],
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
    # --- columns, keys, roles and the outbox ---
    "key_not_a_column": (
        "hotel",
        put("tables", "rooms", "key", value="room_id"),
        [("tables.rooms.key", '"rooms" has no column "room_id": the key names one')],
    ),
    "column_twice": (
        "hotel",
        append("tables", "rooms", "columns", value={"ref": "rate", "type": "integer"}),
        [("tables.rooms.columns[4].ref", '"rooms" already has a column "rate" (columns[3])')],
    ),
    "enum_without_values": (
        "hotel",
        drop("tables", "rooms", "columns", 2, "values"),
        [("tables.rooms.columns[2]", '"rooms.kind" is enum: list its "values"')],
    ),
    "max_length_on_a_number": (
        "hotel",
        put("tables", "rooms", "columns", 3, "maxLength", value=10),
        [("tables.rooms.columns[3].maxLength",
          '"rooms.rate" is numeric: "maxLength" is for text columns')],
    ),
    "foreign_key_of_another_type": (
        "hotel",
        put("tables", "stays", "columns", 1, "type", value="text"),
        [("tables.stays.columns[1].type",
          '"stays.room_id" is text but "rooms.id" is serial: a foreign key to it is integer')],
    ),
    "default_of_the_wrong_type": (
        "hotel",
        put("tables", "settings", "columns", 3, "default", value="48"),
        [("tables.settings.columns[3].default",
          '"settings.cancel_hours" takes a whole number, not "48"')],
    ),
    "stamp_on_a_text_column": (
        "hotel",
        put("tables", "stays", "columns", 6, "rules",
            value={"stamp": {"on": {"column": "status", "values": ["cancelled"]}}}),
        [("tables.stays.columns[6].rules.stamp",
          '"stays.arrival_time" is text: a stamp writes a timestamptz or a timestamp')],
    ),
    "stamp_on_a_state_the_table_lacks": (
        "hotel",
        put("tables", "stays", "columns", 9, "rules", "stamp", "on", "values", value=["canceled"]),
        [("tables.stays.columns[9].rules.stamp.on.values[0]",
          '"stays" has no state "canceled": its states are booked, checked_in, checked_out,'
          " cancelled, no_show")],
    ),
    "code_longer_than_its_column": (
        "tickets",
        put("tables", "tickets", "columns", 10, "maxLength", value=12),
        [("tables.tickets.columns[10].rules.code.length",
          '"tickets.link_token" holds 12 characters, too few for a code of 16')],
    ),
    "link_code_shorter_than_16": (
        "tickets",
        put("tables", "tickets", "columns", 10, "rules", "code", "length", value=12),
        [("tables.tickets.columns[10].rules.code.length",
          '"tickets.link_token" makes codes of 12 characters: a link code opens a row to'
          " whoever holds it, so it has at least 16")],
    ),
    "role_named_public": (
        "hotel",
        put("roles", value=["reception", "manager", "public"]),
        [("roles[2]", '"public" is kept for guests: give the staff role another name')],
    ),
    "message_to_a_missing_column": (
        "hotel",
        put("outbox", "producers", 0, "to", value="email"),
        [("outbox.producers[0].to", '"stays" has no column "email"')],
    ),
    "producer_of_an_unknown_kind": (
        "hotel",
        put("outbox", "producers", 0, "kind", value="sms"),
        [("outbox.producers[0]",
          'a producer\'s "kind" is "reminder" or "message", not "sms"')],
    ),
    "settings_table_missing": (
        "hotel",
        put("outbox", "settings", "table", value="config"),
        [("outbox.settings.table", 'there is no table "config"')],
    ),
    # --- the schema: never one where Adminium or PostgreSQL keeps its own tables ---
    "schema_of_adminium_itself": (
        "takeaway",
        put("schema", value="adminium"),
        [("schema", ADMINIUM_SCHEMA.format('"adminium"'))],
    ),
    "schema_of_the_control_plane": (
        "takeaway",
        put("schema", value="adminium_control"),
        [("schema", ADMINIUM_SCHEMA.format('"adminium_control"'))],
    ),
    "schema_of_the_postgresql_catalog": (
        "takeaway",
        put("schema", value="pg_catalog"),
        [("schema", POSTGRESQL_SCHEMA.format('"pg_catalog"'))],
    ),
    "schema_of_information_schema": (
        "takeaway",
        put("schema", value="information_schema"),
        [("schema", POSTGRESQL_SCHEMA.format('"information_schema"'))],
    ),
    # --- text and numbers no database holds, anywhere in the document ---
    "title_holding_a_nul": (
        "takeaway",
        put("title", value="Take\x00away"),
        [("title", '"Take\\u0000away" holds a NUL character (\\u0000), which no database'
          " text may hold: remove it")],
    ),
    "default_holding_a_lone_surrogate": (
        "takeaway",
        put("tables", "orders", "columns", 0, "default", value="A\ud800"),
        [("tables.orders.columns[0].default", '"A\\ud800" holds half of a character (a lone'
          " surrogate), which is no text: remove it")],
    ),
    "name_of_a_table_holding_a_lone_surrogate": (
        "takeaway",
        put("tables", "x\udc00", value={}),
        [('tables."x\\udc00"', 'the name "x\\udc00" holds half of a character (a lone'
          " surrogate), which is no text: remove it")],
    ),
    "set_value_that_is_infinity": (
        "takeaway",
        put(*ORDERS, "timed", 0, "set", "cancel_code", value=float("inf")),
        [("tables.orders.states.timed[0].set.cancel_code",
          "Infinity is no number a column holds: write a finite number")],
    ),
    "condition_value_that_is_nan": (
        "tickets",
        put(*TICKETS, "moves", "valid", 1, "requires", "setting", 0, "eq", value=float("nan")),
        [("tables.tickets.states.moves.valid[1].requires.setting[0].eq",
          "NaN is no number a column holds: write a finite number")],
    ),
}  # fmt: skip


@pytest.mark.parametrize(("name", "mutate", "expected"), BAD.values(), ids=BAD.keys())
def test_bad_manifest_is_refused_with_its_sentence(
    name: str, mutate: Mutation, expected: Expected
) -> None:
    assert refused(name, mutate) == expected
