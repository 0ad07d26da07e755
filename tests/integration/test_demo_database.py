"""ADMINIUM_DEMO_DATABASE names the demo's database, so two demos can
share one PostgreSQL server."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import psycopg
import pytest
from psycopg import sql

from adminium.demo import install_demo
from services.connections import get_connection
from services.storage import engine_for, open_session, upgrade_control_plane

pytestmark = pytest.mark.integration

NOW = datetime(2026, 7, 1, 12, tzinfo=UTC)


@pytest.fixture
def named(server_database_url: str) -> Iterator[str]:
    """A unique demo database name (dropped after the test, as is a stray adminium_demo)."""
    name = f"adm_demo_{uuid.uuid4().hex[:10]}"
    yield name
    with psycopg.connect(server_database_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def test_the_demo_goes_to_the_database_adminium_demo_database_names(
    make_database: Callable[[], str],
    server_database_url: str,
    named: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    control_url = make_database()
    upgrade_control_plane(control_url)
    monkeypatch.setenv("ADMINIUM_DEMO_DATABASE", named)

    added = install_demo(control_url, now=NOW)  # as `adminium run` calls it

    assert sorted(added) == ["hotel", "takeaway", "tickets"]
    with open_session(control_url) as session:
        url = get_connection(session, "demo").url
    assert psycopg.conninfo.conninfo_to_dict(url)["dbname"] == named
    with psycopg.connect(url) as conn:
        (orders,) = conn.execute("SELECT count(*) FROM takeaway.orders").fetchone() or (0,)
    assert orders > 0
    engine_for(url).dispose()
    engine_for(control_url).dispose()
