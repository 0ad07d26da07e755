"""What the benches share: a JSON line a figure, fresh databases, minute boundaries and
bounded waits (bench/sweep.py, bench/failover.py, bench/recovery.py, bench/fence.py, ...)."""

from __future__ import annotations

import argparse
import json
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
from psycopg import sql


def arguments(
    doc: str | None, add: Callable[[argparse.ArgumentParser], object] | None = None
) -> argparse.Namespace:
    """The bench's command line: `--help` prints its docstring and starts nothing; an
    option it does not know is refused before anything starts."""
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    if add is not None:
        add(parser)
    return parser.parse_args()


def emit(**figures: object) -> None:
    print(json.dumps(figures), flush=True)


@contextmanager
def database(server: str, before_drop: Callable[[str], object] | None = None) -> Iterator[str]:
    """A fresh database on the server, dropped afterwards (`before_drop(url)` first, where
    given: e.g. to let go of a pooled engine on it)."""
    name = f"adm_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    info = psycopg.conninfo.conninfo_to_dict(server)
    info["dbname"] = name
    url = psycopg.conninfo.make_conninfo(**info)
    try:
        yield url
    finally:
        if before_drop is not None:
            before_drop(url)
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def now() -> datetime:
    return datetime.now(UTC)


def sleep_until(moment: datetime) -> None:
    time.sleep(max(0.0, (moment - now()).total_seconds()))


def next_boundary(at_least: float) -> datetime:
    """The next minute boundary at least `at_least` seconds away."""
    start = now()
    found = start.replace(second=0, microsecond=0) + timedelta(minutes=1)
    while (found - start).total_seconds() < at_least:
        found += timedelta(minutes=1)
    return found


def wait(what: str, check: Callable[[], object], seconds: float, step: float = 0.05) -> float:
    """Wait until `check` holds, looking every `step` s; the monotonic time it did (exits the
    bench when it never does within `seconds`)."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"not within {seconds} s: {what}")
        time.sleep(step)
    return time.monotonic()


def registered(client: Any) -> bool:
    """Whether an RQ worker and the clock (RQ's cron scheduler) are registered in that Redis."""
    from rq import Worker
    from rq.cron import CronScheduler

    return bool(Worker.all(connection=client)) and bool(CronScheduler.all(connection=client))


class ShopVenue:
    """The venue database of tests/integration/sweep_fixtures.SHOP at `self.venue`: its
    orders made due and counted moved, the clock's moves audited."""

    venue: str

    def sql(self, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.venue, autocommit=True) as conn:
            cursor = conn.execute(statement, params)
            return cursor.fetchall() if cursor.description else []

    def due_orders(self, at: datetime, count: int) -> None:
        self.sql(
            "INSERT INTO orders (status, due_at) SELECT 'placed', %s FROM generate_series(1, %s)",
            (at, count),
        )

    def moved(self) -> int:
        return int(self.sql("SELECT count(*) FROM orders WHERE status = 'cancelled'")[0][0])

    def audited(self) -> list[int]:
        """Per moved row, how many timed moves the audit holds."""
        rows = self.sql(
            "SELECT count(*) FROM adminium.audit WHERE actor_kind = 'clock'"
            " AND move_to = 'cancelled' GROUP BY row_key"
        )
        return [int(r[0]) for r in rows]
