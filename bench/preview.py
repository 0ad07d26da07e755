"""Benchmark `preview` on PostgreSQL: its cost on an orders table of 10k and of 1M rows,
the same change touching the same rows; prints JSON lines (not part of `make test`).

The diner of tests/integration/preview_fixtures.py, on a fresh control plane and venue
database per size: `rows` orders, of which 200 are placed for Friday 2026-10-23 (the
change's day) and the rest collected long ago or placed for months ahead (beyond the
preview's 8 days). The change: Friday's closing 23:00 -> 21:00, read at 20:30Z that day
(200 rows due at once). Also a change no rule reads near (offer_minutes, no offers open):
what a preview costs when it touches nothing. Each figure is the median of 7 runs; the
1M : 10k ratio is printed last (baseline: the 10k run, same process, same machine).

Run: TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \
     .venv/bin/python bench/preview.py
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import arguments
from services.preview import parse_set, preview_values
from services.storage import engine_for, open_session
from tests.conftest import database_url_for
from tests.integration.preview_fixtures import build_diner

NOW = datetime(2026, 10, 23, 20, 30, tzinfo=UTC)
NEAR = 200
RUNS = 7

_FILL = """
INSERT INTO diner.orders (email, pickup_at, status)
SELECT 'x@example.com',
       CASE WHEN n %% 2 = 0 THEN %(old)s::timestamptz - n * interval '1 second'
            ELSE %(later)s::timestamptz + n * interval '1 second' END,
       CASE WHEN n %% 2 = 0 THEN 'collected' ELSE 'placed' END
FROM generate_series(1, %(count)s) AS n
"""


def emit(**figures: object) -> None:
    print(json.dumps(figures), flush=True)


def median_ms(run: Any) -> tuple[float, Any]:
    times, answer = [], None
    for _ in range(RUNS):
        started = time.perf_counter()
        answer = run()
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 2), answer


def one_size(server: str, rows: int) -> dict[str, float]:
    names = [f"adm_bench_{uuid.uuid4().hex[:10]}" for _ in range(2)]
    with psycopg.connect(server, autocommit=True) as conn:
        for name in names:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    control, venue = (database_url_for(server, name) for name in names)
    try:
        diner = build_diner(control, venue)
        with diner.engine.begin() as conn:
            conn.exec_driver_sql(
                _FILL,
                {
                    "old": "2025-01-01T12:00:00+00:00",
                    "later": "2027-01-01T12:00:00+00:00",
                    "count": rows - NEAR,
                },
            )
            conn.exec_driver_sql(
                "INSERT INTO diner.orders (email, pickup_at, status) SELECT 'n@example.com',"
                " '2026-10-23T12:00:00+00:00'::timestamptz + n * interval '1 second', 'placed'"
                f" FROM generate_series(1, {NEAR}) AS n"
            )
            conn.exec_driver_sql("ANALYZE diner.orders")
        figures: dict[str, float] = {}
        with open_session(control) as session:
            for case, change in (
                ("closing", "opening_hours[weekday=fri].closes=21:00"),
                ("untouched", "diner.settings.offer_minutes=30"),
            ):
                ms, found = median_ms(
                    lambda change=change: preview_values(
                        session, "diner", [parse_set(change)], now=NOW
                    )
                )
                session.rollback()
                emit(
                    bench="preview",
                    case=case,
                    rows=rows,
                    due_at_once=len(found.due_at_once),
                    listed=len(found.changes),
                    ms=ms,
                )
                figures[case] = ms
        diner.dispose()
        return figures
    finally:
        for url in (control, venue):
            engine_for(url).dispose()
        with psycopg.connect(server, autocommit=True) as conn:
            for name in names:
                conn.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )


def main() -> None:
    arguments(__doc__)
    server = os.environ.get("TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    small = one_size(server, 10_000)
    large = one_size(server, 1_000_000)
    for case in small:
        emit(
            bench="preview",
            case=case,
            ratio_1m_to_10k=round(large[case] / small[case], 2),
            ms_10k=small[case],
            ms_1m=large[case],
        )


if __name__ == "__main__":
    main()
