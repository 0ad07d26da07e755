"""Benchmark the minute sweep on PostgreSQL; prints JSON lines (not part of `make test`).

- find: time to find the 500 due rows in an orders table of 10k / 100k / 1M rows
  (most rows long finished, 200 placed for later, 500 due); the 1M : 10k ratio.
- moves: moves per second of a full 500-row sweep, against a bare psycopg loop making
  the same UPDATE and audit INSERT (the row before and after, as the pipeline keeps it)
  in a transaction of its own per move (committed, as each timed move is), in the same
  run; and the CPU milliseconds this process spends per move on each side.
- idle: the cost of sweeping a connection with nothing due, in milliseconds.
- jobs (`--jobs`): what an idle connection's sweep job costs on one real worker started as
  the Procfile starts it, side by side in one run, three passes turn about: an empty RQ
  job (`os.getpid`, RQ's own bookkeeping: the floor of any job), the sweep of 10
  connections sharing one database (warm: their engine stays), the sweep of 24 connections
  each on its own database (more than ADMINIUM_WARM_ENGINES: cold, every sweep meets a
  database it is not connected to), and a bare psycopg loop in this process that connects
  to each of those 24 databases, runs one query and closes (the floor of visiting a
  database one is not connected to), and the same loop reading once each table an idle
  sweep visits (`IDLE_READS`: a new server session opens each table for the first time).
  Where Debian's PgBouncer is installed (`make pgbouncer`), a fourth kind, pooled: the
  sweeps of 24 more connections on those same 24 databases reached through a PgBouncer in
  transaction mode started by the bench, as docs/operations.md's production topology
  draws it; and the bare loop's reads through it (`bare_pooled_reads_ms`: a connect to
  PgBouncer and the reads, unprepared, in its warm server session: the floor of a pooled
  sweep beside RQ's own).
  Per pass: ms a job (first start to last end, over the jobs), each sweep's ratio to the
  empty job (`*_to_empty`, its cost; `*_rate_to_empty`, its throughput: issue 36's goal is
  0.5 for shared and pooled), the cold one's to both bare loops, and the cold job's floor
  (the empty job plus the bare loop's reads) to the bare loop.
  `--profile shared|own|pooled` runs the same jobs in a SweepWorker in this process under
  cProfile (`--sampler`: pyinstrument's sampling profiler, if installed) and prints where
  the time goes.
- parts (`--parts`): where an idle warm sweep job's time goes, in one process (a
  SweepWorker in burst mode, `--count` jobs a kind, `--passes` rounds turn about): an empty
  job, a warm idle sweep, the same sweep with its statements to the venue's database left
  out (`services.sweeps.sweep_connection` answering at once), and those statements alone
  (`core.sweep.sweep.sweep_connection` of one idle shop, outside RQ); ms a job.
- read (`--read`): a sweep job's read of the control plane (`services.apps.swept_apps` in
  the job's autocommitted session, its apps warm), ms a read, against the same read
  through the ORM (the statement built and run by the session, as it once was), turn
  about in one run.

Run: TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/sweep.py
     [--jobs [--passes 3] [--count 400] | --parts | --profile shared|own | --read [--passes 3]]
"""

from __future__ import annotations

import contextlib
import logging
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import database, emit
from core.manifest.model import load_app
from core.store.install import install_app
from core.store.store import Store, make_engine
from core.sweep.due import find_due
from core.sweep.sweep import sweep_connection
from core.time.clock import venue_zone
from tests.integration.sweep_fixtures import SHOP

ROOT = Path(__file__).resolve().parent.parent
NOW = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)
DUE, LATER = 500, 200


def shop(url: str, rows: int) -> Store:
    """The shop with `rows` orders: finished ones over the past year, 200 later, 500 due."""
    app = load_app(SHOP)
    engine = make_engine(url)
    install_app(engine, app)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO settings DEFAULT VALUES")
        conn.execute(
            "INSERT INTO orders (status, due_at) SELECT 'done', "
            "%(now)s - make_interval(mins => 600 + g %% 525600) FROM generate_series(1, %(n)s) g",
            {"now": NOW, "n": rows - DUE - LATER},
        )
        add_due(conn, DUE)
        conn.execute(
            "INSERT INTO orders (status, due_at) SELECT 'placed', "
            "%(now)s + make_interval(mins => g) FROM generate_series(1, %(n)s) g",
            {"now": NOW, "n": LATER},
        )
        conn.execute("ANALYZE orders")
    return Store(engine, app, venue_zone("Europe/London"), connection="bench")


def add_due(conn: psycopg.Connection, count: int) -> None:
    conn.execute(
        "INSERT INTO orders (status, due_at) SELECT 'placed', "
        "%(now)s - make_interval(mins => g) FROM generate_series(1, %(n)s) g",
        {"now": NOW, "n": count},
    )


def timed(run: Callable[[], object], times: int) -> float:
    """The median milliseconds of `times` runs."""
    took = []
    for _ in range(times):
        start = time.perf_counter()
        run()
        took.append((time.perf_counter() - start) * 1000)
    return statistics.median(took)


def bench_find(server: str) -> None:
    found: dict[int, float] = {}
    for rows in (10_000, 100_000, 1_000_000):
        with database(server) as url:
            store = shop(url, rows)
            with store.engine.connect() as conn:

                def find(conn=conn, store=store) -> None:  # type: ignore[no-untyped-def]
                    due = find_due(conn, [store], now=NOW, limit=500)
                    assert len(due.due) == DUE

                find()
                found[rows] = timed(find, 7)
            store.engine.dispose()
        emit(bench="find", rows=rows, due=DUE, ms=round(found[rows], 2))
    emit(bench="find-ratio", ratio_1m_10k=round(found[1_000_000] / found[10_000], 2))


def bare_moves(conn: psycopg.Connection, keys: list[Any]) -> None:
    """The same writes the pipeline makes, one transaction per move, with no framework."""
    for key in keys:
        # The row, and an audit entry holding the row before and after (the self-join
        # reads the row as it was).
        with conn.transaction():
            before, after = conn.execute(
                "UPDATE orders o SET status = 'cancelled', cancel_code = 'late'"
                " FROM orders old WHERE o.id = %s AND old.id = o.id"
                " RETURNING to_jsonb(old), to_jsonb(o)",
                (key,),
            ).fetchone()  # type: ignore[misc]
            conn.execute(
                "INSERT INTO adminium.audit (at, actor, actor_kind, app, table_name,"
                " row_key, move_from, move_to, before, after) VALUES (%s, 'Timed move',"
                " 'clock', 'shop', 'orders', %s, 'placed', 'cancelled', %s, %s)",
                (NOW, str(key), Jsonb(before), Jsonb(after)),
            )


def due_keys(url: str) -> list[Any]:
    """Another 500 due rows, added for the bare loop; their keys, longest due first."""
    with psycopg.connect(url, autocommit=True) as conn:
        add_due(conn, DUE)
        return [
            r[0]
            for r in conn.execute(
                "SELECT id FROM orders WHERE status = 'placed' AND due_at <= %s ORDER BY due_at",
                (NOW,),
            )
        ]


def clocked(run: Callable[[], object]) -> tuple[float, float]:
    """Wall seconds and this process's CPU seconds of one run."""
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def bench_moves(server: str) -> None:
    with database(server) as url:
        store = shop(url, 10_000)
        report: list[Any] = []
        sweep_s, sweep_cpu = clocked(
            lambda: report.append(sweep_connection([store], connection="bench", now=NOW))
        )
        assert len(report[0].moved) == DUE, report[0].outcome
        keys = due_keys(url)
        # Autocommit, so each `transaction()` is a BEGIN ... COMMIT of its own, as each
        # timed move is (inside an open transaction it would only be a savepoint).
        with psycopg.connect(url, autocommit=True) as conn:
            bare_s, bare_cpu = clocked(lambda: bare_moves(conn, keys))
        store.engine.dispose()
    sweep_rate, bare_rate = DUE / sweep_s, len(keys) / bare_s
    emit(
        bench="moves",
        rows=DUE,
        sweep_per_s=round(sweep_rate),
        bare_psycopg_per_s=round(bare_rate),
        ratio=round(sweep_rate / bare_rate, 2),
        sweep_cpu_ms_per_move=round(sweep_cpu * 1000 / DUE, 3),
        bare_cpu_ms_per_move=round(bare_cpu * 1000 / len(keys), 3),
    )


def bench_idle(server: str) -> None:
    with database(server) as url:
        store = shop(url, 10_000)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("UPDATE orders SET status = 'done' WHERE due_at <= %s", (NOW,))
        sweep_connection([store], connection="bench", now=NOW)
        ms = timed(lambda: sweep_connection([store], connection="bench", now=NOW), 30)
        store.engine.dispose()
    emit(bench="idle", ms=round(ms, 2), idle_connections_per_minute=int(60_000 / ms))


SHARED, OWN = 10, 24
"""The jobs bench's connections: 10 on one database (by schema), 24 each on its own (and
the same 24 databases again through PgBouncer)."""
KINDS = ("empty", "shared", "own", "pooled")
ROUNDS = 4
"""Each pass runs each kind's jobs in this many batches, turn about."""


class JobsWorld:
    """A control plane listing SHARED connections on one venue database (schemas s0..s9),
    OWN connections each on a database of its own, and, with `pooled` (a function giving a
    database's URL through PgBouncer), OWN more on those same databases through the pooler;
    every one an idle shop."""

    def __init__(self, server: str, pooled: Callable[[str], str] | None = None) -> None:
        self.server = server
        self.tag = uuid.uuid4().hex[:8]
        self.created: list[str] = []
        self.control = self._create("c")
        self.shared = self._create("s")
        self.own = [self._create(f"o{i}") for i in range(OWN)]
        self.pooled = [pooled(url) for url in self.own] if pooled else []
        self.names = {
            "shared": [f"s{i:02d}" for i in range(SHARED)],
            "own": [f"o{i:02d}" for i in range(OWN)],
            "pooled": [f"p{i:02d}" for i in range(len(self.pooled))],
        }

    def _create(self, suffix: str) -> str:
        name = f"adm_bench_{self.tag}_{suffix}"
        with psycopg.connect(self.server, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        self.created.append(name)
        info = psycopg.conninfo.conninfo_to_dict(self.server)
        info["dbname"] = name
        return psycopg.conninfo.make_conninfo(**info)

    def install(self) -> None:
        from services.storage import upgrade_control_plane

        upgrade_control_plane(self.control)
        rows: list[tuple[str, str, dict[str, Any]]] = []
        for index, name in enumerate(self.names["shared"]):
            rows.append((name, self.shared, {**SHOP, "schema": f"s{index}"}))
        for name, url in zip(self.names["own"], self.own, strict=True):
            rows.append((name, url, SHOP))
        for _, url, manifest in rows:
            engine = make_engine(url)
            app = load_app(manifest)
            install_app(engine, app)
            with engine.begin() as conn:
                conn.exec_driver_sql(f'INSERT INTO "{app.schema_name}".settings DEFAULT VALUES')
            engine.dispose()
        # The same databases through the pooler: installed directly above.
        rows += [
            (name, url, SHOP) for name, url in zip(self.names["pooled"], self.pooled, strict=True)
        ]
        with psycopg.connect(self.control) as conn:
            for name, url, manifest in rows:
                conn.execute(
                    "INSERT INTO adminium_control.connections (name, url, zone, paused)"
                    " VALUES (%s, %s, 'Europe/London', false)",
                    (name, url),
                )
                conn.execute(
                    "INSERT INTO adminium_control.apps (connection_id, name, manifest)"
                    " SELECT id, 'shop', %s FROM adminium_control.connections WHERE name = %s",
                    (Jsonb(manifest), name),
                )

    def drop(self) -> None:
        with psycopg.connect(self.server, autocommit=True) as conn:
            for name in self.created:
                conn.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )


def job_batch(kind: str, world: JobsWorld, count: int, tag: str) -> list[Any]:
    """`count` jobs of one kind as the queue takes them: empty jobs, or the sweeps of the
    kind's connections in turn (each with its own id, dated this minute as the tick does)."""
    from rq import Queue

    from jobs.sweep import JOB_TIMEOUT, minute_of, run_sweep

    minute = minute_of(datetime.now(UTC)).isoformat()
    if kind == "empty":
        return [
            Queue.prepare_data(os.getpid, (), job_id=f"bench-{tag}-{i}", result_ttl=600)
            for i in range(count)
        ]
    names = world.names[kind]
    return [
        Queue.prepare_data(
            run_sweep,
            (names[i % len(names)], minute),
            job_id=f"bench-{tag}-{i}",
            timeout=JOB_TIMEOUT,
            result_ttl=600,
        )
        for i in range(count)
    ]


def drained(queue: Any, ids: list[str], deadline: float) -> list[Any]:
    """Wait until every job of `ids` has ended (or failed); the jobs."""
    from rq.job import Job

    while time.monotonic() < deadline:
        if queue.count == 0 and queue.started_job_registry.count == 0:
            break
        time.sleep(0.2)
    return [j for j in Job.fetch_many(ids, connection=queue.connection) if j is not None]


def bare_visits(urls: list[str], count: int, reads: tuple[str, ...] = ("SELECT 1",)) -> float:
    """Milliseconds a visit of a bare psycopg loop: connect, the `reads` (one query by
    default), close."""
    start = time.perf_counter()
    for index in range(count):
        with psycopg.connect(urls[index % len(urls)], autocommit=True) as conn:
            for read in reads:
                conn.execute(read).fetchall()
    return (time.perf_counter() - start) * 1000 / count


IDLE_READS = (
    "SELECT until FROM adminium.fences WHERE connection = 'o00'",
    "SELECT id FROM adminium.sweeps WHERE connection = 'o00' AND outcome = 'running'",
    "SELECT coalesce(max(id), 0) FROM adminium.audit",
    "SELECT EXISTS (SELECT FROM adminium.set_aside WHERE app = 'shop')",
    "SELECT id, status, due_at FROM public.orders WHERE status = 'placed'"
    " AND due_at <= now() ORDER BY due_at, id LIMIT 500",
)
"""One read of each table an idle sweep of the shop must visit (the fence, the sweep's
records, the audit's last id, the set-aside records, the due rows; not the settings, which
its timed moment does not read): a new
server session opens each for the first time, the cold sweep's floor beside the connect."""


@contextmanager
def pooler(server: str) -> Iterator[Callable[[str], str] | None]:
    """Debian's PgBouncer in transaction mode in front of the server (as docs/operations.md's
    production topology draws it), giving a database's URL through it; None where it is
    not installed (`make pgbouncer`), the pooled kind then left out."""
    from tests.integration.pgbouncer_fixtures import PGBOUNCER, start_pgbouncer

    if not os.access(PGBOUNCER, os.X_OK):
        emit(bench="jobs", pooled="skipped: no pgbouncer (make pgbouncer installs it)")
        yield None
        return
    with start_pgbouncer(server, "transaction", pool_size=4) as bouncer:
        yield bouncer.url


class JobsPass:
    """One pass's spans, job times and failures per kind, and the bare loops beside them."""

    def __init__(self, kinds: tuple[str, ...]) -> None:
        self.kinds = kinds
        self.spans: dict[str, float] = dict.fromkeys(kinds, 0.0)
        self.inside: dict[str, list[float]] = {k: [] for k in kinds}
        self.done: dict[str, int] = dict.fromkeys(kinds, 0)
        self.failed: dict[str, int] = dict.fromkeys(kinds, 0)
        self.bare = self.bare_reads = self.bare_pooled = 0.0

    def run_batch(self, queue: Any, world: JobsWorld, kind: str, count: int, tag: str) -> None:
        """`count` jobs of one kind enqueued at once and drained by the worker."""
        batch = job_batch(kind, world, count, tag)
        queue.enqueue_many(batch)
        jobs = drained(queue, [d.job_id for d in batch], time.monotonic() + 300)
        ended = [j for j in jobs if j.ended_at is not None and j.started_at]
        lost = [j for j in jobs if j.get_status() == "failed"]
        if lost:
            print(lost[0].latest_result().exc_string, file=sys.stderr)
        self.failed[kind] += len(lost)
        self.spans[kind] += (
            max(j.ended_at for j in ended) - min(j.started_at for j in ended)
        ).total_seconds()
        self.inside[kind] += [(j.ended_at - j.started_at).total_seconds() for j in ended]
        self.done[kind] += len(ended)

    def figures(self, number: int) -> dict[str, Any]:
        """The pass as one JSON line: ms a job per kind, the cost ratios of the docs and
        the throughput ratios of issue 36 (an empty job's ms over the sweep's)."""
        found: dict[str, Any] = {"bench": "jobs", "pass": number}
        for kind in self.kinds:
            found[f"{kind}_ms"] = round(self.spans[kind] * 1000 / self.done[kind], 2)
            found[f"{kind}_inside_ms_p50"] = round(statistics.median(self.inside[kind]) * 1000, 2)
            found[f"{kind}_failed"] = self.failed[kind]
        found["bare_psycopg_ms"] = round(self.bare, 2)
        found["bare_idle_reads_ms"] = round(self.bare_reads, 2)
        if "pooled" in self.kinds:
            # The floor of a sweep through the pooler: a connect to PgBouncer and the idle
            # sweep's reads, unprepared, in its warm server session.
            found["bare_pooled_reads_ms"] = round(self.bare_pooled, 2)
        empty = found["empty_ms"]
        for kind in self.kinds[1:]:
            found[f"{kind}_per_worker_minute"] = int(60_000 / found[f"{kind}_ms"])
            found[f"{kind}_to_empty"] = round(found[f"{kind}_ms"] / empty, 2)
            found[f"{kind}_rate_to_empty"] = round(empty / found[f"{kind}_ms"], 2)
        found["own_to_bare"] = round(found["own_ms"] / found["bare_psycopg_ms"], 2)
        found["own_to_bare_idle_reads"] = round(found["own_ms"] / found["bare_idle_reads_ms"], 2)
        # The floor of a cold sweep job: RQ's own bookkeeping and the bare visit of the
        # tables it reads, beside the bare loop.
        found["own_floor_to_bare"] = round(
            (empty + found["bare_idle_reads_ms"]) / found["bare_psycopg_ms"], 2
        )
        if "pooled" in self.kinds:
            found["pooled_floor_rate_to_empty"] = round(
                empty / (empty + found["bare_pooled_reads_ms"]), 2
            )
        found["goal_rate_to_empty"] = 0.5
        found["load_1m"] = round(os.getloadavg()[0], 2)
        return found


def bench_jobs(server: str, passes: int, count: int) -> None:
    """An idle sweep job's cost in a real worker, each kind turn about (module docstring)."""
    from redis import Redis
    from rq import Queue, Worker

    from adminium.supervisor import read_procfile
    from bench.scale import start, stop
    from bench.scale_setup import redis_server
    from services.sweep_ledger import QUEUE

    with pooler(server) as through, redis_server() as redis_url:
        world = JobsWorld(server, through)
        kinds = KINDS if through else KINDS[:-1]
        client = Redis.from_url(redis_url)
        env = {
            **os.environ,
            "DATABASE_URL": world.control,
            "REDIS_URL": redis_url,
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        }
        workers = []
        try:
            world.install()
            queue = Queue(QUEUE, connection=client)
            workers = start([read_procfile(ROOT / "Procfile")["worker"]], env)
            ready = time.monotonic() + 60
            while Worker.count(queue=queue) < 1 and time.monotonic() < ready:
                time.sleep(0.2)
            # Warm-up: every connection swept once, so pass 1 is not the imports'.
            warm = [d for k in kinds[1:] for d in job_batch(k, world, OWN, f"warm-{k}")]
            queue.enqueue_many(warm)
            drained(queue, [d.job_id for d in warm], time.monotonic() + 120)
            for number in range(1, passes + 1):
                found = JobsPass(kinds)
                # Turn about in small batches, so the machine's other load falls on every
                # kind alike.
                for turn in range(ROUNDS):
                    for kind in kinds:
                        found.run_batch(
                            queue, world, kind, count // ROUNDS, f"{number}-{turn}-{kind}"
                        )
                    found.bare += bare_visits(world.own, count // ROUNDS) / ROUNDS
                    if world.pooled:
                        visits = bare_visits(world.pooled, count // ROUNDS, IDLE_READS)
                        found.bare_pooled += visits / ROUNDS
                    found.bare_reads += bare_visits(world.own, count // ROUNDS, IDLE_READS) / ROUNDS
                emit(**found.figures(number))
        finally:
            stop(workers)
            client.close()
            world.drop()


@contextmanager
def in_process_worker(server: str, pooled: bool = False) -> Iterator[tuple[JobsWorld, Any, Any]]:
    """The jobs world installed on a Redis of its own (with `pooled`, the pooled connections
    through a PgBouncer where one is installed), and a SweepWorker of this process on its
    queue: the world, the queue and the worker; all dropped after."""
    from redis import Redis
    from rq import Queue

    from bench.scale_setup import redis_server
    from jobs.worker import SweepWorker
    from services.storage import ENGINES
    from services.sweep_ledger import QUEUE

    with contextlib.ExitStack() as stack:
        through = stack.enter_context(pooler(server)) if pooled else None
        redis_url = stack.enter_context(redis_server())
        world = JobsWorld(server, through)
        try:
            world.install()
            os.environ["DATABASE_URL"] = world.control
            client = stack.enter_context(Redis.from_url(redis_url))
            queue = Queue(QUEUE, connection=client)
            yield world, queue, SweepWorker([queue], connection=client)
        finally:
            ENGINES.clear()
            world.drop()


def profile_jobs(server: str, kind: str, count: int, sampler: bool = False) -> None:
    """The jobs of one kind run by a SweepWorker in this process under cProfile (or, with
    `sampler`, pyinstrument's sampling profiler, whose cost does not grow with the calls
    made: `pip install pyinstrument` into the .venv)."""
    import cProfile
    import pstats

    with in_process_worker(server, pooled=True) as (world, queue, worker):
        queue.enqueue_many(job_batch(kind, world, 50, "warm"))
        worker.work(burst=True)
        queue.enqueue_many(job_batch(kind, world, count, "profiled"))
        if sampler:
            from pyinstrument import Profiler

            profiler = Profiler(interval=0.0002)
            start = time.perf_counter()
            profiler.start()
            worker.work(burst=True)
            profiler.stop()
        else:
            profile = cProfile.Profile()
            start = time.perf_counter()
            profile.enable()
            worker.work(burst=True)
            profile.disable()
        took = (time.perf_counter() - start) * 1000 / count
        emit(bench="profile", kind=kind, jobs=count, ms_a_job=round(took, 2))
        if sampler:
            print(profiler.output_text(unicode=False, show_all=False), file=sys.stderr)
        else:
            stats = pstats.Stats(profile, stream=sys.stderr)
            stats.sort_stats("cumulative").print_stats(60)
            stats.sort_stats("tottime").print_stats(30)


def bench_parts(server: str, passes: int, count: int) -> None:
    """An idle warm sweep job taken apart (`--parts`, module docstring)."""
    import services.sweeps
    from core.sweep.report import SweepOutcome, SweepReport

    def answered(stores: Any, *, connection: str, now: datetime, **_: Any) -> SweepReport:
        return SweepReport(connection, now, SweepOutcome.done)

    sweeping = services.sweeps.sweep_connection
    logging.getLogger("rq.worker").setLevel(logging.WARNING)  # the figures alone on stdout
    with in_process_worker(server) as (world, queue, worker), database(server) as url:

        def per_job(kind: str, tag: str, jobs: int = count) -> float:
            queue.enqueue_many(job_batch(kind, world, jobs, tag))
            start = time.perf_counter()
            worker.work(burst=True)
            return (time.perf_counter() - start) * 1000 / jobs

        # An idle shop of 10k rows, as `bench_idle` sweeps it, for the statements alone.
        store = shop(url, 10_000)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("UPDATE orders SET status = 'done' WHERE due_at <= %s", (NOW,))
        per_job("shared", "warm", 100), per_job("empty", "warm", 100)
        try:
            for n in range(1, passes + 1):
                empty = per_job("empty", f"e{n}")
                swept = per_job("shared", f"s{n}")
                services.sweeps.sweep_connection = answered  # type: ignore[assignment]
                try:
                    without = per_job("shared", f"w{n}")
                finally:
                    services.sweeps.sweep_connection = sweeping
                alone = timed(
                    lambda: sweep_connection(
                        [store], connection="parts", now=NOW, fingerprints=False
                    ),
                    count,
                )
                emit(
                    bench="parts",
                    **{"pass": n},
                    empty_ms=round(empty, 2),
                    shared_ms=round(swept, 2),
                    shared_without_venue_statements_ms=round(without, 2),
                    venue_statements_alone_ms=round(alone, 2),
                    venue_statements_in_job_ms=round(swept - without, 2),
                    rest_above_empty_ms=round(without - empty, 2),
                    load_1m=round(os.getloadavg()[0], 2),
                )
        finally:
            services.sweeps.sweep_connection = sweeping
            store.engine.dispose()


def bench_read(server: str, passes: int, count: int) -> None:
    """The control-plane read of a warm sweep job, against the same read through the ORM."""
    from sqlalchemy import select

    from services.apps import swept_apps
    from services.models import App, Connection
    from services.storage import ENGINES, reading_session

    def orm_read(session: Any, name: str) -> None:
        query = (
            select(Connection.paused, Connection.url, Connection.zone, App.id, App.updated_at)
            .outerjoin(App, App.connection_id == Connection.id)
            .where(Connection.name == name)
            .order_by(App.id)
        )
        session.execute(query).all()
        session.get_bind().url.render_as_string(hide_password=False)

    def timed(read: Callable[[Any, str], Any]) -> float:
        start = time.perf_counter()
        for i in range(count):
            with reading_session(world.control) as session:
                read(session, f"s{i % SHARED:02d}")
                session.rollback()
        return (time.perf_counter() - start) * 1000 / count

    world = JobsWorld(server)
    try:
        world.install()
        timed(swept_apps), timed(orm_read)  # warm: apps parsed, statements compiled
        for n in range(1, passes + 1):
            core, orm = timed(swept_apps), timed(orm_read)
            emit(
                bench="read",
                **{"pass": n},
                swept_apps_ms=round(core, 3),
                orm_read_ms=round(orm, 3),
                swept_apps_to_orm_read=round(core / orm, 2),
            )
    finally:
        ENGINES.clear()
        world.drop()


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", action="store_true")
    parser.add_argument("--read", action="store_true")
    parser.add_argument("--parts", action="store_true")
    parser.add_argument("--profile", choices=("shared", "own", "pooled", "empty"))
    parser.add_argument(
        "--sampler", action="store_true", help="with --profile: pyinstrument, not cProfile"
    )
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--count", type=int, default=400)
    options = parser.parse_args()
    server = os.environ.get("TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    if options.jobs:
        bench_jobs(server, options.passes, options.count)
        return
    if options.parts:
        bench_parts(server, options.passes, options.count)
        return
    if options.read:
        bench_read(server, options.passes, options.count * 5)
        return
    if options.profile:
        profile_jobs(server, options.profile, options.count, options.sampler)
        return
    bench_find(server)
    bench_moves(server)
    bench_idle(server)


if __name__ == "__main__":
    main()
