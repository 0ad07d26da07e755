"""The manifest check of a board's `all_day` (docs/manifest.md "The board"): the demo's
passes; each wrong one is refused with its place and sentence."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from core.manifest.all_day_rules import counted_states, open_states
from core.manifest.check import check_manifest
from core.manifest.model import load_app

ROOT = Path(__file__).resolve().parents[2]
TAKEAWAY = json.loads((ROOT / "examples" / "takeaway.json").read_text())
AT = "tables.orders.board.all_day"


def with_all_day(all_day: Any) -> dict[str, Any]:
    manifest = copy.deepcopy(TAKEAWAY)
    manifest["tables"]["orders"]["board"]["all_day"] = all_day
    return manifest


def refusals(all_day: Any) -> list[str]:
    return [str(r) for r in check_manifest(with_all_day(all_day))]


def test_the_demo_s_all_day_passes_and_counts_the_kitchen_s_states() -> None:
    assert check_manifest(TAKEAWAY) == []
    orders = load_app(TAKEAWAY).tables["orders"]
    assert counted_states(orders) == ("placed", "confirmed", "preparing")
    # Without `states`: each state a forward move leaves (ready's undo aside, it has one).
    assert open_states(orders) == ("placed", "confirmed", "preparing", "ready")


@pytest.mark.parametrize(
    ("all_day", "said"),
    [
        (
            {"table": "menu", "via": "order_id", "count": "item"},
            f'{AT}.table: there is no table "menu"',
        ),
        (
            {"table": "order_lines", "count": "item"},
            f'{AT}.via: "order_lines" is a lines table: "via" names its column that holds'
            ' the "orders" ticket each line is for',
        ),
        (
            {"table": "order_lines", "via": "item", "count": "item"},
            f'{AT}.via: "order_lines.item" does not reference "orders": a line names its'
            " ticket by a column with references",
        ),
        (
            {"count": "items", "via": "order_id"},
            f'{AT}.via: "via" links a lines table: name the lines "table" too',
        ),
        (
            {"table": "order_lines", "via": "order_id", "count": "dish"},
            f'{AT}.count: "order_lines" has no column "dish"',
        ),
        (
            {"count": "pickup_at"},
            f'{AT}.count: "orders.pickup_at" is timestamptz: an all-day strip counts the'
            " values of a text, enum, integer or boolean column",
        ),
        (
            {"count": "email"},
            f'{AT}.count: "orders.email" holds contact details (its name says so): a wall is'
            " read by anyone in the room, so its strip never shows it",
        ),
        (
            {"table": "order_lines", "via": "order_id", "count": "item", "quantity": "item"},
            f'{AT}.quantity: "order_lines.item" is text: a quantity is an integer or numeric'
            " column",
        ),
        (
            {
                "table": "order_lines",
                "via": "order_id",
                "count": "item",
                "where": {"column": "status", "values": ["gone"]},
            },
            f'{AT}.where.values[0]: "order_lines" has no state "gone": its states are open,'
            " served, void",
        ),
        (
            {"count": "items", "states": ["cooking"]},
            f'{AT}.states[0]: "orders" has no state "cooking": its states are placed,'
            " confirmed, preparing, ready, picked_up, cancelled",
        ),
    ],
)
def test_a_wrong_all_day_is_refused_with_its_place_and_sentence(all_day: Any, said: str) -> None:
    assert refusals(all_day) == [said]


def test_an_unknown_all_day_field_is_refused_by_the_shape() -> None:
    found = refusals({"count": "items", "sum": "qty"})
    assert len(found) == 1 and found[0].startswith(f"{AT}.sum")
