"""Refusals of effects and totals, each with the sentence that says what would be right."""

from __future__ import annotations

from typing import Any

import pytest

from core.manifest.check import check_manifest
from tests.core.manifest_cases import (
    ORDERS,
    Expected,
    Mutation,
    both,
    put,
    refused,
)

CANCEL = (*ORDERS, "moves", "placed", 1, "effects", 0)
CANCEL_AT = "tables.orders.states.moves.placed[1].effects[0]"
CONFIRMED_CANCEL_AT = "tables.orders.states.moves.confirmed[1].effects[0]"
LINES = ("tables", "order_lines", "states")
TOTAL = ("tables", "orders", "columns", 5, "rules", "total")
TOTAL_AT = "tables.orders.columns[5].rules.total"
VOID_ORDER = {"to": "void", "effects": [{"via": "order_id", "to": "cancelled"}]}

BAD: dict[str, tuple[Mutation, Expected]] = {
    "unknown_table": (
        put(*CANCEL, "table", value="lines"),
        [(f"{CANCEL_AT}.table", 'there is no table "lines"')],
    ),
    "unknown_via": (
        put(*CANCEL, "via", value="order"),
        [(f"{CANCEL_AT}.via", '"order_lines" has no column "order"')],
    ),
    "via_that_points_nowhere": (
        put(*CANCEL, "via", value="item"),
        [
            (
                f"{CANCEL_AT}.via",
                '"order_lines.item" is no foreign key: with "table", "via" names a column of'
                ' "order_lines" that points at "orders"',
            )
        ],
    ),
    "via_that_references_another_table": (
        put(*CANCEL, value={"table": "orders", "via": "customer_id", "to": "cancelled"}),
        [
            (
                f"{CANCEL_AT}.via",
                '"orders.customer_id" points at "customers": with "table", "via" names a column'
                ' of "orders" that points at "orders"',
            )
        ],
    ),
    "via_alone_on_no_foreign_key": (
        put(*CANCEL, value={"via": "email", "to": "void"}),
        [
            (
                f"{CANCEL_AT}.via",
                '"orders.email" is no foreign key: without "table", "via" names a column of'
                ' "orders" that points at the row to move',
            )
        ],
    ),
    "target_without_the_move": (
        put(*CANCEL, "to", value="paid"),
        [
            (
                f"{CANCEL_AT}.to",
                '"order_lines" lists no move to "paid": an effect moves a linked row by a move'
                " its own table lists",
            )
        ],
    ),
    "move_that_is_an_undo": (
        both(
            put(*LINES, "moves", "served", value=["void", {"to": "open", "undo": True}]),
            put(*CANCEL, "to", value="open"),
        ),
        [
            (
                f"{CANCEL_AT}.to",
                'the move of "order_lines" from "served" to "open" is an undo, which only a person'
                " makes: an effect moves a linked row by a move that is no undo",
            )
        ],
    ),
    "effects_in_a_circle": (
        put(*LINES, "moves", "open", value=["served", VOID_ORDER]),
        [
            (
                CANCEL_AT,
                "effects go round in a circle (orders → order_lines → orders):"
                " a move would set itself off again; drop one of these effects",
            ),
            (
                CONFIRMED_CANCEL_AT,
                "effects go round in a circle (orders → order_lines →"
                " orders): a move would set itself off again; drop one of these effects",
            ),
            (
                "tables.order_lines.states.moves.open[1].effects[0]",
                "effects go round in a circle (order_lines → orders → order_lines): a move"
                " would set itself off again; drop one of these effects",
            ),
        ],
    ),
    "total_on_a_text_column": (
        put("tables", "orders", "columns", 5, "type", value="text"),
        [(TOTAL_AT, '"orders.total" is text: a total is written to a number column')],
    ),
    "total_of_an_unknown_column": (
        put(*TOTAL, "sum", value="price"),
        [(f"{TOTAL_AT}.sum", '"order_lines" has no column "price"')],
    ),
    "total_of_a_text_column": (
        put(*TOTAL, "sum", value="item"),
        [
            (
                f"{TOTAL_AT}.sum",
                '"order_lines.item" is text: a total sums a number column (numeric or integer)',
            )
        ],
    ),
    "total_that_sums_and_counts": (
        put(*TOTAL, "count", value=True),
        [(TOTAL_AT, 'a total names what it adds up: "sum" a number column, or "count": true')],
    ),
    "total_of_an_unknown_table": (
        put(*TOTAL, "table", value="lines"),
        [(f"{TOTAL_AT}.table", 'there is no table "lines"')],
    ),
    "total_via_another_link": (
        put(*TOTAL, "via", value="item"),
        [
            (
                f"{TOTAL_AT}.via",
                '"order_lines.item" is no foreign key: "via" names a column of "order_lines"'
                ' that points at "orders"',
            )
        ],
    ),
    "total_where_an_unknown_state": (
        put(*TOTAL, "where", "values", 1, value="eaten"),
        [
            (
                f"{TOTAL_AT}.where.values[1]",
                '"order_lines" has no state "eaten": its states are open, served, void',
            )
        ],
    ),
    "set_names_a_total": (
        put(*ORDERS, "timed", 0, "set", value={"total": 0}),
        [
            (
                "tables.orders.states.timed[0].set.total",
                '"orders.total" is written by a total: set another column',
            )
        ],
    ),
}


@pytest.mark.parametrize("mutate, expected", BAD.values(), ids=BAD.keys())
def test_refused(mutate: Mutation, expected: Expected) -> None:
    assert refused("takeaway", mutate) == expected


def test_a_count_passes() -> None:
    assert (
        refused(
            "takeaway",
            put(*TOTAL, value={"table": "order_lines", "via": "order_id", "count": True}),
        )
        == []
    )


def _chain(length: int) -> dict[str, Any]:
    """Tables t0 … t<length>, each row of t<n+1> pointing at one of t<n>, each move of t<n>
    voiding the linked rows of t<n+1>: effects `length` deep."""
    tables: dict[str, Any] = {}
    for n in range(length + 1):
        columns: list[dict[str, Any]] = [{"ref": "id", "type": "serial"}]
        if n:
            columns.append({"ref": "up", "type": "integer", "references": f"t{n - 1}"})
        move: dict[str, Any] = {"to": "void"}
        if n < length:
            move["effects"] = [{"table": f"t{n + 1}", "via": "up", "to": "void"}]
        columns.append({"ref": "status", "type": "text"})
        tables[f"t{n}"] = {
            "key": "id",
            "columns": columns,
            "states": {"column": "status", "initial": "open", "moves": {"open": [move]}},
        }
    return {"name": "chain", "tables": tables}


def test_effects_three_deep_pass_and_four_are_refused() -> None:
    assert check_manifest(_chain(3)) == []
    found = [(r.where, r.sentence) for r in check_manifest(_chain(4))]
    assert found == [
        (
            "tables.t0.states.moves.open[0].effects[0]",
            'this effect on "t1" sets off effects 4 tables deep from "t0": effects go at most'
            " 3 deep",
        ),
    ]
