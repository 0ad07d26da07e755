"""Benchmark the outbox; prints JSON lines (not part of `make test`).

- reminders: the minute's reminder finding (`core.outbox.reminders.queue_reminders`) on an orders
  table of 10k and of 1M rows, side by side in one run. Each table holds the same rows
  near their send time (200 due now, 300 whose send time is still ahead within the
  48-hour max) and the rest long past or far ahead; the 1M : 10k ratio (want < 1.5). Both
  the minute that queues the 200 and an idle minute (all already queued) are timed.
- delivery: 1,000 queued emails drained (`services.outbox.drain`: one per transaction,
  claimed FOR UPDATE SKIP LOCKED, sent, its mark committed before the next claim: five
  round trips to PostgreSQL an email) to a local aiosmtpd server, against a bare smtplib
  loop sending the same 1,000 messages over one session in the same run; the throughput
  ratio drain : bare. (The batch drain this replaced, 200 a transaction, reached 0.73-0.90
  of bare at a load of 9-17; one per transaction 0.08-0.15 at the same load: the round
  trips, which a loaded machine makes slow.)

Run: TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \
     .venv/bin/python bench/outbox.py
"""

from __future__ import annotations

import os
import smtplib
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from aiosmtpd.controller import Controller

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import arguments, database, emit
from core.manifest.model import load_app
from core.outbox.reminders import queue_reminders
from core.store.install import install_app
from core.store.store import Store, make_engine
from core.time.clock import venue_zone
from services.outbox import drain
from services.smtp import SmtpConfig, build_message
from tests.integration.outbox_fixtures import free_port, mail_shop_manifest

NOW = datetime(2026, 6, 12, 12, 0, tzinfo=UTC)
DUE, AHEAD = 200, 300
EMAILS = 1000
SENDER = "bench@shop.example"


def shop(url: str, rows: int) -> Store:
    """The mail shop with `rows` orders: 200 due a reminder now (settings' 24 h lead), 300
    within the 48 h max but not yet due, the rest over the past year or beyond a week."""
    app = load_app(mail_shop_manifest())
    engine = make_engine(url)
    install_app(engine, app)
    rest = rows - DUE - AHEAD
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO settings DEFAULT VALUES")
        # One INSERT … SELECT: a third far ahead (8 days to a year), the rest passed.
        conn.execute(
            "INSERT INTO orders (status, due_at, email) SELECT 'done', CASE WHEN g %% 3 = 0"
            " THEN %(now)s + make_interval(hours => 200 + g %% 8000)"
            " ELSE %(now)s - make_interval(mins => 10 + g %% 525600) END, 'x@example.com'"
            " FROM generate_series(1, %(n)s) g",
            {"now": NOW, "n": rest},
        )
        # Due: moments 23 h 50 min to 24 h ahead, so 24 h before them has passed.
        conn.execute(
            "INSERT INTO orders (status, due_at, email) SELECT 'placed',"
            " %(now)s + make_interval(hours => 23, mins => 50 + g %% 10), 'due@example.com'"
            " FROM generate_series(1, %(n)s) g",
            {"now": NOW, "n": DUE},
        )
        conn.execute(
            "INSERT INTO orders (status, due_at, email) SELECT 'placed',"
            " %(now)s + make_interval(hours => 30 + g %% 17), 'ahead@example.com'"
            " FROM generate_series(1, %(n)s) g",
            {"now": NOW, "n": AHEAD},
        )
        conn.execute("ANALYZE orders")
    return Store(engine, app, venue_zone("Europe/London"), connection="bench")


def timed(run: Callable[[], Any], reset: Callable[[], None], repeat: int = 7) -> float:
    """The median milliseconds of `run`, each after `reset`."""
    took = []
    for _ in range(repeat):
        reset()
        started = time.perf_counter()
        run()
        took.append((time.perf_counter() - started) * 1000)
    return statistics.median(took)


def bench_reminders(server: str) -> None:
    """Both sizes measured turn about, so a busy moment of the machine falls on both."""
    sizes = (10_000, 1_000_000)
    took: dict[tuple[int, str], list[float]] = {(n, k): [] for n in sizes for k in ("q", "i")}
    with database(server) as small_url, database(server) as big_url:
        stores = dict(zip(sizes, (shop(small_url, sizes[0]), shop(big_url, sizes[1])), strict=True))
        conns = {n: store.engine.connect() for n, store in stores.items()}
        for conn in conns.values():
            conn.commit()
            # Settled first: the fresh table's own vacuum must not run under the timing.
            conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql(
                "VACUUM ANALYZE orders"
            )
        for _ in range(9):
            for n in sizes:
                conns[n].exec_driver_sql("DELETE FROM adminium.outbox")
                conns[n].commit()
                started = time.perf_counter()
                queued = queue_reminders(conns[n], [stores[n]], NOW)
                took[n, "q"].append((time.perf_counter() - started) * 1000)
                assert queued == DUE, "the bench's rows are not as meant"
                started = time.perf_counter()
                queue_reminders(conns[n], [stores[n]], NOW)
                took[n, "i"].append((time.perf_counter() - started) * 1000)
        for n, store in stores.items():
            conns[n].close()
            store.engine.dispose()
    median = {key: statistics.median(values) for key, values in took.items()}
    for n in sizes:
        queue_ms, idle_ms = round(median[n, "q"], 2), round(median[n, "i"], 2)
        emit(bench="reminders", rows=n, queued=DUE, queue_ms=queue_ms, idle_ms=idle_ms)
    emit(
        bench="reminders",
        ratio_queue_1m_to_10k=round(median[sizes[1], "q"] / median[sizes[0], "q"], 2),
        ratio_idle_1m_to_10k=round(median[sizes[1], "i"] / median[sizes[0], "i"], 2),
    )


class Sink:
    """An SMTP handler that takes every message."""

    def __init__(self) -> None:
        self.count = 0

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.count += 1
        return "250 OK"


def queue_emails(store: Store) -> None:
    with store.engine.begin() as conn:
        conn.exec_driver_sql("DELETE FROM adminium.outbox")
        conn.exec_driver_sql(
            "INSERT INTO adminium.outbox (app, table_name, row_key, producer, kind, address,"
            " subject, body, queued_at, send_at) SELECT 'mailshop', 'orders', g::text, 1,"
            " 'message', 'guest' || g || '@example.com', 'Your order ' || g || ' was cancelled',"
            " 'Your order ' || g || ' was cancelled because we closed.', %(now)s, %(now)s"
            " FROM generate_series(1, %(n)s) g",
            {"now": NOW, "n": EMAILS},
        )


def bench_delivery(server: str) -> None:
    sink = Sink()
    port = free_port()
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    controller.start()
    url = f"smtp://127.0.0.1:{port}"
    try:
        with database(server) as db_url:
            store = shop(db_url, DUE + AHEAD + 10)
            queue_emails(store)
            with store.engine.connect() as conn:
                rows = [
                    dict(r)
                    for r in conn.exec_driver_sql("SELECT * FROM adminium.outbox").mappings()
                ]
            messages = [(r["address"], build_message("bench", r, SENDER)) for r in rows]

            def bare() -> None:
                smtp = smtplib.SMTP("127.0.0.1", port)
                for address, message in messages:
                    smtp.send_message(message, SENDER, [address])
                smtp.quit()

            def drained() -> None:
                done = drain(store.engine, "bench", SmtpConfig(url, SENDER), clock=lambda: NOW)
                assert len(done.sent) == EMAILS, len(done.sent)

            bare_took, drain_took = [], []
            for _ in range(5):  # turn about, so a busy moment falls on both
                bare_took.append(timed(bare, lambda: None, repeat=1))
                drain_took.append(timed(drained, lambda: queue_emails(store), repeat=1))
            bare_ms, drain_ms = statistics.median(bare_took), statistics.median(drain_took)
            store.engine.dispose()
    finally:
        controller.stop()
    emit(
        bench="delivery",
        emails=EMAILS,
        bare_smtplib_per_s=round(EMAILS / bare_ms * 1000),
        drain_per_s=round(EMAILS / drain_ms * 1000),
        ratio_drain_to_bare=round(bare_ms / drain_ms, 2),
        received=sink.count,
    )


def main() -> None:
    arguments(__doc__)
    server = os.environ.get("TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    bench_reminders(server)
    bench_delivery(server)


if __name__ == "__main__":
    main()
