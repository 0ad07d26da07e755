"""The preview tests' venue: a diner (closing hours, an offer window read from settings, a
no-show with an `or` fallback, a reminder whose lead is a setting) beside examples/tickets.json
(till tickets held on gift cards for settings.till_hold_minutes), on one connection of a
fresh control plane, in Europe/London."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from core.store.store import Store, make_engine
from services.apps import add_app, app_store
from services.connections import add_connection
from services.storage import engine_for, open_session, upgrade_control_plane
from tests.conftest import ROOT
from tests.integration.pipeline_fixtures import opening_hours_table

HOURS_REF = {
    "table": "opening_hours",
    "weekday": "weekday",
    "open": "open",
    "opens": "opens",
    "closes": "closes",
}

DINER: dict[str, Any] = {
    "name": "diner",
    "schema": "diner",
    "roles": ["staff"],
    "outbox": {
        "settings": {"table": "settings"},
        "producers": [
            {
                "kind": "reminder",
                "before": {
                    "table": "orders",
                    "at": "pickup_at",
                    "lead": {"table": "settings", "column": "reminder_hours"},
                },
                "to": "email",
                "subject": "Your order is nearly ready",
                "body": "Pickup at {{ moment[11:16] }}.",
            }
        ],
    },
    "tables": {
        "settings": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "offer_minutes", "type": "integer", "default": 60},
                {"ref": "grace_minutes", "type": "integer", "nullable": True},
                {"ref": "reminder_hours", "type": "integer", "default": 2},
            ],
        },
        "opening_hours": opening_hours_table(),
        "orders": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "email", "type": "text", "nullable": True},
                {"ref": "pickup_at", "type": "timestamptz"},
                {"ref": "status", "type": "enum", "values": ["placed", "collected", "cancelled"]},
            ],
            "states": {
                "column": "status",
                "initial": "placed",
                "moves": {"placed": ["collected", "cancelled"]},
                "timed": [
                    {
                        "from": "placed",
                        "to": "cancelled",
                        "at": {
                            "column": "pickup_at",
                            "time": {"hours": HOURS_REF, "edge": "closes"},
                        },
                    }
                ],
            },
        },
        "offers": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "made_at", "type": "timestamptz"},
                {"ref": "status", "type": "enum", "values": ["open", "taken", "expired"]},
            ],
            "states": {
                "column": "status",
                "initial": "open",
                "moves": {"open": ["taken", "expired"]},
                "timed": [
                    {
                        "from": "open",
                        "to": "expired",
                        "at": {
                            "column": "made_at",
                            "plus": {"minutes": {"table": "settings", "column": "offer_minutes"}},
                        },
                    }
                ],
            },
        },
        "bookings": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "arrive_by", "type": "timestamptz", "nullable": True},
                {"ref": "starts_at", "type": "timestamptz"},
                {"ref": "status", "type": "enum", "values": ["booked", "seated", "no_show"]},
            ],
            "states": {
                "column": "status",
                "initial": "booked",
                "moves": {"booked": ["seated", "no_show"]},
                "timed": [
                    {
                        "from": "booked",
                        "to": "no_show",
                        "at": {
                            "column": "arrive_by",
                            "or": [
                                {
                                    "column": "starts_at",
                                    "plus": {
                                        "minutes": {"table": "settings", "column": "grace_minutes"}
                                    },
                                }
                            ],
                        },
                    }
                ],
            },
        },
    },
}

HOURS = [(day, "11:00", "23:00") for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")]


def tickets_manifest() -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads((ROOT / "examples" / "tickets.json").read_text())
    return manifest


@dataclass
class Diner:
    """The control plane's URL, the connection's name, and the venue database's engine."""

    control_url: str
    venue_url: str
    engine: sa.Engine

    connection: str = "diner"

    def store(self, name: str = "diner") -> Store:
        with open_session(self.control_url) as session:
            from services.apps import lookup_app

            app = lookup_app(session, self.connection, name)
            assert app is not None
            return app_store(app)

    def insert(self, table: str, schema: str = "diner", **values: Any) -> Any:
        columns = ", ".join(values)
        params = ", ".join(f":{name}" for name in values)
        made = f"({columns}) VALUES ({params})" if values else "DEFAULT VALUES"
        with self.engine.begin() as conn:
            return conn.execute(
                sa.text(f"INSERT INTO {schema}.{table} {made} RETURNING id"), values
            ).scalar_one()

    def dispose(self) -> None:
        """Every engine on the two databases let go of (before they are dropped)."""
        self.engine.dispose()
        engine_for(self.control_url).dispose()
        engine_for(self.venue_url).dispose()

    def sql(self, statement: str, **params: Any) -> None:
        with self.engine.begin() as conn:
            conn.execute(sa.text(statement), params)

    def rows(self, statement: str) -> list[tuple[Any, ...]]:
        with self.engine.connect() as conn:
            return [tuple(r) for r in conn.execute(sa.text(statement))]


def build_diner(control_url: str, venue_url: str) -> Diner:
    """Both apps saved (their tables made) on connection `diner`; the settings rows and
    every day's hours 11:00-23:00."""
    upgrade_control_plane(control_url)
    with open_session(control_url) as session:
        add_connection(session, "diner", venue_url, "Europe/London")
        session.commit()
        add_app(session, "diner", DINER, create_tables=True)
        add_app(session, "diner", tickets_manifest(), create_tables=True)
    engine = make_engine(venue_url)
    diner = Diner(control_url, venue_url, engine)
    diner.insert("settings")
    diner.insert("settings", schema="tickets")
    for day, opens, closes in HOURS:
        diner.insert("opening_hours", weekday=day, opens=opens, closes=closes)
    return diner
