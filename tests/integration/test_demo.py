"""The demo: installed once on a fresh control plane, the same rows on every later run."""

from __future__ import annotations

import signal
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa
from psycopg import sql

from adminium.demo import DEMO_APPS, DEMO_EMAIL, DEMO_PASSWORD, install_demo, receiver_url
from core.store.schema import sample_marks
from core.sweep.sweep import sweep_connection
from services.apps import app_store
from services.connections import get_connection
from services.deliveries import app_deliveries
from services.models import Connection
from services.storage import engine_for, open_session, upgrade_control_plane
from services.users import user_by_password
from services.webhooks import list_webhooks
from tests.integration.launching import Launch, wait_for

# Wed 1 Jul 2026 13:00 BST.
NOW = datetime(2026, 7, 1, 12, tzinfo=UTC)


@pytest.fixture
def demo(make_database: Callable[[], str], server_database_url: str) -> Iterator[dict[str, Any]]:
    """A fresh control plane and the name of a demo database on the same server (dropped after)."""
    control_url = make_database()
    upgrade_control_plane(control_url)
    name = f"adm_demo_{uuid.uuid4().hex[:10]}"
    yield {"control_url": control_url, "database": name}
    with open_session(control_url) as session:
        connection = session.scalar(sa.select(Connection).where(Connection.name == "demo"))
        if connection is not None:
            engine_for(connection.url).dispose()
    engine_for(control_url).dispose()
    with psycopg.connect(server_database_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def snapshot(control_url: str) -> dict[str, Any]:
    """Every row of every demo app's tables, and the sample marks."""
    found: dict[str, Any] = {}
    with open_session(control_url) as session:
        connection = get_connection(session, "demo")
        for app in connection.apps:
            store = app_store(app)
            with store.engine.connect() as conn:
                for table in store.app.tables:
                    found[f"{app.name}.{table}"] = sorted(
                        store.read_rows(conn, table), key=lambda r: r["id"]
                    )
                found["marks"] = sorted(conn.execute(sa.select(sample_marks)).all())
    return found


def test_demo_installs_once_and_later_runs_change_nothing(demo: dict[str, Any]) -> None:
    first = install_demo(demo["control_url"], now=NOW, database=demo["database"])
    assert sorted(first) == sorted(DEMO_APPS)
    rows = snapshot(demo["control_url"])
    # A later start, five minutes on: nothing added, nothing moved.
    again = install_demo(
        demo["control_url"], now=NOW + timedelta(minutes=5), database=demo["database"]
    )
    assert again == {}
    assert snapshot(demo["control_url"]) == rows
    assert len(rows["takeaway.orders"]) == 7
    # Every sample row is marked but the apps' setup (settings rows, opening hours).
    setup = {"settings", "opening_hours"}
    assert len(rows["marks"]) == sum(
        1 for added in first.values() for row in added if row.table not in setup
    )


def test_demo_connection_and_staff_account(demo: dict[str, Any]) -> None:
    install_demo(demo["control_url"], now=NOW, database=demo["database"])
    with open_session(demo["control_url"]) as session:
        connection = get_connection(session, "demo")
        assert connection.zone == "Europe/London"
        assert sorted(a.name for a in connection.apps) == sorted(DEMO_APPS)
        assert {a.model.schema_name for a in connection.apps} == set(DEMO_APPS)
        user = user_by_password(session, DEMO_EMAIL, DEMO_PASSWORD)
        assert user is not None
        assert [user.roles_in(a) for a in connection.apps] == [{"manager"}] * 3
        assert user_by_password(session, DEMO_EMAIL, "wrong") is None


def test_timed_moves_happen_in_the_demo_first_minutes(demo: dict[str, Any]) -> None:
    install_demo(demo["control_url"], now=NOW, database=demo["database"])
    with open_session(demo["control_url"]) as session:
        connection = get_connection(session, "demo")
        stores = [app_store(app) for app in connection.apps]
        # The first minute: yesterday's uncollected order (its closing, 30 Jun 23:00 BST,
        # passed) and Priya's stay (no-show from 1 Jul 10:00 BST) are due; no offer yet.
        first = sweep_connection(stores, connection="demo", now=NOW + timedelta(minutes=1))
        # Two minutes later the offer written to lapse at NOW + 2 minutes goes back.
        third = sweep_connection(stores, connection="demo", now=NOW + timedelta(minutes=3))
    assert sorted((d.rule.table, d.key) for d in first.moved) == [("orders", 1), ("stays", 5)]
    assert [(d.rule.table, d.key) for d in third.moved] == [("tickets", 1)]
    rows = snapshot(demo["control_url"])
    assert rows["takeaway.orders"][0]["status"] == "cancelled"
    assert rows["tickets.tickets"][0]["status"] == "valid"
    assert rows["hotel.stays"][4]["status"] == "no_show"
    # Still sample data, whatever the clock did.
    assert ("takeaway", "orders", "1", NOW) in rows["marks"]


def test_the_demo_kitchen_webhook_hears_the_clock_cancel_an_order(demo: dict[str, Any]) -> None:
    install_demo(demo["control_url"], now=NOW, database=demo["database"], port=5123)
    # A later run on another port points the webhook there; its secret stays.
    with open_session(demo["control_url"]) as session:
        [first] = list_webhooks(session, "demo")
        secret = first.secret
    install_demo(demo["control_url"], now=NOW, database=demo["database"], port=5124)
    with open_session(demo["control_url"]) as session:
        [kitchen] = list_webhooks(session, "demo")
        assert (kitchen.name, kitchen.url) == ("kitchen", receiver_url(5124))
        assert kitchen.url == "http://127.0.0.1:5124/receiver/demo/kitchen"
        assert kitchen.secret == secret
        stores = [app_store(app) for app in get_connection(session, "demo").apps]
    # The first minute's sweep cancels yesterday's uncollected order (a sample row: the
    # demo's automation asks for samples), which queues its event for the kitchen.
    sweep_connection(stores, connection="demo", now=NOW + timedelta(minutes=1))
    [takeaway] = [s for s in stores if s.app.name == "takeaway"]
    [delivery] = app_deliveries(takeaway.engine, ["takeaway"])
    assert (delivery["webhook"], delivery["row_key"], delivery["sample"]) == ("kitchen", "1", True)
    assert delivery["event"]["after"]["status"] == "cancelled"


def test_run_from_a_clean_instance_serves_the_demo_board(
    launch: Callable[[], Launch],
) -> None:
    running = launch()
    running.wait_until_up()
    running.note_processes()
    opener = running.sign_in(DEMO_EMAIL, DEMO_PASSWORD)
    with opener.open(running.url("/apps/demo/takeaway/orders"), timeout=10) as reply:
        board = reply.read().decode()
    # The sample's customers' orders are on the board.
    assert "3 x dumplings" in board, running.log_tail()
    assert running.stop(signal.SIGINT, group=True) in (0, 130)
    wait_for("every process of the run to stop", lambda: not running.leftovers())


def test_the_demo_till_tickets_card_payment_is_given_back_by_the_clock(
    demo: dict[str, Any],
) -> None:
    install_demo(demo["control_url"], now=NOW, database=demo["database"])
    with open_session(demo["control_url"]) as session:
        stores = [app_store(app) for app in get_connection(session, "demo").apps]
    # Opened at NOW and held for settings.till_hold_minutes (3): given back at NOW + 3 min.
    early = sweep_connection(stores, connection="demo", now=NOW + timedelta(minutes=2))
    assert early.given_back == ()
    assert snapshot(demo["control_url"])["tickets.gift_cards"][0]["balance"] == Decimal("27.50")
    later = sweep_connection(stores, connection="demo", now=NOW + timedelta(minutes=3))
    assert [(g.record.table, g.record.key) for g in later.given_back] == [("till_tickets", "1")]
    rows = snapshot(demo["control_url"])
    assert rows["tickets.gift_cards"][0]["balance"] == Decimal("40")
    assert rows["tickets.till_tickets"][0]["card_paid"] == 0
    assert rows["tickets.till_tickets"][0]["status"] == "open"
