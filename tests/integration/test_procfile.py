"""`adminium run` brings up web, worker and clock on the embedded servers, and stops them all
(the harness: tests/integration/launching.py)."""

from __future__ import annotations

import signal
from collections.abc import Callable

import psycopg
import pytest
from rq import Queue, Worker
from rq.cron import CronScheduler

from adminium.demo import DEMO_EMAIL, DEMO_PASSWORD
from tests.integration.launching import Launch, wait_for

pytestmark = pytest.mark.integration


def test_ctrl_c_stops_web_worker_clock_and_both_servers(launch: Callable[[], Launch]) -> None:
    run = launch()
    page = run.wait_until_up()
    assert "Adminium is up" in page
    # Signed in, the web names the embedded servers of THIS folder, and both answer.
    with run.sign_in(DEMO_EMAIL, DEMO_PASSWORD).open(run.url("/status"), timeout=10) as reply:
        page = reply.read().decode()
    assert f"host={run.folder}/pg" in page and "PostgreSQL 1" in page
    assert "unix://" in page and "Redis 6" in page
    assert "does not answer" not in page
    # The worker and the clock share the web's Redis; the worker runs the minute tick.
    client = run.redis()
    wait_for("a worker registered", lambda: len(Worker.all(connection=client)) == 1)
    wait_for("the clock registered", lambda: len(CronScheduler.all(connection=client)) == 1)
    job = Queue("adminium", connection=client).enqueue("jobs.tick.enqueue_sweeps")
    wait_for("the worker ran the tick", lambda: job.get_status(refresh=True) == "finished")
    run.note_processes()
    client.close()

    code = run.stop(signal.SIGINT, group=True)

    assert code == 128 + signal.SIGINT, run.log_tail()
    assert run.leftovers() == [], run.log_tail()
    assert "Adminium stopped." in run.log_tail()
    # Every process stopped quietly: gunicorn's gevent worker printed a SystemExit
    # traceback ("failed with SystemExit") on Ctrl-C.
    log = run.log.read_text(errors="replace")
    assert "Traceback" not in log and "failed with SystemExit" not in log, run.log_tail()


def test_sigterm_stops_everything_and_the_data_stays_for_the_next_run(
    launch: Callable[[], Launch],
) -> None:
    first = launch()
    first.wait_until_up()
    with psycopg.connect(first.database_url(), autocommit=True) as conn:
        conn.execute("create table kept (note text)")
        conn.execute("insert into kept values ('from the first run')")
    client = first.redis()
    client.set("adminium:test:kept", "from the first run")
    client.close()
    first.note_processes()

    # A supervisor's SIGTERM reaches the launcher alone.
    assert first.stop(signal.SIGTERM, group=False) == 128 + signal.SIGTERM
    assert first.leftovers() == [], first.log_tail()

    second = launch()
    second.wait_until_up()
    with psycopg.connect(second.database_url()) as conn:
        assert conn.execute("select note from kept").fetchall() == [("from the first run",)]
    client = second.redis()
    assert client.get("adminium:test:kept") == b"from the first run"
    client.close()
    second.note_processes()

    # `kill -INT` on the launcher alone behaves as Ctrl-C on the terminal.
    assert second.stop(signal.SIGINT, group=False) == 128 + signal.SIGINT
    assert second.leftovers() == [], second.log_tail()
