"""Recovery times on real processes: the Procfile's worker and clock on a redis-server of
this run's own (free port) and fresh databases of the PostgreSQL server; prints one JSON
object per line (not part of `make test`; each measure waits for real minutes).

- redis: Redis stopped `--down-before` s before a minute boundary and started `--up-after`
  s after it (default 20 and 50: a 70 s outage), with rows that
  fell due meanwhile; the seconds from Redis answering to the first of them moving (goal
  <= 10 s), whether every one moved once (double, lost). Baseline in the same run: the
  seconds from a minute's start to its first move in a minute with no outage.
- stalled: the worker SIGKILLed just after a sweep (the clock keeps running, nobody starts
  the worker again); the seconds from the first sweep that did not come (the next minute,
  at the killed sweep's own lag) to the stall being said, as a page reads it
  (`core.sweep.health.read_health`; an open live screen is told within
  LIVE_WATCH_SECONDS, 15 s, more: printed as `screens_by`), goal <= 90 s; and the seconds
  from the kill.

- frozen: two Procfile workers; the one holding the connection's fence (its lease names
  `worker host:pid`) is frozen (SIGSTOP) mid-sweep with rows still due; the seconds from
  the freeze to the next row moved by the other worker (its next minute's sweep, once the
  frozen one's lease ran out, LEASE 10 s), whether every row moved once once it is woken
  (double, lost). Baseline in the same run: a minute's start to its first move with no
  worker frozen. Before the lease, a session-level lock: nothing moved until the frozen worker
  woke; `bench/fence.py` measures both fences side by side at a 1 s cadence.

To add a measure: write `def measure_<name>(args) -> None` that emits its lines (with a
`measure` key) and add it to MEASURES; `System` starts what a measure needs.

Run: TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \
     .venv/bin/python bench/recovery.py [--only redis,stalled] [--down-before 20 --up-after 50]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from datetime import datetime, timedelta
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import (  # noqa: E402
    ShopVenue,
    database,
    emit,
    next_boundary,
    now,
    registered,
    sleep_until,
    wait,
)
from core.sweep.health import read_health  # noqa: E402
from services.apps import add_app  # noqa: E402
from services.connections import add_connection  # noqa: E402
from services.storage import engine_for, open_session, upgrade_control_plane  # noqa: E402
from tests.integration.recovery_fixtures import (  # noqa: E402
    RedisOnPort,
    start_procfile_process,
    stop_process,
)
from tests.integration.sweep_fixtures import SHOP  # noqa: E402

CONNECTION = "bench"
ROWS = 50
"""Orders that fall due during the outage."""
WATCH_SECONDS = 15.0
"""How often an open screen's hub reads the sweep health (web.live.hub.WATCH_SECONDS)."""


def dispose(url: str) -> None:
    """Let go of this process's pooled engine on a database about to be dropped."""
    engine_for(url).dispose()


class System(ShopVenue):
    """A control plane with one connection holding the shop, a Redis of its own, and the
    Procfile's worker and clock on them."""

    def __init__(self, stack: ExitStack, server: str) -> None:
        self.folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="adm-rec-")))
        self.control = stack.enter_context(database(server, dispose))
        self.venue = stack.enter_context(database(server, dispose))
        upgrade_control_plane(self.control)
        with open_session(self.control) as session:
            add_connection(session, CONNECTION, self.venue, "Europe/London")
            add_app(session, CONNECTION, SHOP, create_tables=True)
        self.sql("INSERT INTO settings DEFAULT VALUES")
        self.redis = RedisOnPort(self.folder)
        self.redis.start()
        stack.callback(self.redis.stop)
        env = {"DATABASE_URL": self.control, "REDIS_URL": self.redis.url}
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        for name in ("worker", "clock"):
            process = start_procfile_process(name, env, self.folder / f"{name}.log")
            self.processes[name] = process
            stack.callback(stop_process, process)
        client = redis.Redis.from_url(self.redis.url)
        wait("the worker and the clock registered", lambda: registered(client), 60, 0.1)
        client.close()

    def last_sweep_at(self) -> datetime | None:
        rows = self.sql("SELECT max(at) FROM adminium.sweeps WHERE connection = %s", (CONNECTION,))
        return rows[0][0] if rows else None


def measure_redis(args: argparse.Namespace) -> None:
    """Redis stopped across a minute boundary: its answer to the first move."""
    with ExitStack() as stack:
        system = System(stack, args.server)
        # Baseline: a minute with no outage, its start to its first move.
        boundary = next_boundary(3)
        system.due_orders(boundary - timedelta(seconds=1), 1)
        sleep_until(boundary)
        started = time.monotonic()
        first = wait("the baseline minute's move", lambda: system.moved() >= 1, 90, 0.1)
        emit(measure="redis", case="baseline: a minute's start to its first move",
             seconds=round(first - started, 2))  # fmt: skip

        boundary = next_boundary(args.down_before + 3)
        system.due_orders(boundary - timedelta(seconds=args.down_before / 2), ROWS)
        sleep_until(boundary - timedelta(seconds=args.down_before))
        system.redis.stop()
        sleep_until(boundary + timedelta(seconds=args.up_after))
        answered = system.redis.start()
        first = wait("a row due during the outage moved", lambda: system.moved() > 1, 300, 0.1)
        wait("every row due during the outage moved", lambda: system.moved() == ROWS + 1, 300, 0.1)
        counts = system.audited()
        emit(
            measure="redis",
            case=f"outage {args.down_before + args.up_after:.0f} s across a minute boundary",
            seconds=round(first - answered, 2),
            goal=10,
            moved=len(counts),
            double=sum(1 for c in counts if c > 1),
            lost=ROWS + 1 - len(counts),
            exited=[n for n, p in system.processes.items() if p.poll() is not None],
        )


def measure_stalled(args: argparse.Namespace) -> None:
    """The worker killed just after a sweep: when the stall is said."""
    with ExitStack() as stack:
        system = System(stack, args.server)
        seen = system.last_sweep_at()
        wait("a sweep recorded", lambda: system.last_sweep_at() not in (None, seen), 90, 0.05)
        time.sleep(0.5)  # the sweep's record closed
        last = system.last_sweep_at()
        assert last is not None
        system.processes["worker"].send_signal(signal.SIGKILL)
        killed = time.monotonic()
        minute = last.replace(second=0, microsecond=0)
        # The next sweep would have started at the same lag into the next minute.
        missed = last + timedelta(minutes=1)
        lag = (last - minute).total_seconds()
        engine = engine_for(system.venue)

        def stalled() -> bool:
            with engine.connect() as conn:
                return read_health(conn, CONNECTION, now()).stalled_minutes is not None

        said = wait("the stall said", stalled, 400, 0.25)
        said_at = now() - timedelta(seconds=time.monotonic() - said)
        after_missed = (said_at - missed).total_seconds()
        emit(
            measure="stalled",
            case="worker SIGKILLed after a sweep",
            last_sweep_lag=round(lag, 2),
            seconds_after_first_missed_sweep=round(after_missed, 1),
            screens_by=round(after_missed + WATCH_SECONDS, 1),
            goal=90,
            seconds_after_kill=round(said - killed, 1),
        )


FROZEN_ROWS = 600
"""Orders due for the frozen-worker measure: more than a sweep moves in its first seconds."""


def measure_frozen(args: argparse.Namespace) -> None:
    """The worker holding the fence frozen mid-sweep: when the other worker takes over."""
    with ExitStack() as stack:
        system = System(stack, args.server)
        env = {"DATABASE_URL": system.control, "REDIS_URL": system.redis.url}
        other = start_procfile_process("worker", env, system.folder / "worker-2.log")
        stack.callback(stop_process, other)
        workers = {p.pid: p for p in (system.processes["worker"], other)}
        # Baseline: a minute with no worker frozen, its start to its first move.
        boundary = next_boundary(5)
        system.due_orders(boundary - timedelta(seconds=1), 1)
        sleep_until(boundary)
        started = time.monotonic()
        first = wait("the baseline minute's move", lambda: system.moved() >= 1, 90, 0.1)
        emit(measure="frozen", case="baseline: a minute's start to its first move",
             seconds=round(first - started, 2))  # fmt: skip
        # Each move takes a nap, so the sweep is long enough to be caught holding the fence.
        system.sql(
            "CREATE FUNCTION nap() RETURNS trigger LANGUAGE plpgsql AS $$"
            " BEGIN PERFORM pg_sleep(0.02); RETURN NEW; END $$"
        )
        system.sql("CREATE TRIGGER nap BEFORE UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION nap()")
        system.due_orders(now() - timedelta(seconds=1), FROZEN_ROWS)

        def holder() -> int | None:
            rows = system.sql(
                "SELECT holder FROM adminium.fences WHERE connection = %s"
                " AND until > clock_timestamp()",
                (CONNECTION,),
            )
            pid = int(str(rows[0][0]).rsplit(":", 1)[1]) if rows else None
            return pid if pid in workers and system.moved() > 11 else None

        wait("a sweep holding the fence, moving", lambda: holder() is not None, 150, 0.02)
        frozen = workers[holder() or 0]
        frozen.send_signal(signal.SIGSTOP)
        frozen_at, before, second = time.monotonic(), system.moved(), now().second
        try:
            taken = wait(
                "another worker moved a row", lambda: system.moved() > before + 1, 300, 0.1
            )
        finally:
            frozen.send_signal(signal.SIGCONT)
        wait("every row moved", lambda: system.moved() == FROZEN_ROWS + 1, 300, 0.1)
        counts = system.audited()
        emit(
            measure="frozen",
            case="the worker holding the fence SIGSTOPped mid-sweep",
            seconds=round(taken - frozen_at, 2),
            frozen_at_second=second,
            moved=len(counts),
            double=sum(1 for c in counts if c > 1),
            lost=FROZEN_ROWS + 1 - len(counts),
        )


MEASURES: dict[str, Callable[[argparse.Namespace], None]] = {
    "redis": measure_redis,
    "stalled": measure_stalled,
    "frozen": measure_frozen,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(MEASURES), help="comma-separated measures")
    parser.add_argument("--down-before", type=float, default=20.0)
    parser.add_argument("--up-after", type=float, default=50.0)
    args = parser.parse_args()
    args.server = os.environ.get("TEST_DATABASE_URL") or "postgresql://postgres@127.0.0.1/postgres"
    for name in args.only.split(","):
        MEASURES[name.strip()](args)


if __name__ == "__main__":
    main()
