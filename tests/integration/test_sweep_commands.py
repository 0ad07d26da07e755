"""`adminium sweep`, `due` and `indexes` through click's CliRunner."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable

from click.testing import CliRunner

from adminium.cli import main
from services.apps import add_app, app_store
from services.connections import add_connection, get_connection
from services.storage import open_session, upgrade_control_plane
from tests.integration.sweep_fixtures import SHOP


def test_due_then_sweep_then_indexes(make_database: Callable[[], str]) -> None:
    control, venue = make_database(), make_database()
    upgrade_control_plane(control)
    name = f"c-{uuid.uuid4().hex[:8]}"
    with open_session(control) as session:
        add_connection(session, name, venue, "Europe/London")
        add_app(session, name, SHOP, create_tables=True)
        store = app_store(get_connection(session, name).apps[0])
    with store.engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO settings DEFAULT VALUES")
        conn.exec_driver_sql(
            "INSERT INTO orders (status, due_at) VALUES ('placed', '2026-07-01T10:00Z')"
        )
    env = {"DATABASE_URL": control, "REDIS_URL": ""}
    run = CliRunner().invoke
    # 10:00 UTC on 1 July is 11:00 BST on the venue's clock.
    due = run(main, ["due", name, "--at", "2026-07-01T10:00:00+00:00", "--json"], env=env)
    assert due.exit_code == 0, due.output
    assert [(r["key"], r["rule"], r["moment"]) for r in json.loads(due.output)] == [
        (1, 1, "2026-07-01T11:00:00+01:00")
    ]
    early = run(main, ["due", name, "--at", "2026-07-01T09:59:00+00:00"], env=env)
    assert "nothing due" in early.output
    dry = run(main, ["sweep", name, "--now", "2026-07-01T10:00:00+00:00", "--dry-run"], env=env)
    assert "would move shop.orders 1 rule 1" in dry.output
    swept = run(main, ["sweep", name, "--now", "2026-07-01T10:00:00+00:00"], env=env)
    assert swept.exit_code == 0, swept.output
    assert "moved shop.orders 1 rule 1 at 2026-07-01T11:00:00+01:00" in swept.output
    indexes = run(main, ["indexes", name], env=env)
    assert (
        '-- already there: CREATE INDEX CONCURRENTLY IF NOT EXISTS "ix_orders_status_due_at"'
        ' ON "public"."orders" ("status", "due_at");'
    ) in indexes.output
    store.engine.dispose()
