"""The write pipeline tests' helpers: a small app on a fresh database, and row helpers.

The fixtures over them (`make_venue`, `venue`) are in conftest.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from core.manifest.model import App, load_app
from core.samples.files import SampleFile, load_sample
from core.store.install import install_app
from core.store.store import Store, make_engine
from core.time.clock import venue_zone
from tests.conftest import ROOT

LONDON = "Europe/London"


def opening_hours_table() -> dict[str, Any]:
    """A manifest's `opening_hours` table (a row a weekday: open or not, opens, closes), fresh."""
    return {
        "key": "id",
        "columns": [
            {"ref": "id", "type": "serial"},
            {
                "ref": "weekday",
                "type": "enum",
                "values": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
            },
            {"ref": "open", "type": "boolean", "default": True},
            {"ref": "opens", "type": "text"},
            {"ref": "closes", "type": "text"},
        ],
    }


# Hand-written, not built from examples/: one app that carries every rule the pipeline
# tests judge, most of which no example has (an undo and a manager-only move from
# `confirmed`, a guest's `returned` window between `sale_from` and the event's doors, a
# new stay's create.requires, late rules in modes refuse and refuse-everyone, a lock).
MANIFEST: dict[str, Any] = {
    "name": "venue",
    "roles": ["manager", "staff"],
    "outbox": {"settings": {"table": "settings"}},
    "tables": {
        "settings": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "door_on", "type": "boolean", "default": True},
                {"ref": "offer_hours", "type": "integer", "nullable": True},
                {"ref": "cancel_hours", "type": "integer", "nullable": True},
                {"ref": "arrive_from", "type": "text", "nullable": True},
            ],
        },
        "opening_hours": opening_hours_table(),
        "events": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "doors_at", "type": "timestamptz", "nullable": True},
            ],
        },
        "orders": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {
                    "ref": "status",
                    "type": "enum",
                    "values": ["placed", "confirmed", "ready", "cancelled", "refunded"],
                },
                {"ref": "pickup_at", "type": "timestamptz"},
                {"ref": "channel", "type": "enum", "values": ["web", "phone"], "default": "web"},
                {"ref": "note", "type": "text", "maxLength": 40, "nullable": True},
                {"ref": "cancel_code", "type": "text", "nullable": True},
                {
                    "ref": "cancelled_at",
                    "type": "timestamptz",
                    "nullable": True,
                    "rules": {"stamp": {"on": {"column": "status", "values": ["cancelled"]}}},
                },
            ],
            "states": {
                "column": "status",
                "initial": "placed",
                "moves": {
                    "placed": ["confirmed", "cancelled"],
                    "confirmed": [
                        "ready",
                        "cancelled",
                        {"to": "placed", "undo": True},
                        {"to": "refunded", "roles": ["manager"]},
                    ],
                },
                "timed": [
                    {
                        "from": "placed",
                        "to": "cancelled",
                        "at": {
                            "column": "pickup_at",
                            "time": {
                                "hours": {
                                    "table": "opening_hours",
                                    "weekday": "weekday",
                                    "open": "open",
                                    "opens": "opens",
                                    "closes": "closes",
                                },
                                "edge": "closes",
                            },
                        },
                        "set": {"cancel_code": "closed"},
                    }
                ],
            },
            "lock": [{"when": {"column": "status", "values": ["cancelled"]}, "columns": ["*"]}],
        },
        "tickets": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "event_id", "type": "integer", "references": "events"},
                {
                    "ref": "status",
                    "type": "enum",
                    "values": ["valid", "offered", "checked_in", "returned"],
                },
                {"ref": "valid_to", "type": "timestamptz", "nullable": True},
                {"ref": "sale_from", "type": "timestamptz", "nullable": True},
                {"ref": "pending_email", "type": "text", "maxLength": 254, "nullable": True},
                {
                    "ref": "link_token",
                    "type": "text",
                    "maxLength": 16,
                    "nullable": True,
                    "rules": {
                        "code": {
                            "length": 16,
                            "renew": {"on": {"column": "pending_email", "changed": True}},
                        }
                    },
                },
                {
                    "ref": "offer_until",
                    "type": "timestamptz",
                    "nullable": True,
                    "rules": {
                        "stamp": {
                            "set": {
                                "addMinutes": {
                                    "hours": {"table": "settings", "column": "offer_hours"}
                                }
                            },
                            "on": {"column": "status", "values": ["offered"]},
                        }
                    },
                },
            ],
            "states": {
                "column": "status",
                "initial": "valid",
                "moves": {
                    "valid": [
                        "offered",
                        {
                            "to": "checked_in",
                            "requires": {
                                "time": {
                                    "after": {
                                        "via": "event_id",
                                        "column": "doors_at",
                                        "minus": {"minutes": 30},
                                    },
                                    "before": {"column": "valid_to"},
                                },
                                "setting": [{"table": "settings", "column": "door_on", "eq": True}],
                            },
                        },
                        {
                            "to": "returned",
                            "roles": ["public"],
                            "requires": {
                                "time": {
                                    "after": {"column": "sale_from", "plus": {"hours": 1}},
                                    "before": {"via": "event_id", "column": "doors_at"},
                                }
                            },
                        },
                    ],
                    "offered": ["valid", "checked_in"],
                },
                "timed": [
                    {
                        "from": "offered",
                        "to": "valid",
                        "at": {"column": "offer_until"},
                        "set": {"pending_email": None},
                    }
                ],
            },
        },
        "stays": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {
                    "ref": "status",
                    "type": "enum",
                    "values": ["booked", "cancelled", "withdrawn", "dropped", "arrived"],
                },
                {"ref": "arrive", "type": "date", "nullable": True},
                {"ref": "late_cancel", "type": "boolean", "default": False},
            ],
            "states": {
                "column": "status",
                "initial": "booked",
                "create": {
                    "requires": {
                        "time": {
                            "before": {
                                "column": "arrive",
                                "time": {"table": "settings", "column": "arrive_from"},
                                "plus": {"days": 1},
                            }
                        }
                    }
                },
                "moves": {
                    "booked": [
                        "cancelled",
                        "arrived",
                        "dropped",
                        {"to": "withdrawn", "roles": ["public", "staff"]},
                    ]
                },
                "late": [
                    {
                        "to": "cancelled",
                        "from": ["booked"],
                        "moment": {
                            "column": "arrive",
                            "time": {"table": "settings", "column": "arrive_from"},
                        },
                        "within": {"hours": {"table": "settings", "column": "cancel_hours"}},
                        "mode": "flag",
                        "flag": "late_cancel",
                    },
                    {
                        "to": "withdrawn",
                        "moment": {"column": "arrive", "time": "15:00"},
                        "within": {"hours": 24},
                        "mode": "refuse",
                    },
                    {
                        "to": "dropped",
                        "moment": {"column": "arrive", "time": "15:00"},
                        "within": {"days": 1},
                        "mode": "refuse",
                        "refuse": "everyone",
                    },
                ],
            },
        },
    },
}

SETTINGS: dict[str, Any] = {
    "door_on": True,
    "offer_hours": 24,
    "cancel_hours": 48,
    "arrive_from": "15:00",
}

HOURS = [
    (day, "11:00", "21:00", day != "mon")
    for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
]


def at(text: str) -> datetime:
    """An instant written in UTC, `2026-03-27 21:00`."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


class Venue:
    """The test app installed on a fresh database, with a few helpers to seed and read."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.engine = store.engine

    def insert(self, table: str, **values: Any) -> Any:
        """Seed a row straight into the database (not through the pipeline); its key."""
        t = self.store.table(table)
        with self.engine.begin() as conn:
            return conn.execute(sa.insert(t).values(values).returning(t.c.id)).scalar_one()

    def row(self, table: str, key: Any) -> dict[str, Any]:
        """A row as the database holds it."""
        with self.engine.connect() as conn:
            found = self.store.read_row(conn, table, key)
        assert found is not None
        return found

    def audit(self) -> list[dict[str, Any]]:
        """Every audit entry, oldest first."""
        with self.engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT * FROM adminium.audit ORDER BY id")).mappings()
            return [dict(r) for r in rows]

    @contextmanager
    def unchanged(self, table: str, key: Any) -> Iterator[None]:
        """Assert the block leaves the row and the audit exactly as they were."""
        row, audit = self.row(table, key), self.audit()
        yield
        assert self.row(table, key) == row
        assert self.audit() == audit


def build_venue(url: str, manifest: dict[str, Any] | None = None, zone: str = LONDON) -> Venue:
    """Install the app on the database at `url` and seed its settings and opening hours."""
    app: App = load_app(manifest or MANIFEST)
    engine = make_engine(url)
    install_app(engine, app)
    venue = Venue(Store(engine, app, venue_zone(zone), connection="test"))
    if "settings" in app.tables:
        venue.insert("settings", **SETTINGS)
    if "opening_hours" in app.tables:
        for day, opens, closes, is_open in HOURS:
            venue.insert("opening_hours", weekday=day, opens=opens, closes=closes, open=is_open)
    return venue


@contextmanager
def example_stores(url: str) -> Iterator[Callable[[str], Store]]:
    """A factory: examples/NAME.json installed on the database at `url` (schema NAME), its
    store in Europe/London on connection "test"; the engine let go of afterwards."""
    engine = make_engine(url)

    def make(name: str) -> Store:
        manifest = json.loads((ROOT / "examples" / f"{name}.json").read_text())
        app = load_app({**manifest, "schema": name})
        install_app(engine, app)
        return Store(engine, app, ZoneInfo(LONDON), connection="test")

    try:
        yield make
    finally:
        engine.dispose()


def example_sample(name: str) -> SampleFile:
    """examples/NAME.sample.json, loaded."""
    return load_sample(ROOT / "examples" / f"{name}.sample.json")
