"""The sweep against other writers and failures: racing sweeps, hand edits, held rows,
the database going away, a worker killed mid-sweep, the deadline."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import psycopg
import sqlalchemy as sa

from core.sweep.report import SweepOutcome, SweepReport
from core.sweep.sweep import sweep_connection
from core.writes.pipeline import WriteResult
from tests.integration.pipeline_fixtures import at
from tests.integration.sweep_fixtures import SHOP, Shop

NOW = at("2026-05-04 12:00")
VIP_CONSTRAINT = (
    "ALTER TABLE orders ADD CONSTRAINT vip_stays"
    " CHECK (status <> 'cancelled' OR note IS DISTINCT FROM 'vip')"
)
ROOT = Path(__file__).resolve().parents[2]


def many(shop: Shop, count: int) -> list[int]:
    """`count` placed orders, each due a minute before the next, the last at NOW."""
    with shop.engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO orders (status, due_at) SELECT 'placed', "
                ":now - make_interval(mins => :count - g) FROM generate_series(1, :count) g"
            ),
            {"now": NOW, "count": count},
        )
        return list(conn.execute(sa.text("SELECT id FROM orders ORDER BY due_at")).scalars())


def race(shop: Shop, names: list[str]) -> list[SweepReport]:
    """Sweeps released at once, one per fence name; their reports."""
    gate = threading.Barrier(len(names))
    reports: list[SweepReport] = []

    def run(name: str) -> None:
        gate.wait()
        reports.append(sweep_connection([shop.store], connection=name, now=NOW))

    threads = [threading.Thread(target=run, args=(n,)) for n in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return reports


def test_two_sweeps_of_one_connection_released_at_once_move_each_row_once(shop: Shop) -> None:
    keys = many(shop, 200)
    reports = race(shop, ["shop", "shop"])
    assert sum(len(r.moved) for r in reports) == 200
    assert shop.audit_counts() == {str(k): 1 for k in keys}


def test_sweeps_past_a_failed_fence_still_move_each_row_once(shop: Shop) -> None:
    # Two fences of different names stand for a fence that failed: the row lock and the
    # re-read as held still keep every row to one move.
    keys = many(shop, 200)
    reports = race(shop, ["shop", "shop-elsewhere"])
    assert sum(len(r.moved) for r in reports) == 200
    assert shop.audit_counts() == {str(k): 1 for k in keys}


def test_row_re_dated_or_moved_by_hand_after_it_was_found_is_left_alone(shop: Shop) -> None:
    first = shop.order(NOW - timedelta(minutes=3))
    re_dated = shop.order(NOW - timedelta(minutes=2))
    by_hand = shop.order(NOW - timedelta(minutes=1))

    def meddle(result: WriteResult) -> None:
        # Between the candidate query and the next rows' locks, a person edits both.
        if result.key == first:
            shop.sql(
                "UPDATE orders SET due_at = :d WHERE id = :k",
                d=NOW + timedelta(hours=1),
                k=re_dated,
            )
            shop.sql("UPDATE orders SET status = 'done' WHERE id = :k", k=by_hand)

    report = shop.sweep(NOW, on_moved=meddle)
    assert [d.key for d in report.moved] == [first]
    assert [d.key for d in report.left_alone] == [re_dated, by_hand]
    assert (shop.status(re_dated), shop.status(by_hand)) == ("placed", "done")
    assert shop.audit_counts() == {str(first): 1}
    assert shop.records() == []


def test_row_held_in_another_transaction_is_not_set_aside_and_moves_next_minute(
    shop: Shop,
) -> None:
    held, free = shop.order(NOW - timedelta(minutes=2)), shop.order(NOW - timedelta(minutes=1))
    with shop.engine.connect() as other, other.begin():
        other.execute(sa.text("SELECT 1 FROM orders WHERE id = :k FOR UPDATE"), {"k": held})
        report = shop.sweep(NOW)
    assert ([d.key for d in report.conflicts], [d.key for d in report.moved]) == ([held], [free])
    assert shop.records() == []
    assert shop.sweeps()[-1]["conflicts"] == 1
    assert [d.key for d in shop.sweep(NOW + timedelta(minutes=1)).moved] == [held]


def test_database_gone_mid_sweep_stops_the_minute_and_set_aside_rows_stay(shop: Shop) -> None:
    shop.sql(VIP_CONSTRAINT)
    refused = shop.order(NOW - timedelta(minutes=3), note="vip")
    first, rest = shop.order(NOW - timedelta(minutes=2)), shop.order(NOW - timedelta(minutes=1))

    def stop_database(result: WriteResult) -> None:
        # Every session of the sweep ends, as when the server restarts under it.
        with psycopg.connect(shop.url, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )

    report = shop.sweep(NOW, on_moved=stop_database)
    assert report.outcome is SweepOutcome.stopped
    assert [d.key for d in report.moved] == [first]
    assert shop.status(rest) == "placed"
    assert [r["row_key"] for r in shop.records()] == [str(refused)]
    report = shop.sweep(NOW + timedelta(minutes=1))
    assert ([d.key for d in report.moved], report.outcome) == ([rest], SweepOutcome.done)


def test_sweep_stops_at_its_deadline_and_the_rest_go_next_minute(shop: Shop) -> None:
    keys = many(shop, 5)
    ticks = itertools.count(0.0, 10.0)  # each look at the clock is ten seconds later
    report = shop.sweep(NOW, deadline=50.0, clock=lambda: next(ticks))
    assert report.outcome is SweepOutcome.deadline
    assert [d.key for d in report.moved] + [d.key for d in report.left] == keys
    assert report.left
    assert [d.key for d in shop.sweep(NOW).moved] == [d.key for d in report.left]


WORKER = """
import json, sys, time
from core.time.clock import venue_zone
from core.manifest.model import load_app
from core.store.store import Store, make_engine
from core.sweep.sweep import sweep_connection
from tests.integration.pipeline_fixtures import at
url, manifest = sys.argv[1], json.loads(sys.argv[2])
store = Store(make_engine(url), load_app(manifest), venue_zone("Europe/London"), connection="shop")
sweep_connection([store], connection="shop", now=at("2026-05-04 12:00"),
                 on_moved=lambda result: time.sleep(0.02), lease=float(sys.argv[3]))
"""


def test_worker_killed_mid_sweep_leaves_no_half_moved_row(shop: Shop) -> None:
    keys = many(shop, 300)
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, shop.url, json.dumps(SHOP), "2.0"],
        cwd=ROOT,
        env=dict(os.environ),
    )
    try:
        deadline = time.monotonic() + 30
        while len(shop.audit()) < 20 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    audited = shop.audit_counts()
    assert 20 <= len(audited) < 300
    with shop.engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT id, status, cancel_code FROM orders")).all()
    for key, status, code in rows:
        # Moved with its `set` and its audit entry, or not at all.
        moved = audited.get(str(key), 0)
        assert (status, code, moved) in {("cancelled", "late", 1), ("placed", None, 0)}
    # The killed worker's lease (2 s here) runs out: the next sweep moves the rest.
    report = shop.sweep(NOW + timedelta(minutes=1))
    waited = time.monotonic() + 15
    while report.outcome is SweepOutcome.fenced and time.monotonic() < waited:
        time.sleep(0.2)
        report = shop.sweep(NOW + timedelta(minutes=1))
    assert len(report.moved) == 300 - len(audited)
    assert shop.audit_counts() == {str(k): 1 for k in keys}
