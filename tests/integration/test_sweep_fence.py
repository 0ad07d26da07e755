"""The sweep's fence is a lease: a frozen holder loses it, the next sweep takes over, and a
sweep turned away says who holds it and since when. Exactly once rests on the row locks:
a frozen-then-woken sweep races the one that took over."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa

from core.sweep.fence import Fence
from core.sweep.report import SweepOutcome
from core.writes.pipeline import WriteResult
from tests.integration.sweep_fixtures import SHOP, Shop
from tests.integration.test_sweep_races import NOW, many

ROOT = Path(__file__).resolve().parents[2]

FROZEN = """
import json, sys, time
from core.time.clock import venue_zone
from core.manifest.model import load_app
from core.store.store import Store, make_engine
from core.sweep.sweep import sweep_connection
from tests.integration.pipeline_fixtures import at
url, manifest, lease = sys.argv[1], json.loads(sys.argv[2]), float(sys.argv[3])
store = Store(make_engine(url), load_app(manifest), venue_zone("Europe/London"), connection="shop")
report = sweep_connection([store], connection="shop", now=at("2026-05-04 12:00"), lease=lease,
                          on_moved=lambda result: time.sleep(0.02))
print(json.dumps({"outcome": report.outcome.value, "moved": [d.key for d in report.moved]}))
"""

# The move of one row takes a nap inside its UPDATE, so the sweep is frozen while it holds
# that row locked in an open transaction.
NAP = """
CREATE FUNCTION nap() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.id = {key} THEN PERFORM pg_sleep(0.3); END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER nap BEFORE UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION nap();
"""


def wait_until(found: Callable[[], bool], seconds: float) -> bool:
    """Whether `found` became true within `seconds` (looked at every 20 ms)."""
    deadline = time.monotonic() + seconds
    while not found():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def napping(shop: Shop) -> bool:
    """Whether a backend of the shop's database sleeps in the nap trigger."""
    with shop.engine.connect() as conn:
        return bool(
            conn.execute(
                sa.text(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND wait_event = 'PgSleep'"
                )
            ).scalar_one()
        )


def test_frozen_sweep_loses_its_fence_and_the_takeover_moves_each_row_once(
    shop: Shop, caplog: pytest.LogCaptureFixture
) -> None:
    keys = many(shop, 120)
    held = keys[19]
    shop.sql(NAP.format(key=held))
    frozen = subprocess.Popen(
        [sys.executable, "-c", FROZEN, shop.url, json.dumps(SHOP), "5.0"],
        cwd=ROOT,
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        text=True,
    )
    woken = False
    try:
        assert wait_until(lambda: napping(shop), 30)
        frozen.send_signal(signal.SIGSTOP)  # mid-move: row `held` locked, not committed
        # Turned away while the frozen sweep's lease runs: recorded and logged, with who.
        with caplog.at_level(logging.INFO, logger="core.sweep.sweep"):
            turned = shop.sweep(NOW + timedelta(minutes=1))
        holder = f"fence held by worker {socket.gethostname()}:{frozen.pid} since "
        assert turned.outcome is SweepOutcome.fenced
        assert turned.error is not None and turned.error.startswith(holder)
        assert f"sweep of connection shop skipped: {holder}" in caplog.text
        record = shop.sweeps()[-1]
        assert (record["outcome"], record["error"]) == ("fenced", turned.error)

        taker_moves: list[int] = []

        def wake_the_frozen(result: WriteResult) -> None:
            nonlocal woken
            taker_moves.append(result.key)
            if len(taker_moves) == 10:
                frozen.send_signal(signal.SIGCONT)  # it races the sweep that took over
                woken = True
            time.sleep(0.01)

        # Its lease (5 s here) runs out though it never woke: the next sweep takes over.
        report = turned
        deadline = time.monotonic() + 20
        while report.outcome is SweepOutcome.fenced and time.monotonic() < deadline:
            time.sleep(0.1)
            report = shop.sweep(NOW + timedelta(minutes=1), on_moved=wake_the_frozen)
        assert report.outcome is SweepOutcome.done
        assert woken
        out, _ = frozen.communicate(timeout=60)
    finally:
        if frozen.poll() is None:
            frozen.send_signal(signal.SIGCONT)
            frozen.kill()
            frozen.wait()
    first = json.loads(out)
    # Woken, it committed the move it held, then found its lease gone and stopped.
    assert first["outcome"] == SweepOutcome.fence_lost.value
    assert first["moved"] == keys[:20]
    # The sweep that took over found that row held, and moved every other.
    assert [d.key for d in report.conflicts] == [held]
    assert sorted(first["moved"] + [d.key for d in report.moved]) == keys
    assert shop.audit_counts() == {str(k): 1 for k in keys}


def test_a_lease_is_never_renewed_past_its_sweeps_deadline(shop: Shop) -> None:
    first = Fence("shop", deadline=1.0, lease=10.0, holder="worker one:1")
    second = Fence("shop", deadline=50.0, holder="worker two:2")
    with shop.engine.connect() as conn:
        assert first.acquire(conn)
        assert first.held(conn)
        assert not second.acquire(conn)
        assert second.turned_away_by is not None
        assert second.turned_away_by.name == "worker one:1"
        time.sleep(1.2)
        # Past its deadline, renewing fails and the fence is anyone's.
        assert not first.held(conn)
        assert second.acquire(conn)
        first.release(conn)  # no longer its own: left as it is
        assert not Fence("shop", deadline=50.0).acquire(conn)
        second.release(conn)
        assert Fence("shop", deadline=50.0).acquire(conn)


def test_a_database_installed_before_the_lease_gets_its_fence_table_at_the_first_sweep(
    shop: Shop,
) -> None:
    keys = many(shop, 3)
    shop.sql("DROP TABLE adminium.fences")
    report = shop.sweep(NOW)
    assert (report.outcome, [d.key for d in report.moved]) == (SweepOutcome.done, keys)
    with shop.engine.connect() as conn:
        kept = conn.execute(
            sa.text("SELECT relpersistence FROM pg_class WHERE oid = 'adminium.fences'::regclass")
        ).scalar_one()
    assert kept == "u"  # unlogged


def test_a_sweep_holds_one_session_for_its_fence_and_its_moves(shop: Shop) -> None:
    many(shop, 3)
    shop.engine.dispose()  # nothing pooled from the setup
    seen: list[int] = []

    def count_sessions(result: WriteResult) -> None:
        with psycopg.connect(shop.url, autocommit=True) as conn:
            found = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
            ).fetchone()
            seen.append(int(found[0]) if found else -1)

    report = shop.sweep(NOW, on_moved=count_sessions)
    assert len(report.moved) == 3
    assert seen == [1, 1, 1]
