"""Sweeps at scale with real processes: the Procfile's clock and K workers (not `make test`).

For each run (N connections, K workers, idle or with due rows) the clock and workers are
started as the Procfile starts them, a few seconds before a minute begins; that minute
is watched to its end, then every figure is read from Redis and the venue databases.
Prints one JSON object per run: tick time, sweeps finished and dropped within the minute,
median / p95 job time (RQ's started -> ended), rows moved, moment -> move lag.

Run: TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/scale.py
     [--sizes 50,200,1000] [--workers 1,2] [--due 0,20]
     or --punctual: 1,000 connections on the workers docs/operations.md advises, 300 rows due at
     one minute spread over them (every row must move within 60 s: rows_late), without and
     with an outbox producer in every app (the tick then enqueues 1,000 drains).
     or --due-first: as --punctual (no drains), the processes started a minute early so
     that minute's sweeps leave their due hints; the watched minute once with the hints
     deleted just before its tick (the order as before: served longest ago first) and once
     with them (due first), turn about, twice. Goal: lag p95 <= 5 s with the hints. With
     --baseline DIR (a checkout of earlier code), that code's processes with the hints
     instead of this code without them, turn about with this code's. Each watched minute
     also says when the due sweeps reached the queue, started and ended (due_*_s).
     or --throughput N: K = 1 and 2 workers started as the Procfile does, then four
     minutes of N idle connections' sweeps, each enqueued at once by the tick's own enqueue
     once the one before has drained: per pass, jobs per second from the first job started
     to the last finished, and the CPU the workers, PostgreSQL and Redis used (2 cores
     here, shared by all); then the 2:1 ratio of each pass. Pass 1 is the workers' first
     minute (every manifest new to them). Each of two workers gets about half the sweeps of
     a minute, so it has met about 1/2, 3/4, 7/8 of the apps before passes 2, 3, 4 (one
     worker: all of them before pass 2): pass 4 is the steady minute.
     or --own N: N connections each on a database of its own (N databases made with unique
     names, dropped at the end) and N connections sharing 4 databases by schema, turn about
     for 1 and 2 workers started as the Procfile starts them: one idle minute watched
     (every connection swept within it, 0 dropped), then three throughput passes; prints
     connections per worker-minute (the last pass's jobs/s x 60 / workers) side by side.
     With --pgbouncer, a third arm between them: the same N own databases reached through
     Debian's PgBouncer in transaction mode (`make pgbouncer`); a server that takes fewer
     than N + 60 sessions is replaced, for every arm, by a PostgreSQL of the bench's own
     (the pgserver wheel's) that does, as PgBouncer keeps a server session per database.
     or --tick N: the tick's two parts at N connections in this process, 5 ticks: reading
     the names with minute work, enqueuing their sweeps (the first tick parses every
     manifest; the later ones only those saved since).
Each run takes about 80 s (it waits for a minute to begin); all stop by themselves.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psutil
from redis import Redis
from rq import Queue, Worker
from rq.job import Job
from rq.registry import FinishedJobRegistry

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale_setup import (
    DATABASES,
    ROOT,
    World,
    max_connections,
    private_server,
    redis_server,
    server_url,
)

from adminium.supervisor import read_procfile
from jobs.sweep import minute_of, sweep_job_id
from jobs.tick import enqueue_minute
from services.connections import connections_with_minute_work
from services.due_hints import HINTS
from services.storage import engine_for, open_session
from services.sweep_ledger import QUEUE, WAITING

LEAD = 12.0
"""Seconds before the watched minute the processes start (workers import, register)."""


def percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 3)


def start(
    commands: list[str], env: dict[str, str], code: Path = ROOT
) -> list[subprocess.Popen[bytes]]:
    """The commands in their own sessions, on the code in `code` (its folder first on the
    path: an editable install of another checkout would otherwise serve `rq worker`)."""
    env = {**env, "PYTHONPATH": str(code)}
    return [
        subprocess.Popen(
            ["/bin/sh", "-c", command],
            cwd=code,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        for command in commands
    ]


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)


def next_minute(lead: float) -> datetime:
    """The first minute that begins at least `lead` seconds from now."""
    now = datetime.now(UTC)
    minute = now.replace(second=0, microsecond=0) + timedelta(minutes=1)
    return minute if (minute - now).total_seconds() >= lead else minute + timedelta(minutes=1)


def advised_workers(connections: int, rows_due: int, own_databases: bool = False) -> int:
    """docs/operations.md, Running at scale: one worker per 1,500 idle connections sharing
    databases (800 on databases of their own reached directly), one more per ~5,000 rows
    due in the same minute, and never fewer than two."""
    per = 800 if own_databases else 1500
    return max(2, math.ceil(connections / per) + math.ceil(rows_due / 5000))


def run(
    world: World,
    size: int,
    workers: int,
    due: int,
    spread: int = 0,
    mail: bool = False,
    before: bool = False,
    hints: bool = True,
    code: Path = ROOT,
    through: Callable[[str], str] | None = None,
) -> dict[str, object]:
    """One watched minute. With `before`, the processes start a minute earlier, so the
    minute before it is swept too (the sweeps leave their due hints); without `hints`,
    the hints are deleted just before the watched minute's tick (the order as before)."""
    control = world.control(size, mail, through)
    world.reset(size)
    minute = next_minute(LEAD + 20 + (60 if before else 0))
    if due:
        # Due at the minute's first second and the 19 seconds before it: all due at its tick.
        world.add_due(size, due, [minute - timedelta(seconds=s) for s in range(due)])
    if spread:
        # Due at the minute itself, one a connection, spread over the whole queue.
        world.add_spread(size, spread, minute)
    procfile = read_procfile(ROOT / "Procfile")
    names = [f"c{i:05d}" for i in range(size)]
    with redis_server() as redis_url:
        env = {
            **os.environ,
            "DATABASE_URL": control,
            "REDIS_URL": redis_url,
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        }
        lead = LEAD + (60 if before else 0)
        time.sleep(max(0.0, (minute - datetime.now(UTC)).total_seconds() - lead))
        processes = start([procfile["clock"]] + [procfile["worker"]] * workers, env, code)
        try:
            if not hints:
                time.sleep(max(0.0, (minute - datetime.now(UTC)).total_seconds() - 1.5))
                with Redis.from_url(redis_url) as hinted:
                    hinted.delete(HINTS)
            time.sleep(max(0.0, (minute - datetime.now(UTC)).total_seconds() + 60))
        finally:
            stop(processes)
        client = Redis.from_url(redis_url)
        end = minute + timedelta(minutes=1)
        took, finished, starts = [], 0, []
        for job in Job.fetch_many([sweep_job_id(n, minute) for n in names], connection=client):
            if job is None or job.started_at is None or job.ended_at is None:
                continue
            if job.ended_at.replace(tzinfo=UTC) <= end:
                finished += 1
                took.append((job.ended_at - job.started_at).total_seconds() * 1000)
                starts.append((job.started_at.replace(tzinfo=UTC) - minute).total_seconds())
        tick_ms, tick_start_s = None, None
        registry = FinishedJobRegistry(QUEUE, connection=client)
        for job in Job.fetch_many(registry.get_job_ids(), connection=client):
            if job is None or job.func_name != "jobs.tick.enqueue_sweeps":
                continue
            if job.started_at is None or job.ended_at is None:
                continue
            # The watched minute's tick (with `before`, the minute before it had one too).
            if job.enqueued_at and minute_of(job.enqueued_at.replace(tzinfo=UTC)) == minute:
                tick_ms = round((job.ended_at - job.started_at).total_seconds() * 1000, 1)
                tick_start_s = since(minute, job.started_at)
        phases = due_phases(client, names, minute, spread) if spread else {}
        client.close()
    lags = world.lags(size)
    return {
        "connections": size,
        "workers": workers,
        "due_hints": hints,
        "code": "baseline" if code != ROOT else "this",
        "mail_drains": mail,
        "due_each": due,
        "due_spread": spread,
        "tick_ms": tick_ms,
        "tick_start_s": tick_start_s,
        **phases,
        "finished_in_minute": finished,
        "dropped": size - finished,
        "job_ms_median": round(statistics.median(took), 2) if took else None,
        "job_ms_p95": percentile(took, 0.95),
        "sweep_start_s_p50": percentile(starts, 0.5),
        "sweep_start_s_max": round(max(starts), 3) if starts else None,
        "rows_due": size * due + spread,
        "rows_moved": len(lags),
        "rows_late": sum(1 for lag in lags if lag > 60) + world.still_due(size),
        "lag_s_p50": percentile(lags, 0.5),
        "lag_s_p95": percentile(lags, 0.95),
        "lag_s_max": round(max(lags), 3) if lags else None,
        "load_1m": round(os.getloadavg()[0], 2),
    }


def since(minute: datetime, instant: datetime | None) -> float | None:
    """Seconds from the minute's start to an RQ timestamp (naive UTC)."""
    if instant is None:
        return None
    return round((instant.replace(tzinfo=UTC) - minute).total_seconds(), 3)


def due_phases(
    client: Redis, names: list[str], minute: datetime, spread: int
) -> dict[str, float | None]:
    """When the watched minute's sweeps of the connections holding a due row (`add_spread`)
    reached the queue, started and ended, and when the first of the others reached it:
    where a due row's lag goes (the tick, the queue, the sweeps before its own)."""
    due = {names[k * len(names) // spread] for k in range(spread)}
    jobs = Job.fetch_many([sweep_job_id(n, minute) for n in names], connection=client)
    mine = [j for n, j in zip(names, jobs, strict=True) if n in due and j is not None]
    others = [j for n, j in zip(names, jobs, strict=True) if n not in due and j is not None]

    def seconds(found: list[Job], field: str) -> list[float]:
        return [s for j in found if (s := since(minute, getattr(j, field))) is not None]

    queued, started, ended = (seconds(mine, f) for f in ("enqueued_at", "started_at", "ended_at"))
    rest = seconds(others, "enqueued_at")
    return {
        "due_queued_s_first": min(queued) if queued else None,
        "due_queued_s_last": max(queued) if queued else None,
        "rest_queued_s_first": min(rest) if rest else None,
        "due_started_s_first": min(started) if started else None,
        "due_started_s_p95": percentile(started, 0.95),
        "due_ended_s_max": max(ended) if ended else None,
        "due_job_ms_median": (
            round(statistics.median(ms), 2)
            if (
                ms := [
                    (j.ended_at - j.started_at).total_seconds() * 1000
                    for j in mine
                    if j.started_at and j.ended_at
                ]
            )
            else None
        ),
    }


def tick_summary(size: int, runs: list[dict[str, object]]) -> dict[str, object]:
    """The p50 of the ticks' read, enqueue and whole times, and the first (cold) tick's."""

    def p50(key: str) -> float:
        return round(statistics.median(float(r[key]) for r in runs), 1)  # type: ignore[arg-type]

    return {
        "mode": "tick",
        "connections": size,
        "ticks": len(runs),
        "read_ms_p50": p50("read_ms"),
        "enqueue_ms_p50": p50("enqueue_ms"),
        "tick_ms_p50": p50("tick_ms"),
        "first_tick_ms": runs[0]["tick_ms"] if runs else None,
        "goal_ms": 5000,
    }


class CpuMeter:
    """CPU seconds used by the workers, PostgreSQL's processes and the bench's Redis between
    `start` and `stop`, sampled every half second (a backend that comes and goes between two
    samples is missed; the workers' warm engines keep theirs)."""

    def __init__(self, workers: list[int], redis_pid: int | None) -> None:
        self.groups = {"workers": set(workers), "redis": {redis_pid} if redis_pid else set()}
        self.first: dict[int, float] = {}
        self.last: dict[int, float] = {}
        self.group_of: dict[int, str] = {}
        self.sampled = False
        self.machine: list[float] = []

    def sample(self) -> None:
        times = psutil.cpu_times()
        self.machine[len(self.machine[:1]) :] = [times.user + times.system + times.nice]
        for process in psutil.process_iter(["pid", "name"]):
            pid = process.info["pid"]
            group = next((g for g, pids in self.groups.items() if pid in pids), None)
            if group is None and process.info["name"] in ("postgres", "postgresql"):
                group = "postgres"
            if group is None:
                continue
            try:
                times = process.cpu_times()
            except psutil.Error:
                continue
            used = times.user + times.system
            self.group_of[pid] = group
            # At the first sample every process's baseline is its use so far; a process
            # first seen later (a new backend) counts whole.
            self.first.setdefault(pid, used if not self.sampled else 0.0)
            self.last[pid] = used
        self.sampled = True

    def used(self) -> dict[str, float]:
        totals: dict[str, float] = {"workers": 0.0, "postgres": 0.0, "redis": 0.0}
        for pid, used in self.last.items():
            totals[self.group_of[pid]] += used - self.first.get(pid, 0.0)
        # The whole machine's busy time, whoever used it (the bench, other users).
        totals["machine"] = self.machine[-1] - self.machine[0] if self.machine else 0.0
        return {group: round(seconds, 2) for group, seconds in totals.items()}


def throughput(
    world: World,
    size: int,
    workers: int,
    passes: int = 4,
    deadline_s: float = 240,
    through: Callable[[str], str] | None = None,
) -> list[dict[str, object]]:
    """`workers` workers started as the Procfile does, then `passes` minutes of `size` idle
    sweeps, each enqueued at once by the tick's own enqueue once the one before has drained:
    how fast the workers drain each, and whose CPU it took. The first pass is the workers'
    first minute (every manifest new to them); later ones use what each worker kept."""
    control = world.control(size, through=through)
    world.reset(size)
    names = [f"c{i:05d}" for i in range(size)]
    procfile = read_procfile(ROOT / "Procfile")
    found: list[dict[str, object]] = []
    with redis_server() as redis_url:
        client = Redis.from_url(redis_url)
        with open_session(control) as session:
            listed = connections_with_minute_work(session)
        engine_for(control).dispose()
        redis_pid = next(
            (
                p.pid
                for p in psutil.process_iter(["pid", "name", "cmdline"])
                if p.info["name"] == "redis-server"
                and any(redis_url.split(":")[2].split("/")[0] in a for a in p.info["cmdline"] or [])
            ),
            None,
        )
        env = {
            **os.environ,
            "DATABASE_URL": control,
            "REDIS_URL": redis_url,
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        }
        processes = start([procfile["worker"]] * workers, env)
        queue = Queue(QUEUE, connection=client)
        first = minute_of(datetime.now(UTC))
        try:
            # The workers' start (imports, registering) is not counted in the first pass.
            ready = time.monotonic() + 60
            while Worker.count(queue=queue) < workers and time.monotonic() < ready:
                time.sleep(0.2)
            for index in range(passes):
                # Each pass its own minute, taken as `now`: each sweep may wait its full 55 s.
                minute = first + timedelta(minutes=index)
                meter = CpuMeter([p.pid for p in processes], redis_pid)
                meter.sample()
                enqueued = enqueue_minute(queue, listed, minute, minute)
                drain(queue, time.monotonic() + deadline_s, meter)
                found.append(
                    {"pass": index + 1, **pass_figures(client, names, minute, enqueued, meter)}
                )
        finally:
            stop(processes)
            client.close()
    return [{"mode": "throughput", "connections": size, "workers": workers, **f} for f in found]


def drain(queue: Queue, ended: float, meter: CpuMeter) -> None:
    """Wait for the queue and its started jobs to empty, sampling the CPU meter."""
    while time.monotonic() < ended:
        time.sleep(0.5)
        meter.sample()
        if queue.count == 0 and queue.started_job_registry.count == 0:
            break
    meter.sample()


def pass_figures(
    client: Redis, names: list[str], minute: datetime, enqueued: int, meter: CpuMeter
) -> dict[str, object]:
    """One pass's figures: jobs finished, their rate from the first start to the last end,
    job time, and the CPU each group used (the meter spans enqueue to drained)."""
    starts, ends, took = [], [], []
    for job in Job.fetch_many([sweep_job_id(n, minute) for n in names], connection=client):
        if job is None or job.started_at is None or job.ended_at is None:
            continue
        starts.append(job.started_at)
        ends.append(job.ended_at)
        took.append((job.ended_at - job.started_at).total_seconds() * 1000)
    span = (max(ends) - min(starts)).total_seconds() if starts else None
    used = meter.used()
    return {
        "enqueued": enqueued,
        "finished": len(ends),
        "span_s": round(span, 2) if span else None,
        "jobs_per_s": round(len(ends) / span, 1) if span else None,
        "job_ms_median": round(statistics.median(took), 2) if took else None,
        "job_ms_p95": percentile(took, 0.95),
        "cpu_ms_per_job": {g: round(1000 * t / len(ends), 2) for g, t in used.items()}
        if ends
        else None,
        "cpu_share_of_2_cores": (
            {g: round(t / (2 * span), 2) for g, t in used.items()} if span else None
        ),
    }


def tick(world: World, size: int, ticks: int = 5) -> list[dict[str, object]]:
    """The tick's read and enqueue at `size` connections, `ticks` times in one process (as
    a warm worker runs them), each for its own minute on a Redis of the bench's own."""
    control = world.control(size)
    found: list[dict[str, object]] = []
    with redis_server() as redis_url:
        client = Redis.from_url(redis_url)
        queue = Queue(QUEUE, connection=client)
        first = minute_of(datetime.now(UTC))
        for index in range(ticks):
            minute = first + timedelta(minutes=index)
            began = time.perf_counter()
            with open_session(control) as session:
                names = connections_with_minute_work(session)
            read = time.perf_counter()
            count = enqueue_minute(queue, names, minute, minute)
            done = time.perf_counter()
            found.append(
                {
                    "tick": index + 1,
                    "names": len(names),
                    "enqueued": count,
                    "read_ms": round((read - began) * 1000, 1),
                    "enqueue_ms": round((done - read) * 1000, 1),
                    "tick_ms": round((done - began) * 1000, 1),
                }
            )
            # As if the minute's sweeps had run: none is left waiting for the next tick to drop.
            queue.empty()
            client.delete(WAITING)
        client.close()
    engine_for(control).dispose()
    return found


ARMS = ("own", "pooled", "shared")
"""--own's connections: each its own database, the same databases through PgBouncer
(--pgbouncer), and connections sharing DATABASES databases by schema."""


def own_databases(size: int, workers: list[int], pooled: bool = False) -> None:
    """Each connection its own database beside connections sharing 4 by schema (and, with
    `pooled`, the same own databases through PgBouncer in transaction mode, as the
    production topology draws it), turn about for each number of workers: the minute swept
    whole and the workers' rate, per worker-minute. Through PgBouncer each database keeps a
    server session warm between minutes, so the server must take one per database: on one
    that takes fewer, the bench starts a PostgreSQL of its own that does (all arms on it)."""
    arms = ARMS if pooled else ("own", "shared")
    needed = size + 60
    with contextlib.ExitStack() as stack:
        server = server_url()
        private = pooled and max_connections(server) < needed
        if private:
            server = stack.enter_context(private_server(needed))
            print(json.dumps({"mode": "own", "server": f"own, max_connections {needed}"}))
        through = None
        if pooled:
            from tests.integration.pgbouncer_fixtures import start_pgbouncer

            # Every worker keeps a client connection to each database behind it.
            clients = size * (max(workers) + 1) + 100
            bouncer = stack.enter_context(
                start_pgbouncer(server, "transaction", pool_size=2, max_clients=clients)
            )
            through = bouncer.url
        worlds = {"own": World(server, size, size), "shared": World(server, size, DATABASES)}
        for world in worlds.values():
            if not private:  # a server of the bench's own goes whole
                stack.callback(world.drop)
        for label, world in worlds.items():
            made = time.monotonic()
            world.install()
            setup = {"mode": "own", "arm": label, "databases": world.databases}
            print(json.dumps({**setup, "setup_s": round(time.monotonic() - made)}), flush=True)
        per_minute: dict[str, dict[int, float]] = {}
        for count in workers:
            for arm in arms:
                world = worlds["shared" if arm == "shared" else "own"]
                reach = through if arm == "pooled" else None
                found = own_arm(world, size, count, reach)
                per_minute.setdefault(arm, {})[count] = float(found["per_worker_minute"])  # type: ignore[arg-type]
                print(json.dumps({"mode": "own", "arm": arm, **found}), flush=True)
    for count in workers:
        figures: dict[str, object] = {"mode": "own", "workers": count}
        for arm in arms:
            figures[f"{arm}_per_worker_minute"] = int(per_minute[arm][count])
        shared = per_minute["shared"][count]
        for arm in arms[:-1]:
            figures[f"{arm}_to_shared"] = (
                round(per_minute[arm][count] / shared, 2) if shared else None
            )
        figures["load_1m"] = round(os.getloadavg()[0], 2)
        print(json.dumps(figures), flush=True)


def own_arm(
    world: World, size: int, count: int, through: Callable[[str], str] | None
) -> dict[str, object]:
    """One arm of --own: a watched idle minute, then three throughput passes."""
    minute = run(world, size, count, 0, through=through)
    passes = throughput(world, size, count, passes=3, through=through)
    rate = float(passes[-1]["jobs_per_s"] or 0)  # type: ignore[arg-type]
    return {
        "connections": size,
        "databases": world.databases,
        "workers": count,
        "finished_in_minute": minute["finished_in_minute"],
        "dropped": minute["dropped"],
        "job_ms_median": minute["job_ms_median"],
        "job_ms_p95": minute["job_ms_p95"],
        "sweep_start_s_max": minute["sweep_start_s_max"],
        "jobs_per_s_by_pass": [p["jobs_per_s"] for p in passes],
        "job_ms_median_last_pass": passes[-1]["job_ms_median"],
        "per_worker_minute": int(rate * 60 / count),
        "load_1m": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="50,200,1000")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--due", default="0,20")
    parser.add_argument(
        "--punctual",
        action="store_true",
        help="1,000 connections, the advised workers, 300 rows due at one minute spread over "
        "them; without and with the tick's outbox drains (a producer in every app)",
    )
    parser.add_argument("--throughput", type=int, default=0, metavar="N")
    parser.add_argument("--tick", type=int, default=0, metavar="N")
    parser.add_argument("--own", type=int, default=0, metavar="N")
    parser.add_argument(
        "--pgbouncer",
        action="store_true",
        help="with --own: the own databases also through Debian's PgBouncer (make pgbouncer)",
    )
    parser.add_argument("--due-first", action="store_true")
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="DIR",
        help="with --due-first: a checkout of the code to compare with (git worktree add DIR "
        "REV): its processes with the hints, turn about with this code's, instead of this "
        "code without the hints",
    )
    options = parser.parse_args()
    if options.due_first:
        world = World(server_url(), 1000)
        try:
            world.install()
            workers = advised_workers(1000, 300)
            turns: list[tuple[bool, Path]] = (
                [(True, options.baseline.resolve()), (True, ROOT)]
                if options.baseline
                else [(False, ROOT), (True, ROOT)]
            )
            for _ in range(2):
                for hints, code in turns:
                    found = run(
                        world, 1000, workers, 0, spread=300, before=True, hints=hints, code=code
                    )
                    print(json.dumps({"mode": "due-first", **found, "goal_p95_s": 5.0}), flush=True)
        finally:
            world.drop()
        return
    if options.own:
        own_databases(options.own, [int(k) for k in options.workers.split(",")], options.pgbouncer)
        return
    sizes = [int(s) for s in options.sizes.split(",")]
    if options.tick:
        world = World(server_url(), options.tick)  # the control plane only: no venue schemas
        try:
            runs = tick(world, options.tick)
            for found in runs:
                print(json.dumps({"mode": "tick", "connections": options.tick, **found}))
            print(json.dumps(tick_summary(options.tick, runs)), flush=True)
        finally:
            world.drop()
        return
    if options.throughput:
        world = World(server_url(), options.throughput)
        try:
            world.install()
            rates: dict[int, list[float]] = {}
            # --workers 2,1 runs two workers first: the databases' first minutes are theirs.
            for workers in [int(k) for k in options.workers.split(",")]:
                passes = throughput(world, options.throughput, workers)
                for found in passes:
                    print(json.dumps(found), flush=True)
                rates[workers] = [float(f["jobs_per_s"] or 0) for f in passes]  # type: ignore[arg-type]
            for index, (one, two) in enumerate(zip(rates[1], rates[2], strict=True)):
                ratio = round(two / one, 2) if one else None
                print(
                    json.dumps(
                        {
                            "mode": "throughput",
                            "pass": index + 1,
                            "ratio_2_to_1": ratio,
                            "goal": 1.8,
                        }
                    )
                )
        finally:
            world.drop()
        return
    world = World(server_url(), 1000 if options.punctual else max(sizes))
    try:
        world.install()
        if options.punctual:
            workers = advised_workers(1000, 300)
            for mail in (False, True):
                print(json.dumps(run(world, 1000, workers, 0, spread=300, mail=mail)), flush=True)
            return
        for due in (int(d) for d in options.due.split(",")):
            for size in sizes:
                for workers in (int(k) for k in options.workers.split(",")):
                    print(json.dumps(run(world, size, workers, due)), flush=True)
    finally:
        world.drop()


if __name__ == "__main__":
    main()
