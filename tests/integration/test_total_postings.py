"""A posting whose amount is a total takes the total as committed (the row as committed,
for ledgers): totals are recomputed at the end of the outermost write, so a
posting made before then read the total from before it."""

from __future__ import annotations

import copy
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
import sqlalchemy as sa

from core.manifest.check import check_manifest
from tests.integration.effect_fixtures import KITCHEN, Kitchen
from tests.integration.sweep_fixtures import Shop


def tab_kitchen() -> dict[str, Any]:
    """The kitchen whose order's total counts served lines only; an order moved `done`
    serves its lines (an effect), and its total is taken from the order's tab then."""
    manifest = copy.deepcopy(KITCHEN)
    manifest["ledgers"] = [{"name": "tabs", "table": "tabs", "balance": "balance", "min": 0}]
    manifest["tables"]["tabs"] = {
        "key": "id",
        "columns": [
            {"ref": "id", "type": "serial"},
            {"ref": "balance", "type": "numeric", "default": 0},
        ],
    }
    orders = manifest["tables"]["orders"]
    orders["columns"].append(
        {"ref": "tab_id", "type": "integer", "references": "tabs", "nullable": True}
    )
    total = next(c for c in orders["columns"] if c["ref"] == "total")
    total["rules"]["total"]["where"] = {"column": "status", "values": ["served", "paid"]}
    orders["states"]["moves"]["placed"][0] = {
        "to": "done",
        "effects": [{"table": "order_lines", "via": "order_id", "to": "served"}],
    }
    orders["postings"] = [
        {
            "ledger": "tabs",
            "via": "tab_id",
            "amount": "total",
            "on": {"column": "status", "values": ["done"]},
        }
    ]
    assert check_manifest(manifest) == []  # the manifest check lets a total be an amount
    return manifest


@pytest.fixture
def kitchen(make_shop: Callable[..., Shop]) -> Kitchen:
    return Kitchen(make_shop(tab_kitchen()).store)


def test_a_move_whose_effects_change_the_total_takes_the_total_as_committed(
    kitchen: Kitchen,
) -> None:
    tab = kitchen.insert("tabs", balance=Decimal("100"))
    order = kitchen.order(None, tab_id=tab)
    kitchen.line(order, Decimal("5"))
    kitchen.line(order, Decimal("10"))
    # Before the move its total is 0 (no line served); the move serves both: 15 committed.
    result = kitchen.move("orders", order, "done")
    assert kitchen.total(order) == (Decimal("15"), 2)
    assert result.row["total"] == Decimal("15")
    assert Decimal(kitchen.row("tabs", tab)["balance"]) == Decimal("85")
    with kitchen.engine.connect() as conn:
        posted = conn.execute(
            sa.text("SELECT amount, status FROM adminium.postings WHERE row_key = :k"),
            {"k": str(order)},
        ).all()
        entries = conn.execute(
            sa.text("SELECT amount, balance, kind FROM adminium.ledger_entries")
        ).all()
    assert [(Decimal(a), s) for a, s in posted] == [(Decimal("15"), "taken")]
    assert [(abs(Decimal(a)), Decimal(b), k) for a, b, k in entries] == [
        (Decimal("15"), Decimal("85"), "take")
    ]
    assert any(e.table == "tabs" and str(e.key) == str(tab) for e in result.events)
