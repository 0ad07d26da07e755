"""Refusals of limits, holds, postings and ledgers: each says what would be right.

The cases mutate examples/tickets.json, whose tickets count per event, whose till tickets
hold their gift-card payments, and whose app keeps the gift_cards ledger.
"""

from __future__ import annotations

import pytest

from tests.core.manifest_cases import Expected, Mutation, append, both, put, refused

LIMIT = ("tables", "tickets", "limits", 0)
HOLD = ("tables", "till_tickets", "hold")
POSTING = ("tables", "till_tickets", "postings", 0)
LEDGER = ("ledgers", 0)
TILL_STATES = "open, paid, void"

BAD: dict[str, tuple[Mutation, Expected]] = {
    "limit_counting_an_unknown_state": (
        put(*LIMIT, "count", "values", 0, value="sold"),
        [
            (
                "tables.tickets.limits[0].count.values[0]",
                '"tickets" has no state "sold": its states are valid, offered, checked_in',
            )
        ],
    ),
    "limit_per_an_unknown_column": (
        put(*LIMIT, "per", value=["event_id", "event"]),
        [("tables.tickets.limits[0].per[1]", '"tickets" has no column "event"')],
    ),
    "limit_max_not_a_whole_number": (
        put(*LIMIT, "max", value=2.5),
        [
            (
                "tables.tickets.limits[0].max",
                "2.5 is no count of rows: a limit's max is a whole number, 0 or more",
            )
        ],
    ),
    "limit_max_a_setting_of_text": (
        put(*LIMIT, "max", "column", value="offer_hours_text"),
        [("tables.tickets.limits[0].max.column", '"settings" has no column "offer_hours_text"')],
    ),
    "limit_max_a_setting_not_whole": (
        put(*LIMIT, "max", "column", value="card_max"),
        [
            (
                "tables.tickets.limits[0].max.column",
                '"settings.card_max" is numeric: a limit\'s max is read from a whole-number'
                " column (integer)",
            )
        ],
    ),
    "limit_named_twice": (
        append(
            "tables",
            "tickets",
            "limits",
            value={
                "name": "per_event",
                "count": {"column": "status", "values": ["valid"]},
                "max": 3,
            },
        ),
        [
            (
                "tables.tickets.limits[1].name",
                '"tickets" already has a limit "per_event" (limits[0])',
            )
        ],
    ),
    "hold_in_a_state_the_table_lacks": (
        put(*HOLD, "states", value=["open", "pending"]),
        [
            (
                "tables.till_tickets.hold.states[1]",
                f'"till_tickets" has no state "pending": its states are {TILL_STATES}',
            )
        ],
    ),
    "hold_until_not_a_moment": (
        put(*HOLD, "until", value={"column": "items"}),
        [
            (
                "tables.till_tickets.hold.until.column",
                '"till_tickets.items" is text: a moment reads a date, timestamptz or timestamp'
                " column",
            )
        ],
    ),
    "hold_until_read_through_a_link": (
        put(
            *HOLD,
            "until",
            value={"column": "opened_at", "or": [{"via": "gift_card_id", "column": "x"}]},
        ),
        [
            (
                "tables.till_tickets.hold.until.or[0].via",
                'a hold ends at a moment of its own row, which limits count by: drop "via" and'
                ' copy the time onto "till_tickets"',
            )
        ],
    ),
    "posting_into_an_unknown_ledger": (
        put(*POSTING, "ledger", value="vouchers"),
        [
            (
                "tables.till_tickets.postings[0].ledger",
                'there is no ledger "vouchers": the app\'s ledgers are gift_cards',
            )
        ],
    ),
    "posting_via_a_column_that_points_elsewhere": (
        both(
            append(
                "tables",
                "till_tickets",
                "columns",
                value={
                    "ref": "event_id",
                    "type": "integer",
                    "references": "events",
                },
            ),
            put(*POSTING, "via", value="event_id"),
        ),
        [
            (
                "tables.till_tickets.postings[0].via",
                '"till_tickets.event_id" points at "events": "via" names a column that points at'
                ' the accounts of "gift_cards", "gift_cards"',
            )
        ],
    ),
    "posting_amount_not_a_number": (
        put(*POSTING, "amount", value="items"),
        [
            (
                "tables.till_tickets.postings[0].amount",
                '"till_tickets.items" is text: a posting\'s amount is a number column'
                " (numeric or integer)",
            )
        ],
    ),
    "posting_on_an_unknown_state": (
        put(*POSTING, "on", value={"column": "status", "values": ["closed"]}),
        [
            (
                "tables.till_tickets.postings[0].on.values[0]",
                f'"till_tickets" has no state "closed": its states are {TILL_STATES}',
            )
        ],
    ),
    "gives_back_a_held_state": (
        put(*POSTING, "givesBack", value=["open"]),
        [
            (
                "tables.till_tickets.postings[0].givesBack[0]",
                '"open" is a held state: a hold is given back by a move out of open',
            )
        ],
    ),
    "gives_back_without_a_hold": (
        put("tables", "till_tickets", "hold", value=None),
        [
            (
                "tables.till_tickets.postings[0].givesBack",
                '"givesBack" gives back a hold, and "till_tickets" keeps no hold: add "hold" to the'
                ' table, or drop "givesBack"',
            )
        ],
    ),
    "ledger_balance_not_a_number": (
        put(*LEDGER, "balance", value="holder_name"),
        [
            (
                "ledgers[0].balance",
                '"gift_cards.holder_name" is text: a balance is a number column'
                " (numeric or integer)",
            )
        ],
    ),
    "ledger_of_an_unknown_table": (
        put(*LEDGER, "table", value="cards"),
        [("ledgers[0].table", 'there is no table "cards"')],
    ),
    "ledger_bound_a_setting_of_text": (
        put(*LEDGER, "max", value={"table": "settings", "column": "door_on"}),
        [
            (
                "ledgers[0].max.column",
                '"settings.door_on" is boolean: a ledger\'s max is read from a number column'
                " (numeric or integer)",
            )
        ],
    ),
    "ledger_min_above_max": (
        put(*LEDGER, "max", value=-5),
        [("ledgers[0].min", "min 0 is above max -5: no balance could be kept between them")],
    ),
    "limits_make_a_table_no_setting_table": (
        both(
            put(
                "tables",
                "events",
                "limits",
                value=[
                    {"name": "all", "count": {"column": "venue", "values": ["x"]}, "max": 9},
                ],
            ),
            put(*LIMIT, "max", value={"table": "events", "column": "name"}),
        ),
        [
            (
                "tables.tickets.limits[0].max",
                "“events” may hold many rows, so “events.name” is no setting: read settings from"
                " the app’s one-row settings table (outbox.settings.table), or from a table that"
                " links nowhere, that no table links to, and that keeps no states or limits",
            )
        ],
    ),
}


@pytest.mark.parametrize(("mutate", "expected"), BAD.values(), ids=BAD.keys())
def test_bad_ledger_rule_is_refused_with_its_sentence(mutate: Mutation, expected: Expected) -> None:
    assert refused("tickets", mutate) == expected


def test_a_max_or_bound_in_the_wrong_shape_is_refused_by_the_model() -> None:
    found = refused("tickets", put(*LIMIT, "max", value="four"))
    assert found == [
        (
            "tables.tickets.limits[0].max",
            'an amount is a whole number or a setting {table, column}, not "four"',
        )
    ]


def test_the_tickets_example_passes() -> None:
    assert refused("tickets", lambda doc: None) == []
