"""The per-connection sweep job: RQ glue around `services.sweeps.sweep`.

The fence that keeps one sweep per connection lives in the connection's database
(`core.sweep.fence`); Redis only carries the jobs and the live events.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from redis import Redis, RedisError
from rq import Queue, get_current_job
from rq.exceptions import DuplicateJobError
from rq.job import Job
from rq.queue import EnqueueData

from core.sweep.report import SweepOutcome, SweepReport
from services.control_version import ask_token, token_of
from services.due_hints import leave_hint
from services.events import Publisher
from services.storage import reading_session
from services.sweep_ledger import count_finished, count_started, mark_started
from services.sweeps import sweep

log = logging.getLogger(__name__)

WAIT_SECONDS = 55
"""How long after its minute began a queued sweep may still start (`ttl`)."""
JOB_TIMEOUT = 58
"""A sweep's `job_timeout`: under the minute; its own deadline stops it sooner."""
RESULT_TTL = 120
"""How long a sweep's job (and so its id, for `unique`) is kept after it ran: past its
minute, and no longer (at thousands of connections a minute, results add up in Redis)."""
FAILURE_TTL = int(timedelta(days=1).total_seconds())
"""How long a failed sweep's job is kept for a look."""


def minute_of(instant: datetime) -> datetime:
    """The minute an instant falls in, in UTC."""
    aware = instant if instant.tzinfo is not None else instant.replace(tzinfo=UTC)
    return aware.astimezone(UTC).replace(second=0, microsecond=0)


def sweep_job_id(connection: str, minute: datetime) -> str:
    """The one job id of a connection's sweep in a minute."""
    return f"adminium-sweep-{connection}-{minute_of(minute):%Y%m%dT%H%MZ}"


def wait_left(minute: datetime, now: datetime) -> int:
    """Whole seconds a sweep of `minute` may still wait in the queue at `now` (its `ttl`)."""
    return int(WAIT_SECONDS - (now - minute_of(minute)).total_seconds())


def sweep_data(connection: str, minute: datetime, ttl: int) -> EnqueueData:
    """A connection's sweep of a minute as the queue takes it (one job id per minute)."""
    return Queue.prepare_data(
        run_sweep,
        (connection, minute_of(minute).isoformat()),
        job_id=sweep_job_id(connection, minute),
        ttl=ttl,
        timeout=JOB_TIMEOUT,
        result_ttl=RESULT_TTL,
        failure_ttl=FAILURE_TTL,
        description=f"sweep {connection} {minute_of(minute):%H:%M}Z",
    )


def enqueue_sweep(queue: Queue, connection: str, minute: datetime, now: datetime) -> Job | None:
    """Enqueue a connection's sweep for a minute once; None when it is already there."""
    minute = minute_of(minute)
    ttl = wait_left(minute, now)
    if ttl <= 0:
        log.info(
            "sweep of connection %s for %s not enqueued: its minute is over", connection, minute
        )
        return None
    try:
        data = sweep_data(connection, minute, ttl)
        return queue.enqueue(
            data.func,
            *data.args,
            job_id=data.job_id,
            unique=True,
            ttl=data.ttl,
            job_timeout=data.timeout,
            result_ttl=data.result_ttl,
            failure_ttl=data.failure_ttl,
            description=data.description,
        )
    except DuplicateJobError:
        log.debug("sweep of connection %s for %s already enqueued", connection, minute)
        return None


def control_url() -> str:
    """Adminium's own database: DATABASE_URL."""
    url = os.environ.get("DATABASE_URL", "")
    if not url:
        raise RuntimeError("DATABASE_URL is not set: the sweep cannot find its connections")
    return url


_started_by_worker: tuple[str, str | None] | None = None
"""The id of the job whose start the worker wrote as it started it (`start_in`), and the
control plane's announcements' token read beside."""


def start_in(pipe: Any, job: Job, started: datetime) -> bool:
    """In the worker's own pipeline as it starts `job` (`jobs.worker.SweepWorker`): when
    the job is a minute's sweep, the ledger's start of it (the job then writes none of its
    own, `started_in`) and the announcements' token (`services.control_version.ask_token`:
    the job's read of the control plane is kept while it holds); whether it was one."""
    if job.func_name != _RUN_SWEEP:
        return False
    args, kwargs = job.args, job.kwargs
    connection = args[0] if args else kwargs.get("connection")
    minute = args[1] if len(args) > 1 else kwargs.get("minute")
    if not isinstance(connection, str) or not isinstance(minute, str):
        return False
    count_started(pipe, connection, datetime.fromisoformat(minute), started)
    ask_token(pipe)
    return True


def started_in(job_id: str, replies: list[Any]) -> None:
    """The worker's pipeline holding `start_in`'s writes for this job was sent; `replies`,
    its replies from `start_in`'s first on."""
    global _started_by_worker
    _started_by_worker = (job_id, token_of(replies))


def _was_started(job: Job | None) -> tuple[bool, str | None]:
    """Whether the worker wrote this job's start already (asked once, as the job begins),
    and the token it read then."""
    global _started_by_worker
    held = _started_by_worker
    _started_by_worker = None
    if job is None or held is None or held[0] != job.id:
        return False, None
    return True, held[1]


def run_sweep(connection: str, minute: str | None = None) -> dict[str, Any]:
    """The RQ job: sweep one connection now; its summary is the job's result. The tick
    names the `minute` it enqueued it for, so the ledger dates its start and lag (written
    by the worker as it started the job, `start_in`, else here first)."""
    job = get_current_job()
    client = job.connection if job is not None else None
    now = datetime.now(UTC)
    by_worker, token = _was_started(job)
    if client is not None and minute is not None and not by_worker:
        _tell(lambda: mark_started(client, connection, datetime.fromisoformat(minute), now))
    started = time.monotonic()
    # Its one read of the control plane, autocommitted (no transaction round trips), and
    # none while the token read as the job started holds (`services.apps.SweptReads`).
    with reading_session(control_url()) as session:
        report = sweep(session, connection, now=now, publisher=Publisher(client), token=token)
    seconds = time.monotonic() - started
    if job is not None and by_worker:
        # Sent in the pipeline the worker sends as the job succeeds (`finish_in`).
        _leave_finish(job.id, lambda pipe: _finish(pipe, connection, report, seconds))
    elif client is not None:
        _tell(lambda: _finished(client, connection, report, seconds))
    return summary(report)


_RUN_SWEEP = f"{run_sweep.__module__}.{run_sweep.__qualname__}"
"""The job function's name as RQ stores it."""


def _finished(client: Redis, connection: str, report: SweepReport, seconds: float) -> None:
    """What the sweep's end writes to Redis, in one round trip of its own."""
    pipe = client.pipeline(transaction=False)
    _finish(pipe, connection, report, seconds)
    pipe.execute()


def _finish(pipe: Any, connection: str, report: SweepReport, seconds: float) -> None:
    """What the sweep's end writes to Redis, in a pipeline: the tick's hint (a paused sweep
    moved nothing: its hint stays as it was) and the ledger's counts."""
    if not (report.dry_run or report.outcome is SweepOutcome.paused):
        leave_hint(pipe, connection, due_hint(report))
    moved, aside = len(report.moved), len(report.set_aside)
    count_finished(pipe, connection, seconds=seconds, moved=moved, set_aside=aside)


_finish_left: tuple[str, Callable[[Any], None]] | None = None
"""The id of the job whose end writes wait for the worker's success pipeline, and them."""


def _leave_finish(job_id: str, write: Callable[[Any], None]) -> None:
    global _finish_left
    _finish_left = (job_id, write)


def finish_in(pipe: Any, job_id: str) -> bool:
    """In the worker's pipeline as the job `job_id` succeeds (`jobs.worker.SweepWorker`):
    the end writes the sweep left it (sent again if RQ sends its pipeline again); whether
    there were any."""
    if _finish_left is None or _finish_left[0] != job_id:
        return False
    _finish_left[1](pipe)
    return True


def forget_finish() -> None:
    """The worker has sent (or given up on) the job's success pipeline."""
    global _finish_left
    _finish_left = None


def due_hint(report: SweepReport) -> datetime | None:
    """The hint a sweep leaves the tick (`services.due_hints`): its next due moment when it
    finished, its `now` when rows were left for next minute (or it was stopped or turned
    away)."""
    return report.next_due if report.outcome is SweepOutcome.done else report.at


def _tell(write: Callable[[], None]) -> None:
    """Write the ledger; Redis failing here is logged (the sweep's own work has committed)."""
    try:
        write()
    except RedisError as error:
        log.warning("sweep ledger not written: %s", error.__class__.__name__)


def summary(report: SweepReport) -> dict[str, Any]:
    """A report as JSON: counts, and each row moved, set aside, or left for next minute."""

    def row(due: Any) -> dict[str, Any]:
        return {
            "app": due.rule.app,
            "table": due.rule.table,
            "key": due.key,
            "rule": due.rule.number,
            "moment": due.moment.isoformat(),
        }

    record = report.record()
    return {
        **record,
        "at": report.at.isoformat(),
        "dry_run": report.dry_run,
        "moved": [row(d) for d in report.moved],
        "set_aside": [
            {**row(r.due), "code": r.code, "message": r.message} for r in report.set_aside
        ],
        "conflicts": [row(d) for d in report.conflicts],
        "left_alone": [row(d) for d in report.left_alone],
        "passed_by": [row(d) for d in report.passed_by],
        "left": [row(d) for d in report.left],
    }
