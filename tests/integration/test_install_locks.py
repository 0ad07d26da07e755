"""An install in a database that has all of Adminium's tables and columns, and the app's
timed-move indexes, reads them and locks none of them: a screen's read of Adminium's tables,
open across statements, never waits on an `app add --replace` nor it on the read (a deadlock
between the two failed a kitchen browser test in CI: the replace's `ALTER TABLE … ADD COLUMN
IF NOT EXISTS` took each of Adminium's tables' strongest lock even when it added nothing)."""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa

from core.manifest.model import load_app
from core.store.install import install_app
from core.store.schema import SWEEP_UPGRADES, adminium_metadata
from core.store.store import make_engine
from tests.integration.sweep_fixtures import SHOP

OLD_SWEEPS = ("holds_busy", "faults")
"""Two of the columns a newer version added to the sweep records."""


def test_an_install_where_everything_is_there_locks_none_of_adminium_s_tables(
    make_database: Callable[[], str],
) -> None:
    url = make_database()
    app = load_app(SHOP)
    # The installer gives up on any lock it would wait for more than 3 s.
    installer = make_engine(url, connect_args={"options": "-c lock_timeout=3000"})
    reader = make_engine(url)
    try:
        install_app(installer, app)
        with reader.connect() as screen, screen.begin():
            # A screen's transaction reading every one of Adminium's tables, held open.
            for table in adminium_metadata.sorted_tables:
                screen.execute(sa.select(sa.func.count()).select_from(table))
            # And a writer of the app's orders, not committed yet (a timed-move index
            # asked for again would wait for it).
            screen.execute(sa.text("LOCK TABLE public.orders IN ROW EXCLUSIVE MODE"))
            install_app(installer, app)
            with installer.connect() as conn:
                held = conn.execute(
                    sa.text(
                        "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
                        " JOIN pg_namespace n ON n.oid = c.relnamespace"
                        " WHERE n.nspname = 'adminium' AND l.mode = 'AccessShareLock'"
                        " AND l.pid <> pg_backend_pid()"
                    )
                ).scalar_one()
            assert held >= len(adminium_metadata.sorted_tables)  # the screen's, still held
    finally:
        installer.dispose()
        reader.dispose()


def test_an_install_adds_only_what_an_older_database_lacks(
    make_database: Callable[[], str],
) -> None:
    url = make_database()
    app = load_app(SHOP)
    engine = make_engine(url)
    try:
        install_app(engine, app)
        with engine.begin() as conn:
            for column in OLD_SWEEPS:
                conn.execute(sa.text(f"ALTER TABLE adminium.sweeps DROP COLUMN {column}"))
            conn.execute(sa.text("DROP INDEX adminium.ix_sweeps_running"))
        install_app(engine, app)
        with engine.connect() as conn:
            names = {c["name"] for c in sa.inspect(conn).get_columns("sweeps", "adminium")}
            indexes = {i["name"] for i in sa.inspect(conn).get_indexes("sweeps", "adminium")}
        assert set(OLD_SWEEPS) <= names
        assert "ix_sweeps_running" in indexes
        assert {upgrade.name for upgrade in SWEEP_UPGRADES} <= names | indexes
    finally:
        engine.dispose()
