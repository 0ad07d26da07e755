"""The Procfile's worker class: RQ's SimpleWorker with the jobs' modules imported once.

RQ's default worker forks a work horse per job, and each horse imported SQLAlchemy, the
domain and the services again, made its engines and connected again: about 0.6 s of a
sweep whose own work is a few milliseconds (docs/operations.md, "Running at scale").
This worker runs each job in its own process, so what one sweep warms (modules, engines
and their pools, compiled statements, parsed manifests) serves the next.

The job timeout still holds: RQ's `perform_job` runs every job under its death penalty,
which for a SimpleWorker is SIGALRM in this process (`UnixSignalDeathPenalty`), raising
`JobTimeoutException` inside the job. A job that kills the process (a crash, memory) takes
the worker with it; the launcher's supervisor, or the platform, starts it again.

Its console is quiet while nothing happens (`jobs.logs`): RQ's own lines of each job are
DEBUG; a move, a fault and the spec's warnings are said.

A Redis outage does not take it: RQ's pause between tries while Redis is away grows to a
minute, and RQ leaves its loop when Redis goes away in the middle of a call (a timeout, a
pipeline after a job). This worker tries again every REDIS_PAUSE seconds and, once Redis
answers, listens again in the same process, so the sweeps of the minute that could not be
enqueued meanwhile start within seconds of Redis answering.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import time
from datetime import UTC, datetime
from typing import Any

from redis.client import Pipeline
from redis.exceptions import ConnectionError, TimeoutError
from rq.exceptions import StopRequested
from rq.executions import Execution
from rq.job import Job
from rq.queue import Queue
from rq.registry import StartedJobRegistry
from rq.worker import SimpleWorker, WorkerStatus

# Imported here, before the first job, so that no job pays for them.
import jobs.sweep
import jobs.tick
from jobs.logs import quiet_worker

log = logging.getLogger(__name__)

PRELOADED = (jobs.sweep.__name__, jobs.tick.__name__)
"""The job modules this worker holds from its start."""

GC_THRESHOLD = (10_000, 10, 10)
"""The cyclic garbage collector's thresholds in a worker (Python's are 700, 10, 10). A
worker keeps what it learnt of thousands of apps (`services.apps.WARM`); a young collection
every 700 allocations, and the full ones they lead to, walked that heap again and again:
3.4 ms of a first-minute sweep's 20 ms went to the collector, 1.9 ms with these."""


def settle_memory() -> None:
    """Leave what was imported out of every collection (`gc.freeze`: it lives as long as
    the process) and collect young objects less often."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)


REDIS_PAUSE = 2.0
"""Seconds between a worker's tries while Redis does not answer (RQ's own grow to 60)."""


class SweepWorker(SimpleWorker):
    """A SimpleWorker (jobs in this process, warm state kept between them) that rides out a
    Redis outage, and writes a sweep's start and its end to the ledger in the pipelines it
    sends as it starts the job and as the job succeeds (two round trips less a sweep)."""

    max_connection_wait_time = REDIS_PAUSE

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        quiet_worker()  # an idle minute says nothing (jobs/logs.py)

    def handle_job_success(
        self, job: Job, queue: Queue, started_job_registry: StartedJobRegistry
    ) -> None:
        """RQ's own, with the sweep's end writes (its hint and counts, `jobs.sweep.finish_in`)
        in the same pipeline (`increment_successful_job_count` is called inside it)."""
        try:
            super().handle_job_success(job, queue, started_job_registry)
        finally:
            jobs.sweep.forget_finish()

    def increment_successful_job_count(self, pipeline: Pipeline | None = None) -> None:
        """RQ's own, and, in RQ's success pipeline, what the succeeding sweep left to write."""
        super().increment_successful_job_count(pipeline)
        if pipeline is not None and self.execution is not None:
            jobs.sweep.finish_in(pipeline, self.execution.job_id)

    def prepare_execution(self, job: Job) -> Execution:
        """RQ's own (`rq.executions.prepare_execution`: the job's execution recorded, this
        worker busy), with the ledger's start of a minute's sweep in the same pipeline
        (`jobs.sweep.start_in`), before the job runs. A ledger write Redis refuses is
        logged and left to the job (it writes its start itself); RQ's own raise as in RQ."""
        started = datetime.now(UTC)
        jobs.sweep.forget_finish()  # a job that failed after leaving its end writes
        with self.connection.pipeline() as pipeline:
            heartbeat_ttl = self.get_heartbeat_ttl(job)
            self.execution = Execution.create(
                job, heartbeat_ttl, pipeline=pipeline, worker_name=self.name
            )
            self.set_state(WorkerStatus.BUSY, pipeline=pipeline)
            own = len(pipeline.command_stack)
            ledger = jobs.sweep.start_in(pipeline, job, started)
            results = pipeline.execute(raise_on_error=False)
        failed = [r for r in results if isinstance(r, Exception)]
        if any(isinstance(r, Exception) for r in results[:own]):
            raise failed[0]
        if ledger and not failed:
            jobs.sweep.started_in(job.id, results[own:])
        elif failed:
            log.warning("sweep ledger not written as job %s started: %s", job.id, failed[0])
        return self.execution

    def work(self, burst: bool = False, *args: Any, **kwargs: Any) -> bool:
        """Work as RQ's worker does; a long-lived one (the Procfile's, not a burst that
        drains a queue and ends) first settles its memory, and when RQ's loop ends without
        a stop request (Redis went away mid-call) waits for Redis and listens again."""
        if burst:
            return super().work(burst, *args, **kwargs)
        settle_memory()
        if args or kwargs.get("max_jobs") or kwargs.get("max_idle_time"):
            return super().work(burst, *args, **kwargs)  # it ends by itself: no riding out
        worked = False
        while True:
            try:
                worked = super().work(burst, *args, **kwargs) or worked
            except (ConnectionError, TimeoutError) as error:
                # Registering its birth or its death needs Redis.
                self.log.warning("worker %s: Redis does not answer (%s)", self.name, error)
                with contextlib.suppress(Exception):
                    self.unsubscribe()
            if self._shutdown_requested_date is not None:
                return worked
            if not self._wait_for_redis():
                return worked

    def _wait_for_redis(self) -> bool:
        """Try Redis every REDIS_PAUSE seconds until it answers (True), or a stop signal
        comes (False); then forget this worker's registration left from before."""
        tries = 0
        while True:
            try:
                time.sleep(REDIS_PAUSE if tries else REDIS_PAUSE / 4)
                self.connection.ping()
                # Its key may lack the death RQ could not write: it is this worker's own.
                self.connection.delete(self.key)
            except (ConnectionError, TimeoutError) as error:
                tries += 1
                self.log.warning(
                    "worker %s: Redis does not answer (%s); trying again in %.0f s",
                    self.name,
                    error,
                    REDIS_PAUSE,
                )
                continue
            except StopRequested:
                return False
            if self._shutdown_requested_date is not None:
                return False
            self.log.warning("worker %s: Redis answers again; listening again", self.name)
            return True
