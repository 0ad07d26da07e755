"""The demo takeaway's pickup slot limit (examples/takeaway.json `per_pickup_slot`): at
most 3 orders placed, confirmed, preparing or ready per pickup time; the next is refused."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.basics.actors import Actor
from core.basics.errors import LimitReached
from core.writes.pipeline import change_row, create_row
from core.writes.request import WriteRequest
from tests.integration.pipeline_fixtures import at
from tests.integration.sweep_fixtures import Shop

TAKEAWAY = json.loads((Path(__file__).parents[2] / "examples" / "takeaway.json").read_text())
# build_shop makes one settings row of defaults: give the venue's name one.
for _column in TAKEAWAY["tables"]["settings"]["columns"]:
    if _column["ref"] == "venue_name":
        _column["default"] = "Test Kitchen"
STAFF = Actor.person("staff@example.com", frozenset({"staff"}))
NOON = at("2026-07-01 11:00")
SLOT = at("2026-07-01 12:00")  # 13:00 BST, an open hour


def test_the_next_order_for_a_full_pickup_slot_is_refused(
    make_shop: Callable[..., Shop],
) -> None:
    kitchen = make_shop(TAKEAWAY)
    customer = kitchen.insert("customers", name="Ana", email="ana@example.com")

    def place(pickup_at: Any) -> Any:
        values = {
            "customer_id": customer,
            "email": "ana@example.com",
            "pickup_at": pickup_at,
            "items": "1 x falafel wrap",
        }
        return create_row(kitchen.store, WriteRequest("orders", STAFF, NOON, values=values)).key

    first = place(SLOT)
    place(SLOT)
    place(SLOT)
    with pytest.raises(LimitReached) as full:
        place(SLOT)
    assert full.value.details == {"limit": "per_pickup_slot", "max": 3, "count": 4}
    place(at("2026-07-01 12:15"))  # the next slot has room
    # A cancelled order leaves the count: its place goes to the next order.
    change_row(kitchen.store, WriteRequest("orders", STAFF, NOON, key=first, move_to="cancelled"))
    place(SLOT)
