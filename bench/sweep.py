"""Benchmark the minute sweep on PostgreSQL; prints JSON lines (not part of `make test`).

- find: time to find the 500 due rows in an orders table of 10k / 100k / 1M rows
  (most rows long finished, 200 placed for later, 500 due); the 1M : 10k ratio.
- moves: moves per second of a full 500-row sweep, against a bare psycopg loop making
  the same UPDATE and audit INSERT (the row before and after, as the pipeline keeps it)
  in a transaction of its own per move (committed, as each timed move is), in the same
  run; and the CPU milliseconds this process spends per move on each side.
- idle: the cost of sweeping a connection with nothing due, in milliseconds.

Run: TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/sweep.py
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.clock import venue_zone
from core.due import find_due
from core.manifest.model import load_app
from core.store import Store, install_app, make_engine
from core.sweep import sweep_connection
from tests.integration.sweep_fixtures import SHOP

NOW = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)
DUE, LATER = 500, 200


def emit(**figures: object) -> None:
    print(json.dumps(figures), flush=True)


@contextmanager
def database(server: str) -> Iterator[str]:
    """A fresh database on the server, dropped afterwards."""
    name = f"adm_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    info = psycopg.conninfo.conninfo_to_dict(server)
    info["dbname"] = name
    try:
        yield psycopg.conninfo.make_conninfo(**info)
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def shop(url: str, rows: int) -> Store:
    """The shop with `rows` orders: finished ones over the past year, 200 later, 500 due."""
    app = load_app(SHOP)
    engine = make_engine(url)
    install_app(engine, app)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO settings DEFAULT VALUES")
        conn.execute(
            "INSERT INTO orders (status, due_at) SELECT 'done', "
            "%(now)s - make_interval(mins => 600 + g %% 525600) FROM generate_series(1, %(n)s) g",
            {"now": NOW, "n": rows - DUE - LATER},
        )
        add_due(conn, DUE)
        conn.execute(
            "INSERT INTO orders (status, due_at) SELECT 'placed', "
            "%(now)s + make_interval(mins => g) FROM generate_series(1, %(n)s) g",
            {"now": NOW, "n": LATER},
        )
        conn.execute("ANALYZE orders")
    return Store(engine, app, venue_zone("Europe/London"), connection="bench")


def add_due(conn: psycopg.Connection, count: int) -> None:
    conn.execute(
        "INSERT INTO orders (status, due_at) SELECT 'placed', "
        "%(now)s - make_interval(mins => g) FROM generate_series(1, %(n)s) g",
        {"now": NOW, "n": count},
    )


def timed(run: Callable[[], object], times: int) -> float:
    """The median milliseconds of `times` runs."""
    took = []
    for _ in range(times):
        start = time.perf_counter()
        run()
        took.append((time.perf_counter() - start) * 1000)
    return statistics.median(took)


def bench_find(server: str) -> None:
    found: dict[int, float] = {}
    for rows in (10_000, 100_000, 1_000_000):
        with database(server) as url:
            store = shop(url, rows)
            with store.engine.connect() as conn:

                def find(conn=conn, store=store) -> None:  # type: ignore[no-untyped-def]
                    due = find_due(conn, [store], now=NOW, limit=500)
                    assert len(due.due) == DUE

                find()
                found[rows] = timed(find, 7)
            store.engine.dispose()
        emit(bench="find", rows=rows, due=DUE, ms=round(found[rows], 2))
    emit(bench="find-ratio", ratio_1m_10k=round(found[1_000_000] / found[10_000], 2))


def bare_moves(conn: psycopg.Connection, keys: list[Any]) -> None:
    """The same writes the pipeline makes, one transaction per move, with no framework."""
    for key in keys:
        # The row, and an audit entry holding the row before and after (the self-join
        # reads the row as it was).
        with conn.transaction():
            before, after = conn.execute(
                "UPDATE orders o SET status = 'cancelled', cancel_code = 'late'"
                " FROM orders old WHERE o.id = %s AND old.id = o.id"
                " RETURNING to_jsonb(old), to_jsonb(o)",
                (key,),
            ).fetchone()  # type: ignore[misc]
            conn.execute(
                "INSERT INTO adminium.audit (at, actor, actor_kind, app, table_name,"
                " row_key, move_from, move_to, before, after) VALUES (%s, 'Timed move',"
                " 'clock', 'shop', 'orders', %s, 'placed', 'cancelled', %s, %s)",
                (NOW, str(key), Jsonb(before), Jsonb(after)),
            )


def due_keys(url: str) -> list[Any]:
    """Another 500 due rows, added for the bare loop; their keys, longest due first."""
    with psycopg.connect(url, autocommit=True) as conn:
        add_due(conn, DUE)
        return [
            r[0]
            for r in conn.execute(
                "SELECT id FROM orders WHERE status = 'placed' AND due_at <= %s ORDER BY due_at",
                (NOW,),
            )
        ]


def clocked(run: Callable[[], object]) -> tuple[float, float]:
    """Wall seconds and this process's CPU seconds of one run."""
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def bench_moves(server: str) -> None:
    with database(server) as url:
        store = shop(url, 10_000)
        report: list[Any] = []
        sweep_s, sweep_cpu = clocked(
            lambda: report.append(sweep_connection([store], connection="bench", now=NOW))
        )
        assert len(report[0].moved) == DUE, report[0].outcome
        keys = due_keys(url)
        # Autocommit, so each `transaction()` is a BEGIN ... COMMIT of its own, as each
        # timed move is (inside an open transaction it would only be a savepoint).
        with psycopg.connect(url, autocommit=True) as conn:
            bare_s, bare_cpu = clocked(lambda: bare_moves(conn, keys))
        store.engine.dispose()
    sweep_rate, bare_rate = DUE / sweep_s, len(keys) / bare_s
    emit(
        bench="moves",
        rows=DUE,
        sweep_per_s=round(sweep_rate),
        bare_psycopg_per_s=round(bare_rate),
        ratio=round(sweep_rate / bare_rate, 2),
        sweep_cpu_ms_per_move=round(sweep_cpu * 1000 / DUE, 3),
        bare_cpu_ms_per_move=round(bare_cpu * 1000 / len(keys), 3),
    )


def bench_idle(server: str) -> None:
    with database(server) as url:
        store = shop(url, 10_000)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("UPDATE orders SET status = 'done' WHERE due_at <= %s", (NOW,))
        sweep_connection([store], connection="bench", now=NOW)
        ms = timed(lambda: sweep_connection([store], connection="bench", now=NOW), 30)
        store.engine.dispose()
    emit(bench="idle", ms=round(ms, 2), idle_connections_per_minute=int(60_000 / ms))


def main() -> None:
    server = os.environ.get("TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    bench_find(server)
    bench_moves(server)
    bench_idle(server)


if __name__ == "__main__":
    main()
