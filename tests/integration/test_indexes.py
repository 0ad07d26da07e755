"""Start-up makes the indexes an app wants in a database made before it wanted them: the
reminders' moment index of an app installed earlier is built (concurrently), an index
already there is left as it is, and one a failed build left invalid is built again."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from sqlalchemy.engine import Engine

from adminium.cli import main
from core.store.install import reminder_indexes, timed_indexes
from services.apps import add_app, install_adminium_tables
from services.connections import add_connection, get_connection
from services.indexes import index_name
from services.storage import connection_engine, engine_for, open_session, upgrade_control_plane
from tests.integration.outbox_fixtures import mail_shop_manifest
from tests.integration.sweep_fixtures import SHOP


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


def test_start_up_never_indexes_a_table_adminium_did_not_make_unless_asked(
    make_database: Callable[[], str],
) -> None:
    control, venue = make_database(), make_database()
    upgrade_control_plane(control)
    engine = engine_for(venue)
    with engine.begin() as conn:  # the venue's own tables, made by its POS
        conn.execute(
            sa.text(
                "CREATE TABLE public.settings (id serial PRIMARY KEY, sweep_on boolean NOT NULL"
                " DEFAULT true); CREATE TABLE public.orders (id serial PRIMARY KEY, status"
                " varchar(9) NOT NULL, due_at timestamptz, note text, cancel_code text)"
            )
        )
    with open_session(control) as session:
        add_connection(session, "pos", venue, "Europe/London")
        add_app(session, "pos", SHOP)
        [statement] = timed_indexes(get_connection(session, "pos").apps[0].model)
        name = index_name(statement)
        install_adminium_tables(session)  # what `adminium run` does as it starts
        assert index_state(engine, name) is None
        # The app's comparison says so, with the SQL for its DBA.
        agreement = get_connection(session, "pos").apps[0].agreement
        assert agreement is not None
        [missing] = agreement.disagreements
        assert missing["kind"] == "index-missing"
        assert missing["sql"] == [
            f'CREATE INDEX CONCURRENTLY IF NOT EXISTS "{name}" ON "public"."orders" ("status",'
            ' "due_at");'
        ]
    built = CliRunner().invoke(
        main, ["indexes", "pos", "--build"], env={"DATABASE_URL": control, "REDIS_URL": ""}
    )
    assert built.exit_code == 0, built.output
    assert built.output == f"built {name} (app shop)\n"
    found = index_state(engine, name)
    assert found is not None and found[1]
    engine.dispose()
    engine_for(control).dispose()
