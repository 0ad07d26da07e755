"""Start-up makes the indexes an app wants in a database made before it wanted them: the
reminders' moment index of an app installed earlier is built (concurrently), an index
already there is left as it is, and one a failed build left invalid is built again."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from core.store.install import reminder_indexes
from services.apps import add_app, install_adminium_tables
from services.connections import add_connection, get_connection
from services.indexes import index_name
from services.storage import connection_engine, engine_for, open_session, upgrade_control_plane
from tests.integration.outbox_fixtures import mail_shop_manifest


@pytest.fixture
def control(make_database: Callable[[], str]) -> Iterator[str]:
    """A control plane with the connection `shop` holding the mail shop's tables."""
    url = make_database()
    upgrade_control_plane(url)
    with open_session(url) as session:
        add_connection(session, "shop", make_database(), "Europe/London")
        add_app(session, "shop", mail_shop_manifest(), create_tables=True)
    yield url
    with open_session(url) as session:
        connection_engine(get_connection(session, "shop")).dispose()
    engine_for(url).dispose()


def index_state(engine: Engine, name: str) -> tuple[int, bool] | None:
    """The index's oid and whether it is valid; None when there is none."""
    query = sa.text(
        "SELECT i.indexrelid::int, i.indisvalid FROM pg_index i"
        " JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = :name"
    )
    with engine.connect() as conn:
        found = conn.execute(query, {"name": name}).first()
    return (found[0], found[1]) if found is not None else None


def test_start_up_builds_the_reminder_index_an_older_database_lacks(control: str) -> None:
    with open_session(control) as session:
        app = get_connection(session, "shop").apps[0]
        engine = connection_engine(app.connection)
        [statement] = reminder_indexes(app.model)
        name = index_name(statement)
        assert name == "ix_orders_due_at"
        # A database made before reminders wanted it.
        with engine.begin() as conn:
            conn.execute(sa.text(f'DROP INDEX "{name}"'))
        assert index_state(engine, name) is None

        install_adminium_tables(session)
        built = index_state(engine, name)
        assert built is not None and built[1]

        # Idempotent: a second start builds nothing (the same index, by its oid).
        install_adminium_tables(session)
        assert index_state(engine, name) == built

        # What a concurrent build that failed leaves: the index there but invalid, which
        # IF NOT EXISTS alone would take for done.
        with engine.begin() as conn:
            conn.execute(
                sa.text("UPDATE pg_index SET indisvalid = false WHERE indexrelid = :oid"),
                {"oid": built[0]},
            )
        install_adminium_tables(session)
        again = index_state(engine, name)
        assert again is not None and again[1] and again[0] != built[0]
