"""Failover time on real processes: the Procfile's worker and clock on REDIS_URL =
redis+sentinel:// over three redis-servers (a primary, two replicas) and three sentinels of
this run's own (`sentinel down-after-milliseconds` 1000, tests/integration/sentinel_fixtures.py)
and fresh databases of the PostgreSQL server; prints one JSON object per line (not part of
`make test`; each measure waits for a real minute boundary).

- baseline: no failover; the seconds from a minute's start to the first of its due rows
  moving, on the sentinels' primary.
- failover (`--runs` times): the primary SIGKILLed `--kill-before` s (1) before a minute
  boundary with rows due in it; the seconds from the kill to a new primary named by the
  sentinels (`elected`), to the first row moving (`first_move`, goal <= 30 s), whether
  every row moved once (double, lost), and the seconds from starting the old primary again,
  as it was, to it being a replica in sync (`rejoined`, the sentinels' doing).

Run: TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \
     .venv/bin/python bench/failover.py [--runs 3] [--kill-before 1]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from contextlib import ExitStack
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import (  # noqa: E402
    ShopVenue,
    database,
    emit,
    next_boundary,
    registered,
    sleep_until,
    wait,
)
from services import redis_client  # noqa: E402
from services.apps import add_app  # noqa: E402
from services.connections import add_connection  # noqa: E402
from services.storage import engine_for, open_session, upgrade_control_plane  # noqa: E402
from tests.integration.recovery_fixtures import start_procfile_process, stop_process  # noqa: E402
from tests.integration.sentinel_fixtures import Failover  # noqa: E402
from tests.integration.sweep_fixtures import SHOP  # noqa: E402

CONNECTION = "bench"
ROWS = 50
"""Orders due in each measured minute."""


def dispose(url: str) -> None:
    """Let go of this process's pooled engine on a database about to be dropped."""
    engine_for(url).dispose()


class System(ShopVenue):
    """A control plane with one connection holding the shop, a Redis that fails over, and
    the Procfile's worker and clock on its sentinels."""

    def __init__(self, stack: ExitStack, server: str) -> None:
        self.folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="adm-fo-")))
        self.control = stack.enter_context(database(server, dispose))
        self.venue = stack.enter_context(database(server, dispose))
        upgrade_control_plane(self.control)
        with open_session(self.control) as session:
            add_connection(session, CONNECTION, self.venue, "Europe/London")
            add_app(session, CONNECTION, SHOP, create_tables=True)
        self.sql("INSERT INTO settings DEFAULT VALUES")
        self.redis = Failover(self.folder)
        stack.callback(self.redis.stop)
        self.redis.start()
        env = {"DATABASE_URL": self.control, "REDIS_URL": self.redis.url}
        self.processes = {}
        for name in ("worker", "clock"):
            process = start_procfile_process(name, env, self.folder / f"{name}.log")
            self.processes[name] = process
            stack.callback(stop_process, process)
        client = redis_client.connect(self.redis.url)
        wait("the worker and the clock registered", lambda: registered(client), 60)
        client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2, help="failovers measured")
    parser.add_argument("--kill-before", type=float, default=1.0)
    args = parser.parse_args()
    server = os.environ.get("TEST_DATABASE_URL") or "postgresql://postgres@127.0.0.1/postgres"
    with ExitStack() as stack:
        system = System(stack, server)
        expected = 0
        boundary = next_boundary(3)
        system.due_orders(boundary - timedelta(seconds=args.kill_before), ROWS)
        expected += ROWS
        sleep_until(boundary)
        started = time.monotonic()
        first = wait("the baseline minute's move", lambda: system.moved() > 0, 90)
        wait("the baseline minute's rows", lambda: system.moved() == expected, 90)
        emit(measure="failover", case="baseline: a minute's start to its first move",
             seconds=round(first - started, 2))  # fmt: skip
        for run in range(1, args.runs + 1):
            expected += ROWS
            measure_failover(system, run, expected, args.kill_before)


def measure_failover(system: System, run: int, expected: int, kill_before: float) -> None:
    """Kill the primary `kill_before` s before a minute boundary with ROWS due in it."""
    boundary = next_boundary(kill_before + 3)
    system.due_orders(boundary - timedelta(seconds=kill_before), ROWS)
    old = system.redis.primary()
    if old is None:
        raise SystemExit("the sentinels name no primary")
    sleep_until(boundary - timedelta(seconds=kill_before))
    killed = system.redis.kill(old)
    elected = wait("a new primary", lambda: system.redis.primary() not in (None, old), 60)
    back = time.monotonic()
    system.redis.start_data_node(old, None)  # as it was: a primary, no data
    first = wait("a due row moved", lambda: system.moved() > expected - ROWS, 120)
    wait("every row due moved", lambda: system.moved() == expected, 120)
    rejoined = wait(
        "the old primary a replica in sync",
        lambda: system.redis.role(old) == "slave" and system.redis.in_sync(old),
        120,
    )
    counts = system.audited()
    emit(
        measure="failover",
        case=f"run {run}: primary SIGKILLed {kill_before:g} s before a minute boundary",
        elected=round(elected - killed, 2),
        first_move=round(first - killed, 2),
        goal=30,
        rejoined=round(rejoined - back, 2),
        moved=len(counts),
        double=sum(1 for c in counts if c > 1),
        lost=expected - len(counts),
        exited=[n for n, p in system.processes.items() if p.poll() is not None],
    )


if __name__ == "__main__":
    main()
