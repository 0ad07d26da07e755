"""The sweep tests' helpers: a small shop app whose orders lapse at `due_at`.

The fixtures over them (`make_shop`, `shop`) are in conftest.py.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa

from core.manifest.model import load_app
from core.store.install import install_app
from core.store.store import Store, make_engine
from core.sweep.report import SweepReport
from core.sweep.sweep import sweep_connection
from core.time.clock import venue_zone
from tests.integration.pipeline_fixtures import HOURS, Venue

# Hand-written, not examples/takeaway.json: the sweep tests need a timed move at a plain
# column (`due_at`) and a cancel that waits for a setting (`sweep_on`) they can turn off to
# get a row set aside; no example has either.
SHOP: dict[str, Any] = {
    "name": "shop",
    "tables": {
        "settings": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "sweep_on", "type": "boolean", "default": True},
            ],
        },
        "orders": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "status", "type": "enum", "values": ["placed", "cancelled", "done"]},
                {"ref": "due_at", "type": "timestamptz", "nullable": True},
                {"ref": "note", "type": "text", "nullable": True},
                {"ref": "cancel_code", "type": "text", "nullable": True},
            ],
            "states": {
                "column": "status",
                "initial": "placed",
                "moves": {
                    "placed": [
                        "done",
                        {
                            "to": "cancelled",
                            "requires": {
                                "setting": [{"table": "settings", "column": "sweep_on", "eq": True}]
                            },
                        },
                    ]
                },
                "timed": [
                    {
                        "from": "placed",
                        "to": "cancelled",
                        "at": {"column": "due_at"},
                        "set": {"cancel_code": "late"},
                    }
                ],
            },
        },
    },
}


def build_shop(url: str, manifest: dict[str, Any], zone: str = "Europe/London") -> Shop:
    """Install an app on the database at `url`; its settings row takes its defaults."""
    app = load_app(manifest)
    engine = make_engine(url)
    install_app(engine, app)
    shop = Shop(Store(engine, app, venue_zone(zone), connection="shop"))
    if "settings" in app.tables:
        shop.insert("settings")
    if "opening_hours" in app.tables:
        for day, opens, closes, is_open in HOURS:
            shop.insert("opening_hours", weekday=day, opens=opens, closes=closes, open=is_open)
    return shop


class Shop(Venue):
    """The shop on a fresh database: orders, audit counts, set-aside records, a sweep."""

    @property
    def url(self) -> str:
        """The database's libpq URL."""
        url = self.engine.url.set(drivername="postgresql")
        return url.render_as_string(hide_password=False)

    def order(self, due_at: datetime | None, **values: Any) -> Any:
        """A placed order due at `due_at`; its key."""
        return self.insert("orders", status="placed", due_at=due_at, **values)

    def status(self, key: Any) -> str:
        return str(self.row("orders", key)["status"])

    def audit_counts(self) -> dict[str, int]:
        """How many audit entries each order key has."""
        counts: dict[str, int] = {}
        for entry in self.audit():
            counts[entry["row_key"]] = counts.get(entry["row_key"], 0) + 1
        return counts

    def records(self) -> list[dict[str, Any]]:
        """The set-aside records."""
        with self.engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT * FROM adminium.set_aside ORDER BY row_key"))
            return [dict(r) for r in rows.mappings()]

    def sweeps(self) -> list[dict[str, Any]]:
        """The minute records, oldest first."""
        with self.engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT * FROM adminium.sweeps ORDER BY id"))
            return [dict(r) for r in rows.mappings()]

    def sql(self, statement: str, **params: Any) -> None:
        with self.engine.begin() as conn:
            conn.execute(sa.text(statement), params)

    def sweep(self, now: datetime, store: Store | None = None, **options: Any) -> SweepReport:
        """One sweep of the shop's connection at `now`."""
        return sweep_connection([store or self.store], connection="shop", now=now, **options)
