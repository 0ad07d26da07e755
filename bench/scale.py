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
Each run takes about 80 s (it waits for a minute to begin); all stop by themselves.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from redis import Redis
from rq.job import Job
from rq.registry import FinishedJobRegistry

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale_setup import ROOT, World, redis_server, server_url

from adminium.supervisor import read_procfile
from jobs.sweep import sweep_job_id
from services.sweep_ledger import QUEUE

LEAD = 12.0
"""Seconds before the watched minute the processes start (workers import, register)."""


def percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 3)


def start(commands: list[str], env: dict[str, str]) -> list[subprocess.Popen[bytes]]:
    return [
        subprocess.Popen(
            ["/bin/sh", "-c", command],
            cwd=ROOT,
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


def advised_workers(connections: int, rows_due: int) -> int:
    """docs/operations.md, Running at scale: one worker per 2,000 idle connections, one more
    per ~5,000 rows due in the same minute, and never fewer than two."""
    return max(2, math.ceil(connections / 2000) + math.ceil(rows_due / 5000))


def run(
    world: World, size: int, workers: int, due: int, spread: int = 0, mail: bool = False
) -> dict[str, object]:
    control = world.control(size, mail)
    world.reset(size)
    minute = next_minute(LEAD + 20)
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
        time.sleep(max(0.0, (minute - datetime.now(UTC)).total_seconds() - LEAD))
        processes = start([procfile["clock"]] + [procfile["worker"]] * workers, env)
        try:
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
        tick_ms = None
        registry = FinishedJobRegistry(QUEUE, connection=client)
        for job in Job.fetch_many(registry.get_job_ids(), connection=client):
            if job is not None and job.func_name == "jobs.tick.enqueue_sweeps" and job.ended_at:
                tick_ms = round((job.ended_at - job.started_at).total_seconds() * 1000, 1)
        client.close()
    lags = world.lags(size)
    return {
        "connections": size,
        "workers": workers,
        "mail_drains": mail,
        "due_each": due,
        "due_spread": spread,
        "tick_ms": tick_ms,
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
    options = parser.parse_args()
    sizes = [int(s) for s in options.sizes.split(",")]
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
