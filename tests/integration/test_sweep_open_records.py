"""A sweep records its minute as it starts and closes it as it ends; one
killed on its way (SIGKILL of its real process) is closed by the next sweep as "stopped:
the worker went away", its moves counted in the record and in "Moved in the last hour"."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from core.sweep.health import read_health
from core.sweep.report import SweepOutcome
from tests.integration.pipeline_fixtures import at
from tests.integration.sweep_fixtures import SHOP, Shop

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
NOW = at("2026-05-04 12:00")
KILLED_AFTER = 4
"""Rows the killed sweep moves before its process is killed."""

# A sweep that says when it has moved KILLED_AFTER rows, then waits to be killed.
KILLED = """
import json, sys, time
from core.time.clock import venue_zone
from core.manifest.model import load_app
from core.store.store import Store, make_engine
from core.sweep.sweep import sweep_connection
from tests.integration.pipeline_fixtures import at
url, manifest, after = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
store = Store(make_engine(url), load_app(manifest), venue_zone("Europe/London"), connection="shop")
moved = []
def on_moved(result):
    moved.append(result)
    if len(moved) == after:
        print("moved", flush=True)
        time.sleep(60)
sweep_connection([store], connection="shop", now=at("2026-05-04 12:00"), lease=1.0,
                 on_moved=on_moved)
"""


def test_a_killed_sweep_is_closed_by_the_next_one_with_its_moves_counted(shop: Shop) -> None:
    keys = [shop.order(NOW - timedelta(minutes=5 + i)) for i in range(10)]
    sweep = subprocess.Popen(
        [sys.executable, "-c", KILLED, shop.url, json.dumps(SHOP), str(KILLED_AFTER)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert sweep.stdout is not None
        assert sweep.stdout.readline().strip() == "moved"
        # While it runs: its minute is recorded, its moves so far counted.
        with shop.engine.connect() as conn:
            health = read_health(conn, "shop", NOW + timedelta(seconds=5))
        assert health.last is not None
        assert (health.last["outcome"], health.last["moved"]) == ("running", KILLED_AFTER)
        assert health.moved_last_hour == KILLED_AFTER
    finally:
        sweep.send_signal(signal.SIGKILL)
        sweep.wait(10)
        assert sweep.stdout is not None
        sweep.stdout.close()
    # A minute on, its worker has gone: the record says so, with the moves it made.
    with shop.engine.connect() as conn:
        health = read_health(conn, "shop", NOW + timedelta(seconds=61))
    assert health.last is not None
    assert (health.last["outcome"], health.last["error"]) == ("stopped", "the worker went away")
    assert (health.last["moved"], health.moved_last_hour) == (KILLED_AFTER, KILLED_AFTER)

    time.sleep(1.2)  # its 1 s lease runs out
    following = NOW + timedelta(minutes=1)
    report = shop.sweep(following)
    assert report.outcome is SweepOutcome.done
    assert len(report.moved) == len(keys) - KILLED_AFTER
    records = [(r["at"], r["outcome"], r["error"], r["moved"]) for r in shop.sweeps()]
    assert records == [
        (NOW, "stopped", "the worker went away", KILLED_AFTER),
        (following, "done", None, len(keys) - KILLED_AFTER),
    ]
    with shop.engine.connect() as conn:
        health = read_health(conn, "shop", following + timedelta(seconds=5))
    assert health.moved_last_hour == len(keys) == sum(shop.audit_counts().values())
