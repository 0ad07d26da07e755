"""Start-up races: `adminium app add --create-tables` (`install_app`) while `adminium run`
starts (`install_adminium_tables`) on the same database, two processes released at once,
round after round: no `duplicate key value violates unique constraint
"pg_namespace_nspname_index"` (nor any other failure), and everything made once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from core.store.store import make_engine
from services.connections import add_connection
from services.models import Connection
from services.storage import open_session, upgrade_control_plane
from tests.integration.sweep_fixtures import SHOP

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 12

# One process per side, kept for every round: connected first, then released by a gate
# file, so both start installing within a millisecond or so.
INSTALLER = """
import json, sys, time
from pathlib import Path
side, folder, rounds = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
if side == "app":
    from core.manifest.model import load_app
    from core.store.store import make_engine
    from core.store.install import install_app
    app = load_app(json.loads(sys.argv[4]))
else:
    import logging
    from services.apps import install_adminium_tables
    from services.storage import open_session
    # `adminium run` logs a database it could not install in and goes on: listen for it.
    refusals = []
    catch = logging.Handler(logging.WARNING)
    catch.emit = lambda record: refusals.append(record.getMessage())
    logging.getLogger("services.apps").addHandler(catch)
for number in range(rounds):
    if side == "app":
        engine = make_engine((folder / f"url-{number}").read_text())
        engine.connect().close()
    else:
        session_made = open_session(sys.argv[4])
        session = session_made.__enter__()
        session.connection()
    (folder / f"ready-{side}-{number}").touch()
    while not (folder / f"go-{number}").exists():
        time.sleep(0.0005)
    try:
        if side == "app":
            install_app(engine, app)
        else:
            refusals.clear()
            install_adminium_tables(session)
            assert not refusals, refusals[0]
        said = "ok"
    except Exception as error:
        said = str(error).splitlines()[0]
    if side == "app":
        engine.dispose()
    else:
        session_made.__exit__(None, None, None)
    print(json.dumps(said), flush=True)
"""


@pytest.fixture
def control_url(make_database: Callable[[], str]) -> Iterator[str]:
    """A control plane at the newest migration, with the connection `shop`."""
    url = make_database()
    upgrade_control_plane(url)
    yield url


def test_app_add_and_adminium_run_install_at_once_without_a_failure(
    control_url: str, make_database: Callable[[], str], tmp_path: Path
) -> None:
    venues = [make_database() for _ in range(ROUNDS)]
    for number, url in enumerate(venues):
        (tmp_path / f"url-{number}").write_text(url)
    with open_session(control_url) as session:
        add_connection(session, "shop", venues[0])
    sides = {
        "app": [json.dumps(SHOP)],
        "run": [control_url],
    }
    processes = {
        side: subprocess.Popen(
            [sys.executable, "-c", INSTALLER, side, str(tmp_path), str(ROUNDS), *extra],
            cwd=ROOT,
            env=dict(os.environ),
            stdout=subprocess.PIPE,
            text=True,
        )
        for side, extra in sides.items()
    }
    try:
        for number, url in enumerate(venues):
            # `adminium run` installs in the database the connection names this round.
            with open_session(control_url) as session:
                session.execute(sa.update(Connection).values(url=url))
                session.commit()
            deadline = time.monotonic() + 60
            while not all((tmp_path / f"ready-{side}-{number}").exists() for side in sides):
                assert time.monotonic() < deadline, "an installer never got ready"
                time.sleep(0.005)
            (tmp_path / f"go-{number}").touch()
        said = {side: process.communicate(timeout=120)[0] for side, process in processes.items()}
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
                process.wait()
    results = {side: [json.loads(line) for line in out.splitlines()] for side, out in said.items()}
    assert results == {side: ["ok"] * ROUNDS for side in sides}
    for url in venues:
        engine = make_engine(url)
        try:
            with engine.connect() as conn:
                tables = conn.execute(
                    sa.text(
                        "SELECT count(*) FROM pg_tables WHERE schemaname = 'adminium'"
                        " AND tablename IN ('audit', 'sweeps', 'fences')"
                    )
                ).scalar_one()
                orders = conn.execute(sa.text("SELECT count(*) FROM orders")).scalar_one()
        finally:
            engine.dispose()
        assert (tables, orders) == (3, 0)
