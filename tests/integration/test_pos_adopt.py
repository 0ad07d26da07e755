"""Adopting a POS's own database, as a new user would: its tables made by hand (a uuid key,
a varchar state with a CHECK, numeric(10,2), a NOT NULL column with no default, a wall-time
pickup, a trigger keeping `updated_at`), a manifest drafted from them, a timed rule added to
the draft, and a real sweep moving a due row; a create through the API, refused while the
NOT NULL column has no default, made once the manifest gives it one."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner, Result
from psycopg.rows import dict_row

from adminium.cli import main
from services.models import db
from services.users import add_user
from tests.integration.api_fixtures import Clock
from web import create_app
from web.live import stop_hub

pytestmark = pytest.mark.integration

POS = """
CREATE TABLE public.orders (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    status varchar(20) NOT NULL DEFAULT 'placed'
        CHECK (status IN ('placed', 'ready', 'collected', 'cancelled')),
    pickup_at timestamp without time zone,
    total numeric(10,2) NOT NULL DEFAULT 0,
    terminal_id text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE FUNCTION public.touch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.updated_at := clock_timestamp(); RETURN NEW; END $$;
CREATE TRIGGER orders_touch BEFORE UPDATE ON public.orders
    FOR EACH ROW EXECUTE FUNCTION public.touch();
"""
"""The POS's orders as its vendor made them: nothing of Adminium's in them."""

ROWS = "/api/apps/pos/pos/tables/orders/rows"


def test_a_pos_database_drafted_given_a_timed_rule_moves_a_due_row(
    make_database: Callable[[], str], tmp_path: Path
) -> None:
    venue, control = make_database(), make_database()
    with psycopg.connect(venue, autocommit=True) as conn:
        conn.execute(POS)  # type: ignore[arg-type]

    def run(*args: str) -> Result:
        return CliRunner().invoke(main, list(args), env={"DATABASE_URL": control, "REDIS_URL": ""})

    def sql(statement: str, **params: Any) -> list[dict[str, Any]]:
        with psycopg.connect(venue, autocommit=True, row_factory=dict_row) as conn:
            found = conn.execute(statement, params)  # type: ignore[arg-type]
            return list(found.fetchall()) if found.description else []

    assert run("connection", "add", "pos", "--url", venue, "--zone", "Europe/London").exit_code == 0
    draft_file = tmp_path / "pos.json"
    drafted = run("app", "draft", "pos", "-o", str(draft_file))
    assert drafted.exit_code == 0, drafted.output
    draft = json.loads(draft_file.read_text())
    assert draft == {
        "name": "pos",
        "tables": {
            "orders": {
                "key": "id",
                "columns": [
                    {"ref": "id", "type": "uuid"},
                    {"ref": "status", "type": "enum",
                     "values": ["placed", "ready", "collected", "cancelled"]},
                    {"ref": "pickup_at", "type": "timestamp", "nullable": True, "zone": "venue"},
                    {"ref": "total", "type": "numeric", "precision": 10, "scale": 2, "default": 0},
                    {"ref": "terminal_id", "type": "text"},
                ],
                "states": {"column": "status", "initial": "placed", "moves": {}},
            }
        },
    }  # fmt: skip
    assert drafted.stderr.splitlines()[2:] == [
        "  orders.updated_at: left out; the database fills it (now()) and a manifest column is "
        "sent on every create unless it has a literal default",
        "  orders.states: its states are placed, ready, collected, cancelled (initial placed); "
        "write its moves (which state may follow which) and its timed rules (states.timed: "
        "which state the clock moves, to which, at what moment)",
    ]
    # What the person writes: the moves, and one timed rule.
    draft["roles"] = ["manager"]
    draft["tables"]["orders"]["states"]["moves"] = {
        "placed": ["ready", "cancelled"],
        "ready": ["collected"],
    }
    draft["tables"]["orders"]["states"]["timed"] = [
        {"from": "placed", "to": "cancelled", "at": {"column": "pickup_at", "plus": {"hours": 1}}}
    ]
    draft_file.write_text(json.dumps(draft))
    added = run("app", "add", "pos", str(draft_file))
    assert added.exit_code == 0, added.output
    # Saved; the index the clock wants on the venue's table is its DBA's to make.
    assert added.output.splitlines() == [
        "app pos saved on connection pos: orders",
        "still: tables disagree with the manifest: 1",
        "  orders: the manifest reads it by (status, pickup_at) each minute (index "
        "ix_orders_status_pickup_at), the database has no such index; fix: CREATE INDEX "
        'CONCURRENTLY IF NOT EXISTS "ix_orders_status_pickup_at" ON "public"."orders" '
        '("status", "pickup_at");',
    ]

    # The POS writes its orders; 10 Jul 2026 London is BST (UTC+1): a pickup at 12:30 on the
    # wall is 11:30 UTC, due an hour on at 12:30 UTC. The 13:00 one is due at 13:00 UTC.
    [due] = sql(
        "INSERT INTO orders (pickup_at, terminal_id) VALUES ('2026-07-10 12:30', 'T1')"
        " RETURNING id::text AS id, updated_at"
    )
    [later] = sql(
        "INSERT INTO orders (pickup_at, terminal_id) VALUES ('2026-07-10 13:00', 'T1')"
        " RETURNING id::text AS id"
    )
    early = run("sweep", "pos", "--now", "2026-07-10T12:29:00+00:00")
    assert early.exit_code == 0, early.output
    assert sql("SELECT status FROM orders WHERE status <> 'placed'") == []
    swept = run("sweep", "pos", "--now", "2026-07-10T12:30:00+00:00")
    assert swept.exit_code == 0, swept.output
    rows = {r["id"]: r for r in sql("SELECT id::text AS id, status, updated_at FROM orders")}
    assert rows[due["id"]]["status"] == "cancelled"
    assert rows[later["id"]]["status"] == "placed"
    assert rows[due["id"]]["updated_at"] > due["updated_at"]  # the POS's trigger ran on it
    assert sql("SELECT row_key, move_to FROM adminium.audit") == [
        {"row_key": due["id"], "move_to": "cancelled"}
    ]

    # Through the API: terminal_id is NOT NULL with no default, so a create must send it.
    clock = Clock()
    app = create_app({"DATABASE_URL": control, "REDIS_URL": "", "CLOCK": clock, "TESTING": True})
    try:
        with app.app_context():
            made = add_user(db.session, "manager@pos.test", "manager", "pos/pos", password="x" * 12)
        headers = {"Authorization": f"Bearer {made.token}"}
        client = app.test_client()
        create = {"values": {"pickup_at": "2026-07-11T12:30"}}
        refused = client.post(ROWS, json=create, headers=headers)
        assert refused.status_code == 422, refused.text
        assert refused.get_json()["error"]["details"]["column"] == "terminal_id"
        # The manifest gives it a default: sent on insert when the writer leaves it out.
        draft["tables"]["orders"]["columns"][4]["default"] = "WEB"
        draft_file.write_text(json.dumps(draft))
        replaced = run("app", "add", "pos", str(draft_file), "--replace", "--yes")
        assert replaced.exit_code == 0, replaced.output
        answer = client.post(ROWS, json=create, headers=headers)
        assert answer.status_code == 201, answer.text
        [row] = sql(
            "SELECT terminal_id, status, pickup_at FROM orders WHERE id = %(k)s::uuid",
            k=answer.get_json()["key"],
        )
        assert row == {
            "terminal_id": "WEB",
            "status": "placed",
            "pickup_at": datetime(2026, 7, 11, 12, 30),
        }
    finally:
        stop_hub(app)
        with app.app_context():
            db.engine.dispose()


def test_app_add_names_a_not_null_column_the_manifest_leaves_out(
    make_database: Callable[[], str], tmp_path: Path
) -> None:
    venue, control = make_database(), make_database()
    with psycopg.connect(venue, autocommit=True) as conn:
        conn.execute(POS)  # type: ignore[arg-type]
    env = {"DATABASE_URL": control, "REDIS_URL": ""}
    assert (
        CliRunner().invoke(main, ["connection", "add", "pos", "--url", venue], env=env).exit_code
        == 0
    )
    manifest = {
        "name": "pos",
        "tables": {
            "orders": {
                "key": "id",
                "columns": [
                    {"ref": "id", "type": "uuid"},
                    {"ref": "status", "type": "enum", "values": ["placed", "cancelled"]},
                ],
                "states": {
                    "column": "status",
                    "initial": "placed",
                    "moves": {"placed": ["cancelled"]},
                },
            }
        },
    }
    path = tmp_path / "pos.json"
    path.write_text(json.dumps(manifest))
    refused = CliRunner().invoke(main, ["app", "add", "pos", str(path)], env=env)
    assert refused.exit_code == 1
    assert refused.stderr.splitlines()[1] == (
        "  orders.terminal_id: the manifest does not know this column, the database has it text "
        "NOT NULL with no default, so creates will be refused; fix: ALTER TABLE public.orders "
        "ALTER COLUMN terminal_id DROP NOT NULL; or add it to the manifest with a default, or "
        "give it one in the database"
    )
