"""The operators' console: quiet by default, what `sweep` says is still due, times on the
venue's clock, set-aside rows listed, tried again and moved by hand, one database per
connection."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from services.storage import open_session
from services.users import add_user
from tests.integration.hold_fixtures import AppConsole, app_on_connection
from tests.integration.sweep_fixtures import SHOP

ADMINIUM = Path(sys.executable).parent / "adminium"
# 10:00 UTC on 1 July 2026 is 11:00 on London's summer clock.
NOW = "2026-07-01T10:00:00+00:00"

pytestmark = pytest.mark.integration


class Console(AppConsole):
    def orders(self, count: int, due: str = "2026-07-01T09:00Z") -> None:
        with self.store.engine.begin() as conn:
            conn.exec_driver_sql(
                "INSERT INTO orders (status, due_at)"
                " SELECT 'placed', %s FROM generate_series(1, %s)",
                (due, count),
            )

    def status(self, key: int) -> str:
        with self.store.engine.connect() as conn:
            return str(conn.exec_driver_sql(f"SELECT status FROM orders WHERE id = {key}").scalar())


@pytest.fixture
def console(make_database: Callable[[], str]) -> Iterator[Console]:
    """A control plane with a London connection holding the shop (settings row made)."""
    control, name, store = app_on_connection(make_database, SHOP)
    with store.engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO settings DEFAULT VALUES")
    yield Console(control, name, store)
    store.engine.dispose()


def test_sweep_says_how_many_rows_the_cap_left_still_due(console: Console) -> None:
    console.orders(700)
    swept = console.run("sweep", console.name, "--now", NOW)
    assert swept.exit_code == 0, swept.output
    summary = swept.output.splitlines()[-1]
    assert summary.startswith(f"sweep of {console.name}: more, moved 500, set aside 0,")
    assert "still due 200," in summary
    again = console.run("sweep", console.name, "--now", NOW)
    assert "done, moved 200" in again.output and "still due 0," in again.output


def test_commands_are_quiet_by_default_and_say_more_with_v(console: Console) -> None:
    console.orders(1)
    env = {**os.environ, "DATABASE_URL": console.control, "REDIS_URL": ""}
    env.pop("LOG_LEVEL", None)
    command = [str(ADMINIUM), "sweep", console.name, "--now", NOW, "--dry-run"]
    quiet = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == ""
    assert quiet.stdout.count(f"sweep of {console.name}") == 1
    loud = subprocess.run(
        [str(ADMINIUM), "-v", *command[1:]], env=env, capture_output=True, text=True, timeout=60
    )
    assert "INFO core.sweep.sweep" in loud.stderr


def test_set_aside_rows_are_listed_on_the_venue_clock_tried_again_and_moved(
    console: Console,
) -> None:
    console.orders(2)
    with console.store.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE settings SET sweep_on = false")
    swept = console.run("sweep", console.name, "--now", NOW)
    assert "set aside 2" in swept.output, swept.output

    listed = console.run("set-aside", "list", console.name)
    assert listed.exit_code == 0, listed.output
    lines = listed.output.splitlines()
    assert len(lines) == 2
    # Due 09:00 UTC = 10:00 BST; judged at 10:00 UTC, set aside until 11:00 UTC = 12:00 BST.
    assert lines[0].startswith("shop.orders 1 rule 1 (placed -> cancelled) at 2026-07-01T10:00")
    assert "+01:00" in lines[0] and "set aside until 2026-07-01T12:00:00+01:00" in lines[0]
    due = console.run("due", console.name, "--at", NOW)
    assert "set aside until 2026-07-01T12:00:00+01:00" in due.output, due.output
    nothing = console.run("due", console.name, "--at", "2026-07-01T08:00:00+00:00")
    assert "by 2026-07-01T09:00:00+01:00" in nothing.output

    refused = console.run("set-aside", "retry", console.name, "shop", "orders", "1")
    assert refused.exit_code == 1
    assert refused.stderr.startswith("Error: refused again: "), refused.stderr
    with console.store.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE settings SET sweep_on = true")
    retried = console.run("set-aside", "retry", console.name, "shop", "orders", "1")
    assert retried.exit_code == 0, retried.output
    assert console.status(1) == "cancelled"
    assert console.run("set-aside", "retry", console.name, "shop", "orders", "1").exit_code == 1

    # By hand: a known user whose roles apply, named in the audit.
    with open_session(console.control) as session:
        add_user(session, "staff@venue.test", "admin", None)
    unknown = console.run("move", console.name, "orders", "2", "done", "--as", "no@venue.test")
    assert unknown.exit_code == 1 and "no user" in unknown.output
    moved = console.run("move", console.name, "orders", "2", "done", "--as", "staff@venue.test")
    assert moved.exit_code == 0, moved.output
    assert "shop.orders 2 moved to done by staff@venue.test" in moved.output
    assert console.status(2) == "done"
    with console.store.engine.connect() as conn:
        actor = conn.exec_driver_sql(
            "SELECT actor FROM adminium.audit WHERE row_key = '2' ORDER BY id DESC LIMIT 1"
        ).scalar()
    assert actor == "staff@venue.test"
    assert "no rows set aside" in console.run("set-aside", "list", console.name).output
    bad = console.run("move", console.name, "orders", "2", "placed", "--as", "staff@venue.test")
    assert bad.exit_code == 1
    assert bad.stderr == (
        "Error: not moved: no move from 'done' to 'placed' (STATE_MOVE_NOT_LISTED)\n"
    )


def test_a_second_connection_on_the_same_database_is_refused_unless_forced(
    console: Console,
) -> None:
    url = console.store.engine.url
    # The test server's URL may carry its host as a query parameter (a conninfo string).
    host = url.host or url.query["host"]
    # The same database written another way: conninfo instead of a URL, no password.
    conninfo = f"host={host} port={url.port or 5432} dbname={url.database} user={url.username}"
    add = console.run("connection", "add", "twin", "--url", conninfo)
    assert add.exit_code == 1, add.output
    assert f"connection {console.name!r} already uses this database" in add.output
    forced = console.run("connection", "add", "twin", "--url", conninfo, "--force")
    assert forced.exit_code == 0, forced.output
