"""The API tests' helpers: a control plane, the venue app on its connection, users, a clock.

The fixtures over them (`shared_site`, `site`, `fresh_site`) are in conftest.py.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg
import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient
from psycopg import sql

from services.apps import add_app, app_store, lookup_app
from services.connections import add_connection
from services.models import db
from services.storage import engine_for, upgrade_control_plane
from services.users import add_user
from tests.conftest import database_url_for
from tests.integration.pipeline_fixtures import HOURS, MANIFEST, SETTINGS, at
from web import create_app
from web.live import stop_hub


def api_manifest() -> dict[str, Any]:
    """The pipeline tests' venue, with public fields, a guest code on stays, guest moves."""
    manifest = copy.deepcopy(MANIFEST)
    tables = manifest["tables"]
    for column in tables["tickets"]["columns"]:
        if column["ref"] in ("status", "valid_to", "sale_from"):
            column["public"] = True
    tables["tickets"]["states"]["moves"]["offered"].append(
        {
            "to": "returned",
            "roles": ["public"],
            "requires": {"time": {"before": {"column": "valid_to"}}},
        }
    )
    stays = tables["stays"]
    for column in stays["columns"]:
        if column["ref"] in ("status", "arrive"):
            column["public"] = True
    stays["columns"].append(
        {
            "ref": "guest_code",
            "type": "text",
            "maxLength": 16,
            "nullable": True,
            "rules": {"code": {"length": 16}},
        }
    )
    return manifest


OTHER: dict[str, Any] = {
    "name": "other",
    "schema": "other",
    "roles": ["clerk"],
    "tables": {
        "notes": {"key": "id", "columns": [{"ref": "id", "type": "serial"}]},
    },
}


@dataclass
class Clock:
    """The web's clock in a test: whatever instant the test sets."""

    now: datetime = field(default_factory=lambda: at("2026-07-10 09:00"))

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Site:
    """The web app with the venue installed: a client, tokens by user, and row helpers."""

    app: Flask
    client: FlaskClient
    clock: Clock
    tokens: dict[str, str]
    venue_url: str

    def headers(self, user: str) -> dict[str, str]:
        """The Authorization header of one of the test users."""
        return {"Authorization": f"Bearer {self.tokens[user]}"}

    def store(self, connection: str = "venue", name: str = "venue") -> Any:
        """The pipeline's store of an app."""
        with self.app.app_context():
            found = lookup_app(db.session, connection, name)
            assert found is not None
            return app_store(found)

    def insert(self, table: str, **values: Any) -> Any:
        """Seed a row straight into the venue's database; its key."""
        store = self.store()
        t = store.table(table)
        with store.engine.begin() as conn:
            return conn.execute(sa.insert(t).values(values).returning(t.c.id)).scalar_one()

    def row(self, table: str, key: Any) -> dict[str, Any]:
        """A row as the database holds it."""
        store = self.store()
        with store.engine.connect() as conn:
            found = store.read_row(conn, table, key)
        assert found is not None
        return found

    def audit(self) -> list[dict[str, Any]]:
        """Every audit entry of the venue's database, oldest first."""
        with self.store().engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT * FROM adminium.audit ORDER BY id")).mappings()
            return [dict(r) for r in rows]


def rows_path(table: str, key: Any = None, *, app: str = "venue") -> str:
    """The REST path of a table's rows, or of one row."""
    base = f"/api/apps/venue/{app}/tables/{table}/rows"
    return base if key is None else f"{base}/{key}"


def build_site(control_url: str, venue_url: str, redis_url: str) -> Site:
    """The web app on a fresh control plane, the venue app installed and seeded, four users."""
    upgrade_control_plane(control_url)
    clock = Clock()
    app = create_app(
        {"DATABASE_URL": control_url, "REDIS_URL": redis_url, "CLOCK": clock, "TESTING": True}
    )
    tokens: dict[str, str] = {}
    with app.app_context():
        add_connection(db.session, "venue", venue_url, "Europe/London")
        add_app(db.session, "venue", api_manifest(), create_tables=True)
        add_app(db.session, "venue", OTHER, create_tables=True)
        for email, role, app_ref in (
            ("manager@venue.test", "manager", "venue/venue"),
            ("staff@venue.test", "staff", "venue/venue"),
            ("clerk@other.test", "clerk", "venue/other"),
            ("admin@venue.test", "admin", None),
        ):
            made = add_user(db.session, email, role, app_ref)
            assert made.token is not None
            tokens[email.split("@")[0]] = made.token
    site = Site(app, app.test_client(), clock, tokens, venue_url)
    site.insert("settings", **SETTINGS)
    for day, opens, closes, is_open in HOURS:
        site.insert("opening_hours", weekday=day, opens=opens, closes=closes, open=is_open)
    return site


@contextmanager
def installed_site(server_url: str, redis_url: str) -> Iterator[Site]:
    """A site on two new databases of the test server, dropped afterwards."""
    names = [f"adm_test_{uuid.uuid4().hex[:12]}" for _ in range(2)]
    with psycopg.connect(server_url, autocommit=True) as conn:
        for name in names:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    control_url, venue_url = (database_url_for(server_url, name) for name in names)
    try:
        built = build_site(control_url, venue_url, redis_url)
        yield built
        stop_hub(built.app)  # its clock watch would read databases about to be dropped
        with built.app.app_context():
            db.engine.dispose()
    finally:
        for url in (control_url, venue_url):
            engine_for(url).dispose()
        with psycopg.connect(server_url, autocommit=True) as conn:
            for name in names:
                conn.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )
