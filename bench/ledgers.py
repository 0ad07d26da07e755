"""Benchmark limits and give-backs on PostgreSQL; prints JSON lines (not part of `make test`).

- limit: the limit check (advisory lock, the one count query, the held rows' moments) on
  a group of 1,000 counting rows, half of them held: p50 and p95 in milliseconds, inside
  the write's transaction, against the same transaction with no limit check.
- give-backs: give-backs per second of a 500-hold sweep, against a bare psycopg loop
  making the same updates and inserts (account, entry, posting record, row and audit) in
  a transaction of its own per hold, in the same run: three rounds taken turn about, and
  their median ratio.

Run: TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \
     .venv/bin/python bench/ledgers.py
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
from psycopg import sql

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.actors import Actor
from core.clock import venue_zone
from core.limits import judge_limits
from core.manifest.model import load_app
from core.store import Store, install_app, make_engine
from core.sweep import sweep_connection
from core.writes import WriteRequest, create_row
from tests.integration.ledger_fixtures import TILL

SLOT = datetime(2026, 6, 12, 12, tzinfo=UTC)
NOON = datetime(2026, 6, 12, 11, tzinfo=UTC)
SERVER = os.environ.get("TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


def emit(figures: dict[str, object]) -> None:
    print(json.dumps(figures), flush=True)


def database() -> str:
    name = f"adm_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(SERVER, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    info = psycopg.conninfo.conninfo_to_dict(SERVER)
    return psycopg.conninfo.make_conninfo(**{**info, "dbname": name})


def drop(url: str) -> None:
    name = psycopg.conninfo.conninfo_to_dict(url)["dbname"]
    with psycopg.connect(SERVER, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def store_on(url: str) -> Store:
    app = load_app(TILL)
    engine = make_engine(url)
    install_app(engine, app)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO settings (slot_capacity, card_max) VALUES (5000, 1000000)")
    return Store(engine, app, venue_zone("Europe/London"), connection="bench")


def bench_limit(url: str) -> None:
    store = store_on(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO orders (status, pickup_at) SELECT CASE WHEN i %% 2 = 0 THEN 'placed'"
            " ELSE 'confirmed' END, %s FROM generate_series(1, 1000) i",
            (SLOT,),
        )
        conn.execute("CREATE INDEX ON orders (pickup_at)")
    after = {"status": "placed", "pickup_at": SLOT}
    timed: dict[str, list[float]] = {"limit": [], "none": []}
    for round_ in range(400):
        side = "limit" if round_ % 2 == 0 else "none"
        with store.engine.begin() as conn:
            started = time.perf_counter()
            if side == "limit":
                judge_limits(
                    conn, store, "orders", None, after, key=None, actor=Actor.person("b"), now=NOON
                )
            else:
                conn.exec_driver_sql("SELECT 1")
            timed[side].append((time.perf_counter() - started) * 1000)
    for side, values in timed.items():
        values = values[20:]  # warm
        p95 = statistics.quantiles(values, n=20)[18]
        print(
            json.dumps(
                {
                    "bench": "limit-1000",
                    "side": side,
                    "p50_ms": round(statistics.median(values), 3),
                    "p95_ms": round(p95, 3),
                }
            )
        )
    store.engine.dispose()


def bench_give_backs(url: str, holds: int = 500, rounds: int = 3) -> None:
    store = store_on(url)
    with psycopg.connect(url, autocommit=True) as conn:
        card = conn.execute(
            "INSERT INTO gift_cards (balance) VALUES (100000) RETURNING id"
        ).fetchone()[0]
    ratios, rates = [], []
    for round_ in range(rounds):
        keys = [
            create_row(
                store,
                WriteRequest(
                    "orders",
                    Actor.person("b"),
                    NOON,
                    values={
                        "pickup_at": SLOT + timedelta(minutes=15 * (i % 40)),
                        "gift_card_id": card,
                        "card_paid": 1,
                    },
                ),
            ).key
            for i in range(holds)
        ]
        # Turn about, so a busy spell of the machine does not land on one side only.
        if round_ % 2 == 0:
            ours, bare = _sweep_rate(store, holds), _bare_rate(url, card, keys)
        else:
            bare, ours = _bare_rate(url, card, keys), _sweep_rate(store, holds)
        ratios.append(ours / bare)
        rates.append((ours, bare))
        emit(
            {
                "bench": "give-backs-500",
                "round": round_ + 1,
                "ours_per_s": round(ours, 1),
                "bare_per_s": round(bare, 1),
                "ratio": round(ours / bare, 3),
            }
        )
    # The best round of each side, too: on a busy machine the quietest spell is the truest.
    best = max(r[0] for r in rates) / max(r[1] for r in rates)
    emit(
        {
            "bench": "give-backs-500",
            "median_ratio": round(statistics.median(ratios), 3),
            "best_ratio": round(best, 3),
        }
    )
    store.engine.dispose()


def _sweep_rate(store: Store, holds: int) -> float:
    """Give-backs per second of one sweep over `holds` due holds."""
    later = SLOT + timedelta(days=2)
    started = time.perf_counter()
    report = sweep_connection([store], connection="bench", now=later)
    took = time.perf_counter() - started
    assert len(report.given_back) == holds, len(report.given_back)
    return holds / took


def _bare_rate(url: str, card: int, keys: list[int]) -> float:
    """The bare loop: the writes a give-back makes, five statements a hold (the account
    locked and read, its balance, its entry, the posting record, the row and its audit),
    one transaction each. A give-back makes them in four: the row locked with its
    posting record, the account locked, its balance with the entry and the record, the
    row with its audit."""
    with psycopg.connect(url) as conn:
        started = time.perf_counter()
        for key in keys:
            conn.execute(
                "SELECT balance FROM gift_cards WHERE id = %s FOR NO KEY UPDATE NOWAIT", (card,)
            )
            conn.execute("UPDATE gift_cards SET balance = balance - 1 WHERE id = %s", (card,))
            conn.execute(
                "INSERT INTO adminium.ledger_entries (app, ledger, account, amount, balance,"
                " table_name, row_key, posting, kind, actor, at) VALUES ('till', 'gift_cards',"
                " %s, -1, 0, 'orders', %s, 1, 'take', 'bench', now())",
                (str(card), str(key)),
            )
            conn.execute(
                "UPDATE adminium.postings SET status = 'held', at = now()"
                " WHERE app = 'till' AND table_name = 'orders' AND row_key = %s AND posting = 1",
                (str(key),),
            )
            # The audit entry as the product writes it: the row before and after.
            conn.execute(
                "WITH w AS (UPDATE orders SET card_paid = 0 WHERE id = %s RETURNING *)"
                " INSERT INTO adminium.audit"
                " (at, actor, actor_kind, app, table_name, row_key, before, after)"
                " SELECT now(), 'bench', 'clock', 'till', 'orders', w.id::text,"
                " (SELECT to_jsonb(o) FROM orders o WHERE o.id = %s), to_jsonb(w) FROM w",
                (key, key),
            )
            conn.commit()
        return len(keys) / (time.perf_counter() - started)


def main() -> None:
    for run in (bench_limit, bench_give_backs):
        url = database()
        try:
            run(url)
        finally:
            drop(url)


if __name__ == "__main__":
    main()
