"""Benchmark a timed move whose effect moves 50 linked rows and updates one total; prints
JSON lines (not part of `make test`).

- pipeline: `make_timed_move` of orders due, each cancelling itself and voiding its 50
  lines through the one pipeline (each line locked, judged, written with its audit entry
  and cause; the order's total recomputed once), one transaction per order.
- bare: a bare psycopg loop making the same writes in one transaction per order: the
  order's UPDATE and audit INSERT (the row before and after), each line's UPDATE and audit
  INSERT, and the total's UPDATE from the lines; in the same run, on the same database.
- ratio: pipeline moves per second over bare moves per second.

Run: TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \
     .venv/bin/python bench/effects.py
"""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import arguments, database, emit
from core.manifest.model import load_app
from core.store.install import install_app
from core.store.store import Store, make_engine
from core.time.clock import venue_zone
from core.writes.pipeline import make_timed_move

NOW = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)
LINES, ORDERS = 50, 40

APP: dict[str, Any] = {
    "name": "bench",
    "tables": {
        "orders": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "status", "type": "enum", "values": ["placed", "cancelled"]},
                {"ref": "due_at", "type": "timestamptz"},
                {
                    "ref": "total",
                    "type": "numeric",
                    "rules": {
                        "total": {
                            "table": "order_lines",
                            "via": "order_id",
                            "sum": "amount",
                            "where": {"column": "status", "values": ["open"]},
                        }
                    },
                },
            ],
            "states": {
                "column": "status",
                "initial": "placed",
                "moves": {
                    "placed": [
                        {
                            "to": "cancelled",
                            "effects": [{"table": "order_lines", "via": "order_id", "to": "void"}],
                        }
                    ]
                },
                "timed": [{"from": "placed", "to": "cancelled", "at": {"column": "due_at"}}],
            },
        },
        "order_lines": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "order_id", "type": "integer", "references": "orders"},
                {"ref": "amount", "type": "numeric"},
                {"ref": "status", "type": "enum", "values": ["open", "void"]},
            ],
            "states": {"column": "status", "initial": "open", "moves": {"open": ["void"]}},
        },
    },
}


def seed(conn: psycopg.Connection, orders: int) -> list[int]:
    """Orders due a minute ago, each with LINES open lines of 2.50; their keys."""
    keys = []
    for _ in range(orders):
        row = conn.execute(
            "INSERT INTO orders (status, due_at, total) VALUES ('placed', %s, %s) RETURNING id",
            (NOW - timedelta(minutes=1), 2.5 * LINES),
        ).fetchone()
        assert row is not None
        keys.append(row[0])
        conn.execute(
            "INSERT INTO order_lines (order_id, amount, status)"
            " SELECT %s, 2.50, 'open' FROM generate_series(1, %s)",
            (row[0], LINES),
        )
    conn.commit()
    return keys


def bare(conn: psycopg.Connection, keys: list[int]) -> None:
    """The same writes as the pipeline, one transaction per order, with no framework."""
    audit = (
        "INSERT INTO adminium.audit (at, actor, actor_kind, app, table_name, row_key,"
        " move_from, move_to, before, after, cause) VALUES (%s, 'Timed move', 'clock', 'bench',"
        " %s, %s, %s, %s, %s, %s, %s)"
    )
    for key in keys:
        with conn.transaction():
            before, after = conn.execute(
                "UPDATE orders o SET status = 'cancelled' FROM orders old"
                " WHERE o.id = %s AND old.id = o.id RETURNING to_jsonb(old), to_jsonb(o)",
                (key,),
            ).fetchone()  # type: ignore[misc]
            conn.execute(
                audit,
                (NOW, "orders", str(key), "placed", "cancelled", Jsonb(before), Jsonb(after), None),
            )
            lines = conn.execute(
                "SELECT id FROM order_lines WHERE order_id = %s AND status = 'open'"
                " ORDER BY id FOR UPDATE NOWAIT",
                (key,),
            ).fetchall()
            cause = Jsonb({"table": "orders", "key": key, "from": "placed", "to": "cancelled"})
            for (line,) in lines:
                before, after = conn.execute(
                    "UPDATE order_lines l SET status = 'void' FROM order_lines old"
                    " WHERE l.id = %s AND old.id = l.id RETURNING to_jsonb(old), to_jsonb(l)",
                    (line,),
                ).fetchone()  # type: ignore[misc]
                conn.execute(
                    audit,
                    (
                        NOW,
                        "order_lines",
                        str(line),
                        "open",
                        "void",
                        Jsonb(before),
                        Jsonb(after),
                        cause,
                    ),
                )
            conn.execute(
                "UPDATE orders SET total = (SELECT coalesce(sum(amount), 0) FROM order_lines"
                " WHERE order_id = %s AND status = 'open') WHERE id = %s",
                (key, key),
            )


def main() -> None:
    arguments(__doc__)
    server = os.environ.get("TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    with database(server) as url:
        app = load_app(APP)
        engine = make_engine(url)
        install_app(engine, app)
        store = Store(engine, app, venue_zone("Europe/London"), connection="bench")
        rule = app.tables["orders"].states.timed[0]  # type: ignore[union-attr]
        with psycopg.connect(url) as conn:
            warm, piped, plain = (seed(conn, n) for n in (3, ORDERS, ORDERS))
            for key in warm:
                make_timed_move(store, "orders", key, rule, now=NOW)
            started = time.perf_counter()
            for key in piped:
                make_timed_move(store, "orders", key, rule, now=NOW)
            pipeline = time.perf_counter() - started
            started = time.perf_counter()
            bare(conn, plain)
            baseline = time.perf_counter() - started
            voided = conn.execute(
                "SELECT count(*) FROM order_lines WHERE status = 'void'"
            ).fetchone()
            totals = conn.execute("SELECT DISTINCT total FROM orders").fetchall()
        engine.dispose()
    assert voided == ((3 + 2 * ORDERS) * LINES,) and totals == [(0,)], (voided, totals)
    emit(
        bench="effects",
        orders=ORDERS,
        lines_per_order=LINES,
        pipeline_ms_per_move=round(1000 * pipeline / ORDERS, 2),
        bare_ms_per_move=round(1000 * baseline / ORDERS, 2),
        pipeline_moves_per_s=round(ORDERS / pipeline, 1),
        bare_moves_per_s=round(ORDERS / baseline, 1),
        ratio=round(baseline / pipeline, 3),
    )


if __name__ == "__main__":
    main()
