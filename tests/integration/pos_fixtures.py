"""A venue over its POS's own database: tables made by hand the way a POS vendor makes
them (a uuid key with its own default, a varchar state with a CHECK, a wall-time pickup,
numeric(10,2), a NOT NULL column with no default, lines keyed by a uuid the POS makes),
and the app added over them without `--create-tables`, as a site with a signed-in user.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from flask import Flask
from flask.testing import FlaskClient
from psycopg import sql
from psycopg.rows import dict_row

from services import sweeps
from services.apps import add_app, app_store, install_adminium_tables, lookup_app
from services.connections import add_connection
from services.events import NO_PUBLISHER
from services.models import db
from services.storage import engine_for, upgrade_control_plane
from services.users import add_user
from tests.conftest import database_url_for
from tests.integration.api_fixtures import Clock
from tests.integration.screens_fixtures import PASSWORD, sign_in
from web import create_app
from web.live import stop_hub

POS_TABLES = """
CREATE TABLE public.orders (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    status varchar(20) NOT NULL DEFAULT 'placed'
        CHECK (status IN ('placed', 'ready', 'collected', 'cancelled')),
    pickup_at timestamp without time zone,
    total numeric(10,2) NOT NULL DEFAULT 0,
    terminal_id text NOT NULL,
    cancel_code varchar(20),
    note text,
    cancelled_at timestamp without time zone,
    CONSTRAINT cancelled_without_note CHECK (status <> 'cancelled' OR note IS NULL)
);
COMMENT ON CONSTRAINT cancelled_without_note ON public.orders
    IS 'an order with a note is kept for the manager';
CREATE TABLE public.order_lines (
    id uuid PRIMARY KEY,
    order_id uuid NOT NULL REFERENCES public.orders (id),
    item text NOT NULL,
    status varchar(10) NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'void'))
);
"""
"""The POS's tables, as its vendor made them: no Adminium in them."""

POS: dict[str, Any] = {
    "name": "pos",
    "roles": ["manager"],
    "tables": {
        "orders": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "uuid"},
                {
                    "ref": "status",
                    "type": "enum",
                    "values": ["placed", "ready", "collected", "cancelled"],
                },
                {"ref": "pickup_at", "type": "timestamp", "zone": "venue", "nullable": True},
                {"ref": "total", "type": "numeric", "precision": 10, "scale": 2, "default": 0},
                {"ref": "terminal_id", "type": "text", "default": "WEB"},
                {"ref": "cancel_code", "type": "text", "maxLength": 20, "nullable": True},
                {"ref": "note", "type": "text", "nullable": True},
                {
                    "ref": "cancelled_at",
                    "type": "timestamp",
                    "zone": "venue",
                    "nullable": True,
                    "rules": {"stamp": {"on": {"column": "status", "values": ["cancelled"]}}},
                },
            ],
            "states": {
                "column": "status",
                "initial": "placed",
                "moves": {
                    "placed": [
                        "ready",
                        {
                            "to": "cancelled",
                            "effects": [{"table": "order_lines", "via": "order_id", "to": "void"}],
                        },
                    ],
                    "ready": ["collected"],
                },
                "timed": [
                    {
                        "from": "placed",
                        "to": "cancelled",
                        "at": {"column": "pickup_at", "plus": {"minutes": 30}},
                        "set": {"cancel_code": "not_collected"},
                    }
                ],
            },
            "board": {"time": "pickup_at"},
        },
        "order_lines": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "uuid"},
                {"ref": "order_id", "type": "uuid", "references": "orders"},
                {"ref": "item", "type": "text"},
                {"ref": "status", "type": "enum", "values": ["open", "void"]},
            ],
            "states": {"column": "status", "initial": "open", "moves": {"open": ["void"]}},
        },
    },
}
"""The app over the POS's tables: every type as the database declares it."""


def pos_manifest() -> dict[str, Any]:
    """A fresh copy of the POS app's manifest."""
    return copy.deepcopy(POS)


@dataclass
class PosSite:
    """The web over the POS's database: the manager's client and token, row helpers."""

    app: Flask
    clock: Clock
    venue_url: str
    token: str
    client: FlaskClient

    @property
    def headers(self) -> dict[str, str]:
        """The manager's Authorization header."""
        return {"Authorization": f"Bearer {self.token}"}

    def store(self) -> Any:
        """The POS app's store."""
        with self.app.app_context():
            found = lookup_app(db.session, "pos", "pos")
            assert found is not None
            return app_store(found)

    def sql(self, statement: str, **params: Any) -> list[dict[str, Any]]:
        """Plain SQL on the POS's database (`%(name)s` parameters), as the POS itself writes;
        the rows it returns."""
        with psycopg.connect(self.venue_url, autocommit=True, row_factory=dict_row) as conn:
            found = conn.execute(statement, params)  # type: ignore[arg-type]
            return list(found.fetchall()) if found.description else []

    def order(self, pickup_at: str | None, **values: Any) -> str:
        """An order the POS writes itself (its pickup a wall time, as it stores it); its key."""
        columns = {"pickup_at": pickup_at, "terminal_id": "T1", **values}
        names = ", ".join(columns)
        marks = ", ".join(f"%({name})s" for name in columns)
        [row] = self.sql(
            f"INSERT INTO public.orders ({names}) VALUES ({marks}) RETURNING id::text AS id",
            **columns,
        )
        return str(row["id"])

    def line(self, order: str, item: str) -> str:
        """A line of an order, keyed by a uuid the POS makes; its key."""
        key = str(uuid.uuid4())
        self.sql(
            "INSERT INTO public.order_lines (id, order_id, item) VALUES (%(k)s, %(o)s, %(i)s)",
            k=key,
            o=order,
            i=item,
        )
        return key

    def row(self, table: str, key: str) -> dict[str, Any]:
        """A row as the POS's database holds it (times as stored: wall times)."""
        [found] = self.sql(f"SELECT * FROM public.{table} WHERE id = %(k)s::uuid", k=key)
        return found

    def sweep(self, now: datetime) -> Any:
        """The minute sweep of the POS's connection at `now`."""
        with self.app.app_context():
            return sweeps.sweep(db.session, "pos", now=now, publisher=NO_PUBLISHER)


def _databases(server_url: str, count: int) -> list[str]:
    names = [f"adm_test_{uuid.uuid4().hex[:12]}" for _ in range(count)]
    with psycopg.connect(server_url, autocommit=True) as conn:
        for name in names:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return names


def _drop(server_url: str, names: list[str]) -> None:
    with psycopg.connect(server_url, autocommit=True) as conn:
        for name in names:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@contextmanager
def pos_site(server_url: str, redis_url: str) -> Iterator[PosSite]:
    """The POS's tables made by hand on a new database, the app added over them (no
    `--create-tables`; Adminium's own schema installed as a deploy installs it), a manager
    signed in; both databases dropped afterwards."""
    names = _databases(server_url, 2)
    control_url, venue_url = (database_url_for(server_url, name) for name in names)
    try:
        with psycopg.connect(venue_url, autocommit=True) as conn:
            conn.execute(POS_TABLES)  # type: ignore[arg-type]
        upgrade_control_plane(control_url)
        clock = Clock()
        app = create_app(
            {"DATABASE_URL": control_url, "REDIS_URL": redis_url, "CLOCK": clock, "TESTING": True}
        )
        with app.app_context():
            add_connection(db.session, "pos", venue_url, "Europe/London")
            add_app(db.session, "pos", pos_manifest())
            install_adminium_tables(db.session)
            made = add_user(db.session, "manager@pos.test", "manager", "pos/pos", password=PASSWORD)
            assert made.token is not None
        client = app.test_client()
        sign_in(client, "manager@pos.test")
        yield PosSite(app, clock, venue_url, made.token, client)
        stop_hub(app)
        with app.app_context():
            db.engine.dispose()
    finally:
        for url in (control_url, venue_url):
            engine_for(url).dispose()
        _drop(server_url, names)
