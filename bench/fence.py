"""A frozen worker and the sweep's fence: how long until another worker's sweep moves rows.

A sweep of 400 due rows runs in a process of its own and is frozen (SIGSTOP) after 20
moves, for `--freeze` seconds (default 30), then woken. Meanwhile this process sweeps the
same connection every `--every` seconds (1 s: a stand-in for the next sweep arriving at
any moment; with the tick's one sweep a minute, the takeover is the first minute's sweep
after the frozen one's lease ran out). Printed per case, one JSON object per line: the
seconds from the freeze to the first row moved by another sweep (`takeover_s`, null when
none moved while it was frozen), how many sweeps were turned away meanwhile, and 0 double
moves / 0 left over once both are done.

- baseline: the fence before the lease (a session-level advisory lock on a session of its
  own, `pg_try_advisory_lock`, held while the session answers), in the same run;
- lease: `core.sweep.fence` as shipped (LEASE 10 s, renewed each second while moving).

Run: TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \
     .venv/bin/python bench/fence.py [--freeze 30] [--every 1]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import core.sweep.sweep  # noqa: E402
from bench.common import database, emit  # noqa: E402
from core.manifest.model import load_app  # noqa: E402
from core.store.install import install_app  # noqa: E402
from core.store.store import Store, make_engine  # noqa: E402
from core.sweep.fence import Fence  # noqa: E402
from core.sweep.report import SweepOutcome  # noqa: E402
from core.sweep.sweep import sweep_connection  # noqa: E402
from core.time.clock import venue_zone  # noqa: E402
from tests.integration.pipeline_fixtures import at  # noqa: E402
from tests.integration.sweep_fixtures import SHOP  # noqa: E402

ROWS = 400
FROZEN_AFTER = 20
NOW = at("2026-05-04 12:00")

LEGACY = '''
import sqlalchemy as sa
from sqlalchemy.engine import Connection

_KEY = "hashtextextended('adminium sweep ' || :name, 0)"


class LegacyFence:
    """The fence before the lease, behind the lease's calls:
    a session-level advisory lock on a session of its own, held while it answers."""

    def __init__(self, connection, *, deadline, lease=0.0, holder=""):
        self.connection = connection
        self.turned_away_by = None
        self._session = None
        self._backend = None
        # The sweep takes its lease's row with its record: a lease of 0 s turns nobody
        # away, so the advisory lock alone fences.
        self.take_params = {"fence_connection": connection, "holder": "legacy",
                            "token": "legacy", "lease": 0.0, "deadline": 0.0}
        self.let_go_params = {"fence_connection": connection, "token": "legacy"}

    @property
    def taken(self) -> bool:
        return self._session is not None

    @taken.setter
    def taken(self, value: bool) -> None:
        if not value:
            self.release(None)

    def take_with(self, conn: Connection, take):
        if not self.acquire(conn):
            return None
        conn.execution_options(isolation_level="AUTOCOMMIT")
        try:
            return take()
        finally:
            conn.commit()
            conn.execution_options(isolation_level=conn.default_isolation_level)

    def acquire(self, conn: Connection) -> bool:
        session = conn.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        got = session.execute(
            sa.text(f"SELECT pg_try_advisory_lock({_KEY}), pg_backend_pid()"),
            {"name": self.connection},
        ).one()
        if not got[0]:
            session.close()
            return False
        self._session, self._backend = session, int(got[1])
        return True

    def held(self, conn: Connection) -> bool:
        if self._session is None:
            return False
        try:
            backend = self._session.execute(sa.text("SELECT pg_backend_pid()")).scalar_one()
        except sa.exc.DBAPIError:
            return False
        return int(backend) == self._backend

    def release(self, conn: Connection) -> None:
        session, self._session = self._session, None
        if session is None:
            return
        try:
            unlock = sa.text(f"SELECT pg_advisory_unlock({_KEY})")
            session.execute(unlock, {"name": self.connection})
        finally:
            session.close()
'''

FROZEN = """
import json, sys, time
sys.path.insert(0, sys.argv[4])
import core.sweep.sweep
from core.time.clock import venue_zone
from core.manifest.model import load_app
from core.store.store import Store, make_engine
from core.sweep.sweep import sweep_connection
from tests.integration.pipeline_fixtures import at
url, manifest, case = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
if case == "baseline":
    exec(sys.argv[5])
    core.sweep.sweep.Fence = LegacyFence
store = Store(make_engine(url), load_app(manifest), venue_zone("Europe/London"), connection="bench")
report = sweep_connection([store], connection="bench", now=at("2026-05-04 12:00"),
                          on_moved=lambda result: time.sleep(0.05))
print(json.dumps({"outcome": report.outcome.value, "moved": len(report.moved)}), flush=True)
"""


def legacy_fence() -> type:
    """The fence before the lease, as a class."""
    found: dict[str, Any] = {}
    exec(LEGACY, found)
    return found["LegacyFence"]  # type: ignore[no-any-return]


def run_case(case: str, server: str, freeze: float, every: float) -> None:
    with database(server) as url:
        run_on(case, url, freeze, every)


def run_on(case: str, url: str, freeze: float, every: float) -> None:
    engine = make_engine(url)
    core.sweep.sweep.Fence = legacy_fence() if case == "baseline" else Fence  # type: ignore[misc]
    frozen = None
    try:
        app = load_app(SHOP)
        install_app(engine, app)
        store = Store(engine, app, venue_zone("Europe/London"), connection="bench")
        with engine.begin() as conn:
            conn.execute(sa.text("INSERT INTO settings DEFAULT VALUES"))
            conn.execute(
                sa.text(
                    "INSERT INTO orders (status, due_at) SELECT 'placed', "
                    ":now - make_interval(secs => :rows - g) FROM generate_series(1, :rows) g"
                ),
                {"now": NOW, "rows": ROWS},
            )
        frozen = subprocess.Popen(
            [sys.executable, "-c", FROZEN, url, json.dumps(SHOP), case, str(ROOT), LEGACY],
            stdout=subprocess.PIPE,
            text=True,
        )

        def moved() -> int:
            with engine.connect() as conn:
                return int(
                    conn.execute(
                        sa.text("SELECT count(*) FROM orders WHERE status = 'cancelled'")
                    ).scalar_one()
                )

        while moved() < FROZEN_AFTER:
            time.sleep(0.01)
        frozen.send_signal(signal.SIGSTOP)
        frozen_at = time.monotonic()
        turned_away, takeover = 0, None
        while time.monotonic() - frozen_at < freeze:
            report = sweep_connection([store], connection="bench", now=NOW + timedelta(minutes=1))
            if report.outcome is SweepOutcome.fenced:
                turned_away += 1
            elif report.moved and takeover is None:
                takeover = time.monotonic() - frozen_at
                break
            time.sleep(every)
        frozen.send_signal(signal.SIGCONT)
        first = json.loads(frozen.communicate(timeout=120)[0])
        # Whatever is left once both are done goes to one more sweep.
        sweep_connection([store], connection="bench", now=NOW + timedelta(minutes=2))
        with engine.connect() as conn:
            counts = list(
                conn.execute(
                    sa.text(
                        "SELECT count(*) FROM adminium.audit WHERE actor_kind = 'clock'"
                        " GROUP BY row_key"
                    )
                ).scalars()
            )
        emit(
            case=case,
            freeze_s=freeze,
            takeover_s=None if takeover is None else round(takeover, 2),
            turned_away=turned_away,
            frozen_outcome=first["outcome"],
            frozen_moved=first["moved"],
            moved=len(counts),
            double=sum(1 for c in counts if c > 1),
            lost=ROWS - len(counts),
        )
    finally:
        if frozen is not None and frozen.poll() is None:
            frozen.send_signal(signal.SIGCONT)
            frozen.kill()
            frozen.wait()
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--freeze", type=float, default=30.0)
    parser.add_argument("--every", type=float, default=1.0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    server = os.environ.get("TEST_DATABASE_URL") or "postgresql://postgres@127.0.0.1/postgres"
    for case in ("baseline", "lease"):
        run_case(case, server, args.freeze, args.every)


if __name__ == "__main__":
    main()
