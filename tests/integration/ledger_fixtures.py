"""The limit and ledger tests' helpers: a till whose orders fill pickup slots and may be
paid partly by a gift card, held until 21:00 on the venue's clock on the pickup day.

Hand-written, not examples/: the tests need a limit whose max is a setting, a hold ended
by a wall time on the London clock, and a ledger capped by a setting, together.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

import sqlalchemy as sa

from core.basics.actors import Actor
from core.writes.pipeline import WriteResult, change_row, create_row
from core.writes.request import WriteRequest
from tests.integration.sweep_fixtures import Shop

STAFF = Actor.person("staff@example.com")

TILL: dict[str, Any] = {
    "name": "till",
    "outbox": {"settings": {"table": "settings"}},
    "ledgers": [
        {
            "name": "gift_cards",
            "table": "gift_cards",
            "balance": "balance",
            "min": 0,
            "max": {"table": "settings", "column": "card_max"},
        }
    ],
    "tables": {
        "settings": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "slot_capacity", "type": "integer", "nullable": True, "default": 2},
                {"ref": "card_max", "type": "numeric", "nullable": True, "default": 100},
            ],
        },
        "gift_cards": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "balance", "type": "numeric", "default": 0},
            ],
        },
        "orders": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {
                    "ref": "status",
                    "type": "enum",
                    "values": ["placed", "confirmed", "picked_up", "cancelled"],
                },
                {"ref": "pickup_at", "type": "timestamptz"},
                {
                    "ref": "gift_card_id",
                    "type": "integer",
                    "references": "gift_cards",
                    "nullable": True,
                },
                {"ref": "card_paid", "type": "numeric", "default": 0},
            ],
            "states": {
                "column": "status",
                "initial": "placed",
                "moves": {
                    "placed": ["confirmed", "cancelled"],
                    "confirmed": ["picked_up", "cancelled"],
                },
            },
            "limits": [
                {
                    "name": "per_slot",
                    "count": {"column": "status", "values": ["placed", "confirmed"]},
                    "per": ["pickup_at"],
                    "max": {"table": "settings", "column": "slot_capacity"},
                }
            ],
            "hold": {"states": ["placed"], "until": {"column": "pickup_at", "time": "21:00"}},
            "postings": [
                {
                    "ledger": "gift_cards",
                    "via": "gift_card_id",
                    "amount": "card_paid",
                    "on": "create",
                    "givesBack": ["cancelled"],
                }
            ],
        },
    },
}


class Till(Shop):
    """The till on a fresh database: orders through the pipeline, cards, entries."""

    def place(self, pickup_at: datetime, now: datetime, **values: Any) -> WriteResult:
        """A new order placed by staff at `now` (through the pipeline)."""
        request = WriteRequest("orders", STAFF, now, values={"pickup_at": pickup_at, **values})
        return create_row(self.store, request)

    def move(self, key: Any, to: str, now: datetime) -> WriteResult:
        """A person's move of an order."""
        return change_row(self.store, WriteRequest("orders", STAFF, now, key=key, move_to=to))

    def card(self, balance: str) -> Any:
        """A gift card holding `balance`; its key."""
        return self.insert("gift_cards", balance=Decimal(balance))

    def balance(self, card: Any) -> Decimal:
        return Decimal(self.row("gift_cards", card)["balance"])

    def entries(self) -> list[dict[str, Any]]:
        """Every ledger entry, oldest first."""
        with self.engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT * FROM adminium.ledger_entries ORDER BY id"))
            return [dict(r) for r in rows.mappings()]

    def posting(self, key: Any) -> dict[str, Any] | None:
        """An order's posting record."""
        with self.engine.connect() as conn:
            found = conn.execute(
                sa.text("SELECT * FROM adminium.postings WHERE row_key = :k"), {"k": str(key)}
            )
            row = found.mappings().first()
        return dict(row) if row is not None else None

    def set(self, **values: Any) -> None:
        """Change the settings row."""
        with self.engine.begin() as conn:
            conn.execute(sa.update(self.store.table("settings")).values(values))


def till_of(shop: Shop) -> Till:
    """The shop built from TILL, as a Till."""
    return Till(shop.store)
