"""The Procfile's worker, a real process with its default logging, says nothing in an idle
minute and says what happened in a busy one: a move, a row set aside (the spec's warning)
and an app's fault. Before, an idle minute printed RQ's four lines for each of its jobs
(the tick, the sweep, the drains: 12 lines here; about 20 with the demo's outbox and
webhooks), and a minute that moved rows said nothing of it.

A minute's jobs are enqueued as the clock enqueues them (`jobs.tick.enqueue_sweeps`), or
the sweep job alone for a later minute (a connection is swept once per minute), and the
test waits for the worker to have finished them, then reads what it printed."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
import redis
from psycopg import sql
from rq import Queue, Worker
from rq.exceptions import NoSuchJobError
from rq.job import Job

from jobs.sweep import minute_of, run_sweep, sweep_job_id
from jobs.tick import enqueue_sweeps
from services.apps import add_app
from services.connections import add_connection
from services.storage import engine_for, open_session, upgrade_control_plane
from tests.conftest import database_url_for
from tests.integration.launching import wait_for
from tests.integration.recovery_fixtures import (
    RedisOnPort,
    redis_on_port,
    start_procfile_process,
    stop_process,
    unique_name,
)
from tests.integration.sweep_fixtures import SHOP

pytestmark = pytest.mark.integration

RQ_JOB_LINE = re.compile(r"Job OK|Successfully completed|result is kept|result discarded")


@dataclass
class Worked:
    server: RedisOnPort
    log: Path
    venue: str
    name: str
    said: int = 0
    """How much of the log has been read."""

    def new_lines(self) -> list[str]:
        text = self.log.read_text()
        fresh, self.said = text[self.said :], len(text)
        return [line for line in fresh.splitlines() if line.strip()]

    def run(self, job: Callable[..., object], *args: object, then: Sequence[str] = ()) -> None:
        """Enqueue a job, and wait until it and the jobs `then` (by id: those it enqueues)
        have finished and the worker is idle again."""
        with redis.Redis.from_url(self.server.url) as client:
            queue = Queue("adminium", connection=client)
            first = queue.enqueue(job, *args)

            def finished(job_id: str) -> bool:
                found = Job.fetch(job_id, connection=client) if job_id else None
                return found is not None and found.get_status(refresh=True) == "finished"

            for job_id in (first.id, *then):
                wait_for(f"job {job_id} finished", lambda j=job_id: _exists_and(finished, j), 30)
            wait_for(
                "the worker idle",
                lambda: [w.get_state() for w in Worker.all(connection=client)] == ["idle"],
            )

    swept: datetime | None = None
    """The last minute `sweep_minute` swept."""

    def sweep_minute(self, minutes_on: int) -> None:
        """The connection's sweep job, named for a minute `minutes_on` from now (or the
        minute after the last one this swept, if later): a connection is swept once per
        minute. The sweep itself runs at the worker's clock (`jobs.sweep.run_sweep`)."""
        minute = minute_of(datetime.now(UTC)) + timedelta(minutes=minutes_on)
        if self.swept is not None and minute <= self.swept:
            minute = self.swept + timedelta(minutes=1)
        self.swept = minute
        self.run(run_sweep, self.name, minute.isoformat())


def _exists_and(check: Callable[[str], bool], job_id: str) -> bool:
    try:
        return check(job_id)
    except NoSuchJobError:
        return False


@pytest.fixture(scope="module")
def databases(server_database_url: str) -> Iterator[tuple[str, str]]:
    """A control plane's and a venue's database for the module; dropped afterwards."""
    names = [f"adm_test_{uuid.uuid4().hex[:12]}" for _ in range(2)]
    with psycopg.connect(server_database_url, autocommit=True) as conn:
        for name in names:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    control, venue = (database_url_for(server_database_url, name) for name in names)
    yield control, venue
    for url in (control, venue):
        engine_for(url).dispose()
    with psycopg.connect(server_database_url, autocommit=True) as conn:
        for name in names:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture(scope="module")
def worker(
    tmp_path_factory: pytest.TempPathFactory, databases: tuple[str, str]
) -> Iterator[Worked]:
    """The Procfile's worker on a Redis of the module's own, one connection with the shop."""
    folder = tmp_path_factory.mktemp("quiet")
    control, venue = databases
    upgrade_control_plane(control)
    name = unique_name()
    with open_session(control) as session:
        add_connection(session, name, venue, "Europe/London")
        add_app(session, name, SHOP, create_tables=True)
    with psycopg.connect(venue, autocommit=True) as conn:
        conn.execute("INSERT INTO settings DEFAULT VALUES")
    with redis_on_port(folder) as server:
        log = folder / "worker.log"
        process = start_procfile_process(
            "worker", {"DATABASE_URL": control, "REDIS_URL": server.url}, log
        )
        try:
            with redis.Redis.from_url(server.url) as client:
                wait_for(
                    "the worker listens",
                    lambda: [w.get_state() for w in Worker.all(connection=client)] == ["idle"],
                )
            worked = Worked(server, log, venue, name)
            worked.new_lines()  # its start: "started with PID …", "Listening on adminium"
            yield worked
        finally:
            stop_process(process)


def add_due_order(venue: str) -> None:
    with psycopg.connect(venue, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO orders (status, due_at) VALUES ('placed', %s)",
            (datetime.now(UTC) - timedelta(minutes=5),),
        )


def test_an_idle_minute_prints_nothing(worker: Worked) -> None:
    # A tick that runs as its minute begins, as the clock's does: one enqueued in a minute's
    # last seconds runs after its sweeps may start (WAIT_SECONDS) and says it came late.
    wait_for("a minute's first half", lambda: datetime.now(UTC).second < 30, 35)
    minute = minute_of(datetime.now(UTC))
    worker.run(
        enqueue_sweeps,
        then=(sweep_job_id(worker.name, minute), f"adminium-drains-{minute:%Y%m%dT%H%MZ}"),
    )
    with psycopg.connect(worker.venue) as conn:
        swept = conn.execute("SELECT count(*) FROM adminium.sweeps").fetchone()
    assert swept is not None and swept[0] == 1  # the tick's sweep ran, and the drains
    assert worker.new_lines() == []


def test_a_minute_that_moves_a_row_says_so(worker: Worked) -> None:
    add_due_order(worker.venue)
    worker.sweep_minute(1)
    lines = worker.new_lines()
    assert len(lines) == 1, lines
    assert re.fullmatch(
        rf"\d\d:\d\d:\d\d INFO core\.sweep\.sweep: sweep of connection {worker.name}: done,"
        r" gave back 0, moved 1, set aside 0, conflicts 0, left 0, [\d.]+ ms",
        lines[0],
    ), lines


def test_a_row_set_aside_prints_the_specs_warning(worker: Worked) -> None:
    with psycopg.connect(worker.venue, autocommit=True) as conn:
        conn.execute(
            "ALTER TABLE orders ADD CONSTRAINT never_cancelled CHECK (status <> 'cancelled')"
            " NOT VALID"
        )
    add_due_order(worker.venue)
    worker.sweep_minute(2)
    lines = worker.new_lines()
    assert not [line for line in lines if RQ_JOB_LINE.search(line)], lines
    warned = [line for line in lines if "timed move refused; left alone for an hour" in line]
    assert len(warned) == 1, lines
    assert " WARNING core.store.set_aside: timed move refused; left alone for an hour:" in warned[0]
    assert f"connection={worker.name} table=shop.orders" in warned[0]
    assert "code=VALUE_REFUSED" in warned[0]
    assert any("moved 0, set aside 1" in line for line in lines), lines


def test_an_apps_fault_is_said(worker: Worked) -> None:
    with psycopg.connect(worker.venue, autocommit=True) as conn:
        conn.execute("ALTER TABLE orders RENAME COLUMN due_at TO due_when")
    worker.sweep_minute(3)
    said = worker.new_lines()
    # In a minute whose sweep reads the tables' fingerprints (`FINGERPRINT_EVERY`, by the
    # worker's clock: one in five), the changed tables (this test's renamed column, the
    # last one's CHECK) are also compared and said at INFO; in the others not yet.
    compared = [line for line in said if " INFO services.agreement: " in line]
    assert len(compared) <= 1, said
    for line in compared:
        assert f"app shop on connection {worker.name}: tables disagree" in line, said
    lines = [line for line in said if line not in compared]
    # The fault, at ERROR naming the app, and the minute's line saying the sweep stopped.
    assert len(lines) == 2, said
    assert " ERROR core.sweep.faults: " in lines[0] and "app shop stopped this minute" in lines[0]
    assert f"sweep of connection {worker.name}: stopped," in lines[1], lines
