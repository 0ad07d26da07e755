"""The example apps' tables and people the unit tests judge rows of, without a database."""

from __future__ import annotations

from typing import Any

from core.basics.actors import Actor
from core.manifest.model import load_app
from tests.core.manifest_cases import example

TAKEAWAY = load_app(example("takeaway"))
ORDERS = TAKEAWAY.tables["orders"]
SETTINGS = TAKEAWAY.tables["settings"]
TICKETS = load_app(example("tickets")).tables["tickets"]
STAFF = Actor.person("ana@example.com", {"staff"})
MANAGER = Actor.person("max@example.com", {"manager"})
LOCK_WHEN = {"column": "status", "values": ["cancelled", "picked_up"]}


def order(status: str, **values: Any) -> dict[str, Any]:
    return {"id": 42, "status": status, "note": None, "cancel_code": None, **values}
