"""`adminium app list` (each app, its tables, whether they agree with its manifest) and
`adminium app remove` (the app forgotten, its tables kept unless `--drop-tables --yes`
drops those Adminium made; refused while the clock holds the connection's sweep fence)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner, Result

from adminium.cli import main
from core.store.store import make_engine
from core.sweep.fence import Fence
from tests.core.manifest_cases import EXAMPLES
from tests.integration.pos_fixtures import POS_TABLES, pos_manifest

pytestmark = pytest.mark.integration

TAKEAWAY_TABLES = "customers, opening_hours, order_lines, orders, settings"


@dataclass
class Console:
    """`adminium …` on a control plane of the test's own, over one venue database."""

    control: str
    venue: str

    def __call__(self, *args: str) -> Result:
        env = {"DATABASE_URL": self.control, "REDIS_URL": ""}
        return CliRunner().invoke(main, list(args), env=env)

    def sql(self, statement: str) -> list[tuple[Any, ...]]:
        """Plain SQL on the venue's database; the rows it returns."""
        with psycopg.connect(self.venue, autocommit=True) as conn:
            found = conn.execute(statement)  # type: ignore[arg-type]
            return list(found.fetchall()) if found.description else []


@pytest.fixture
def console(make_database: Callable[[], str]) -> Iterator[Console]:
    """A control plane with the connection `shop`, and the takeaway app on it (its tables
    made by `--create-tables`)."""
    found = Console(make_database(), make_database())
    assert found("connection", "add", "shop", "--url", found.venue).exit_code == 0
    added = found("app", "add", "shop", str(EXAMPLES / "takeaway.json"), "--create-tables")
    assert added.exit_code == 0, added.output
    yield found


def there(console: Console, table: str) -> bool:
    """Whether the venue's database has the table."""
    [(found,)] = console.sql(f"SELECT to_regclass('{table}') IS NOT NULL")
    return bool(found)


def test_app_list_says_each_app_its_tables_and_whether_they_agree(console: Console) -> None:
    listed = console("app", "list")
    assert (listed.exit_code, listed.output) == (
        0,
        f"shop/takeaway\t{TAKEAWAY_TABLES}\ttables agree with the manifest\n",
    )
    # The venue's DBA adds a column no create can leave out: compared again, said.
    console.sql("ALTER TABLE takeaway.orders ADD COLUMN till text NOT NULL DEFAULT 'x'")
    console.sql("ALTER TABLE takeaway.orders ALTER COLUMN till DROP DEFAULT")
    again = console("app", "list", "shop")
    assert again.exit_code == 0, again.output
    assert again.output.startswith(
        f"shop/takeaway\t{TAKEAWAY_TABLES}\ttables disagree with the manifest: 1 "
        "(orders.till: the manifest does not know this column"
    )
    assert console("app", "list", "nosuch").stderr == (
        "Error: no connection named 'nosuch' (NOT_FOUND)\n"
    )


def test_app_remove_forgets_the_app_and_keeps_its_tables(console: Console) -> None:
    removed = console("app", "remove", "shop", "takeaway")
    assert removed.exit_code == 0, removed.output
    assert removed.output == (
        f"app takeaway removed from connection shop\n  tables kept: {TAKEAWAY_TABLES}\n"
    )
    assert console("app", "list").output == "no apps yet: adminium app add CONNECTION FILE\n"
    assert there(console, "takeaway.orders")
    assert console("app", "remove", "shop", "takeaway").stderr == (
        "Error: connection 'shop' has no app named 'takeaway' (NOT_FOUND)\n"
    )
    # Added again over the tables it kept: they are still Adminium's, and drop with --yes.
    again = console("app", "add", "shop", str(EXAMPLES / "takeaway.json"))
    assert again.exit_code == 0, again.output
    asked = console("app", "remove", "shop", "takeaway", "--drop-tables")
    assert asked.exit_code == 1
    assert asked.stderr == (
        "Error: not removed: --drop-tables drops app takeaway's tables Adminium made and every"
        " row in them; run again with --yes to drop them (CONTROL_PLANE_REFUSED)\n"
    )
    assert there(console, "takeaway.orders")
    dropped = console("app", "remove", "shop", "takeaway", "--drop-tables", "--yes")
    assert dropped.exit_code == 0, dropped.output
    assert dropped.output == (
        f"app takeaway removed from connection shop\n  tables dropped: {TAKEAWAY_TABLES}\n"
    )
    assert not there(console, "takeaway.orders")
    assert console.sql("SELECT count(*) FROM adminium.made WHERE schema_name = 'takeaway'") == [
        (0,)
    ]


def test_drop_tables_never_drops_the_venues_own(console: Console, tmp_path: Path) -> None:
    console.sql(POS_TABLES)
    manifest = tmp_path / "pos.json"
    manifest.write_text(json.dumps(pos_manifest()))
    assert console("app", "add", "shop", str(manifest)).exit_code == 0
    dropped = console("app", "remove", "shop", "pos", "--drop-tables", "--yes")
    assert dropped.exit_code == 0, dropped.output
    assert dropped.output == (
        "app pos removed from connection shop\n"
        "  tables kept: order_lines, orders (Adminium did not make them)\n"
    )
    assert there(console, "public.orders") and there(console, "public.order_lines")
    assert console("app", "list").output.startswith("shop/takeaway\t")


def test_app_remove_is_refused_while_the_clock_sweeps_the_connection(console: Console) -> None:
    engine = make_engine(console.venue)
    sweeping = Fence("shop", deadline=60.0, holder="worker till:4242")
    try:
        with engine.connect() as conn:
            assert sweeping.acquire(conn)  # as a sweep holds it while it moves rows
            refused = console("app", "remove", "shop", "takeaway")
            assert refused.exit_code == 1
            [line] = refused.stderr.splitlines()
            assert line.startswith(
                "Error: not removed: the clock is sweeping connection shop (fence held by "
                "worker till:4242 since "
            )
            assert line.endswith(
                "Z); run again once the sweep ends (a sweep takes seconds) (CONTROL_PLANE_REFUSED)"
            )
            assert console("app", "list").output.startswith("shop/takeaway\t")
            sweeping.release(conn)
        removed = console("app", "remove", "shop", "takeaway")
        assert removed.exit_code == 0, removed.output
    finally:
        engine.dispose()
    # The fence it took is let go: the next sweep takes it at once.
    engine = make_engine(console.venue)
    try:
        with engine.connect() as conn:
            assert Fence("shop", deadline=60.0).acquire(conn)
    finally:
        engine.dispose()


def test_an_app_whose_database_is_gone_is_forgotten_all_the_same(
    console: Console, server_database_url: str
) -> None:
    name = psycopg.conninfo.conninfo_to_dict(console.venue)["dbname"]
    with psycopg.connect(server_database_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')  # type: ignore[arg-type]
    dropping = console("app", "remove", "shop", "takeaway", "--drop-tables", "--yes")
    assert dropping.exit_code == 1
    assert dropping.stderr.startswith(
        "Error: app takeaway not removed: connection 'shop''s database does not answer, so its "
        "tables cannot be dropped: "
    )
    removed = console("app", "remove", "shop", "takeaway")
    assert removed.exit_code == 0, removed.output
    first, gone, kept = removed.output.splitlines()
    assert first == "app takeaway removed from connection shop"
    assert gone.startswith("  its database did not answer (") and name in gone
    assert gone.endswith("): its set-aside records there are left as they are")
    assert kept == f"  tables kept: {TAKEAWAY_TABLES}"
    assert console("app", "list").output == "no apps yet: adminium app add CONNECTION FILE\n"
