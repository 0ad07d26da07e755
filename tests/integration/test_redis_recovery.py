"""A Redis outage across a minute boundary, with the Procfile's real worker
and clock on a redis-server of the test's own. Rows that fell due while Redis was away move
soon after it answers (bounded wait: 30 s; bench/recovery.py measures the delay), each once;
neither process exits, and neither pauses more than a few seconds between its tries."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
import redis
from rq import Worker
from rq.cron import CronScheduler

from jobs.worker import REDIS_PAUSE
from services.apps import add_app
from services.connections import add_connection
from services.storage import engine_for, open_session, upgrade_control_plane
from tests.integration.launching import wait_for
from tests.integration.recovery_fixtures import (
    cancelled_orders,
    next_boundary,
    orders_due_across,
    redis_on_port,
    sleep_until,
    start_procfile_process,
    stop_process,
    unique_name,
)
from tests.integration.sweep_fixtures import SHOP

pytestmark = pytest.mark.integration

ROWS = 12
"""Orders that fall due while Redis is away."""


SETUP_SECONDS = 6
"""About how long the databases, the app and the two processes take to be ready."""


def test_rows_due_during_a_redis_outage_move_once_soon_after_it_answers(
    tmp_path: Path, make_database: Callable[[], str]
) -> None:
    # Redis goes 2 s before a minute boundary and comes back 3 s after it: the boundary's
    # tick cannot be enqueued meanwhile. The boundary is chosen first, so that setting up
    # takes part of the wait for it.
    boundary = next_boundary(SETUP_SECONDS)
    control, venue = make_database(), make_database()
    upgrade_control_plane(control)
    name = unique_name()
    with open_session(control) as session:
        add_connection(session, name, venue, "Europe/London")
        add_app(session, name, SHOP, create_tables=True)
    with redis_on_port(tmp_path) as server:
        env = {"DATABASE_URL": control, "REDIS_URL": server.url}
        logs = {p: tmp_path / f"{p}.log" for p in ("worker", "clock")}
        processes = {p: start_procfile_process(p, env, log) for p, log in logs.items()}
        try:
            client = redis.Redis.from_url(server.url)
            wait_for("the worker registered", lambda: len(Worker.all(connection=client)) == 1)
            wait_for("the clock registered", lambda: len(CronScheduler.all(connection=client)) == 1)
            client.close()
            if boundary - datetime.now(UTC) < timedelta(seconds=3):
                boundary = next_boundary(3)  # setting up took longer than the wait
            orders_due_across(venue, boundary, ROWS)
            sleep_until(boundary - timedelta(seconds=2))
            server.stop()
            sleep_until(boundary + timedelta(seconds=3))
            answered = server.start()

            def moved() -> int:
                return cancelled_orders(venue)

            wait_for("a row due during the outage moved", lambda: moved() > 0, 30)
            first = time.monotonic() - answered
            wait_for("every row due during the outage moved", lambda: moved() == ROWS, 30)
            for process, log in logs.items():
                assert processes[process].poll() is None, log.read_text()
        finally:
            for process in processes.values():
                stop_process(process)

    print(f"first move {first:.1f} s after Redis answered")
    with psycopg.connect(venue) as conn:
        audited = conn.execute(
            "SELECT row_key, count(*) FROM adminium.audit"
            " WHERE actor_kind = 'clock' AND move_to = 'cancelled' GROUP BY row_key"
        ).fetchall()
        left = conn.execute("SELECT count(*) FROM orders WHERE status = 'placed'").fetchone()
    assert sorted(count for _, count in audited) == [1] * ROWS  # 0 double, 0 lost
    assert left == (1,)  # the order due in an hour stays
    # Both saw Redis go and tried again every few seconds, never after a growing pause.
    worker_pauses = re.findall(r"retrying in (\d+) seconds", logs["worker"].read_text())
    clock_pauses = re.findall(r"trying again in (\d+) s", logs["clock"].read_text())
    assert worker_pauses and clock_pauses, logs["worker"].read_text()
    assert max(int(p) for p in worker_pauses + clock_pauses) <= REDIS_PAUSE
    engine_for(control).dispose()
    engine_for(venue).dispose()
