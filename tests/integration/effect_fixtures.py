"""The effect and total tests' helpers: a kitchen whose orders, when cancelled, void their
lines and free their desk, and whose voided lines let their station go idle.

Hand-written, not examples/takeaway.json: the tests need a chain of two effects, an effect
by `via` alone, a state with no move to `void`, a move that waits for a setting, a count
beside a sum, and a guest's code, together.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from core.basics.actors import Actor
from core.writes.pipeline import WriteResult, change_row, create_row
from core.writes.request import WriteRequest
from tests.integration.sweep_fixtures import Shop

STAFF = Actor.person("staff@example.com", {"staff"})
NOW = datetime(2026, 7, 10, 12, tzinfo=UTC)
"""Fri 10 Jul 2026 13:00 BST; orders are due an hour before (DUE), so the clock cancels them."""
DUE = datetime(2026, 7, 10, 11, tzinfo=UTC)

VOID = {"table": "order_lines", "via": "order_id", "to": "void"}

KITCHEN: dict[str, Any] = {
    "name": "kitchen",
    "schema": "kitchen",
    "roles": ["staff"],
    "outbox": {"settings": {"table": "settings"}},
    "tables": {
        "settings": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "desks_free", "type": "boolean", "default": True},
            ],
        },
        "desks": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "status", "type": "enum", "values": ["free", "taken"]},
            ],
            "states": {
                "column": "status",
                "initial": "free",
                "moves": {
                    "free": ["taken"],
                    "taken": [
                        {
                            "to": "free",
                            "requires": {
                                "setting": [
                                    {"table": "settings", "column": "desks_free", "eq": True}
                                ]
                            },
                        }
                    ],
                },
            },
        },
        "stations": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "status", "type": "enum", "values": ["idle", "busy"]},
            ],
            "states": {
                "column": "status",
                "initial": "idle",
                "moves": {"idle": ["busy"], "busy": ["idle"]},
            },
        },
        "orders": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {
                    "ref": "status",
                    "type": "enum",
                    "values": ["placed", "cancelled", "done"],
                    "public": True,
                },
                {"ref": "due_at", "type": "timestamptz", "nullable": True},
                {"ref": "desk_id", "type": "integer", "references": "desks", "nullable": True},
                {"ref": "note", "type": "text", "nullable": True},
                {
                    "ref": "code",
                    "type": "text",
                    "maxLength": 16,
                    "nullable": True,
                    "rules": {"code": {"length": 16}},
                },
                {
                    "ref": "total",
                    "type": "numeric",
                    "public": True,
                    "rules": {
                        "total": {
                            "table": "order_lines",
                            "via": "order_id",
                            "sum": "amount",
                            "where": {"column": "status", "values": ["open", "served", "paid"]},
                        }
                    },
                },
                {
                    "ref": "lines",
                    "type": "integer",
                    "rules": {"total": {"table": "order_lines", "via": "order_id", "count": True}},
                },
            ],
            "states": {
                "column": "status",
                "initial": "placed",
                "moves": {
                    "placed": [
                        "done",
                        {
                            "to": "cancelled",
                            "roles": ["public", "staff"],
                            "effects": [VOID, {"via": "desk_id", "to": "free"}],
                        },
                    ]
                },
                "timed": [{"from": "placed", "to": "cancelled", "at": {"column": "due_at"}}],
            },
            "lock": [
                {"when": {"column": "status", "values": ["cancelled", "done"]}, "columns": ["*"]}
            ],
        },
        "order_lines": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "order_id", "type": "integer", "references": "orders"},
                {
                    "ref": "station_id",
                    "type": "integer",
                    "references": "stations",
                    "nullable": True,
                },
                {"ref": "amount", "type": "numeric", "default": 0},
                {"ref": "note", "type": "text", "nullable": True},
                {"ref": "status", "type": "enum", "values": ["open", "served", "paid", "void"]},
            ],
            "states": {
                "column": "status",
                "initial": "open",
                "moves": {
                    "open": [
                        "served",
                        {"to": "void", "effects": [{"via": "station_id", "to": "idle"}]},
                    ],
                    "served": ["paid", "void"],
                },
            },
        },
    },
}


class Kitchen(Shop):
    """The kitchen on a fresh database: orders with lines, desks and stations."""

    def order(self, due_at: datetime | None, **values: Any) -> Any:
        """A placed order due at `due_at`, seeded straight in; its key."""
        return self.insert("orders", status="placed", due_at=due_at, total=0, lines=0, **values)

    def line(self, order: Any, amount: Any = 5, status: str = "open", **values: Any) -> Any:
        """A line of an order, seeded straight in (no total written); its key."""
        return self.insert("order_lines", order_id=order, amount=amount, status=status, **values)

    def statuses(self, table: str) -> dict[Any, str]:
        """Each row's state, by key."""
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(self.store.table(table))).mappings()
            return {row["id"]: row["status"] for row in rows}

    def total(self, order: Any) -> tuple[Any, Any]:
        """An order's total and line count as stored."""
        row = self.row("orders", order)
        return row["total"], row["lines"]

    def add_line(self, order: Any, amount: Any, actor: Actor = STAFF) -> WriteResult:
        """A line made through the pipeline."""
        values = {"order_id": order, "amount": amount}
        return create_row(self.store, WriteRequest("order_lines", actor, NOW, values=values))

    def change(self, table: str, key: Any, actor: Actor = STAFF, **values: Any) -> WriteResult:
        """A change of a row's values through the pipeline."""
        return change_row(self.store, WriteRequest(table, actor, NOW, key=key, values=values))

    def move(self, table: str, key: Any, to: str, actor: Actor = STAFF) -> WriteResult:
        """A move through the pipeline."""
        return change_row(self.store, WriteRequest(table, actor, NOW, key=key, move_to=to))
