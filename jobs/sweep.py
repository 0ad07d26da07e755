"""The per-connection sweep job: RQ glue around `services.sweeps.sweep`.

The fence that keeps one sweep per connection lives in the connection's database
(`core.fence`); Redis only carries the jobs and the live events.
"""

from __future__ import annotations

import logging
import os
from datetime import UTC, datetime, timedelta
from typing import Any

from rq import Queue, get_current_job
from rq.exceptions import DuplicateJobError
from rq.job import Job

from core.sweep import SweepReport
from services.events import Publisher
from services.storage import open_session
from services.sweeps import sweep

log = logging.getLogger(__name__)

QUEUE = "adminium"
"""The queue the clock and the sweeps use (the Procfile's worker listens on it)."""
WAIT_SECONDS = 55
"""How long after its minute began a queued sweep may still start (`ttl`)."""
JOB_TIMEOUT = 58
"""A sweep's `job_timeout`: under the minute; its own deadline stops it sooner."""
RESULT_TTL = 600
"""How long a sweep's job (and so its id, for `unique`) is kept after it ran."""


def minute_of(instant: datetime) -> datetime:
    """The minute an instant falls in, in UTC."""
    aware = instant if instant.tzinfo is not None else instant.replace(tzinfo=UTC)
    return aware.astimezone(UTC).replace(second=0, microsecond=0)


def sweep_job_id(connection: str, minute: datetime) -> str:
    """The one job id of a connection's sweep in a minute."""
    return f"adminium-sweep-{connection}-{minute_of(minute):%Y%m%dT%H%MZ}"


def enqueue_sweep(queue: Queue, connection: str, minute: datetime, now: datetime) -> Job | None:
    """Enqueue a connection's sweep for a minute once; None when it is already there."""
    minute = minute_of(minute)
    waited = (now - minute).total_seconds()
    ttl = int(WAIT_SECONDS - waited)
    if ttl <= 0:
        log.info(
            "sweep of connection %s for %s not enqueued: its minute is over", connection, minute
        )
        return None
    try:
        return queue.enqueue(
            run_sweep,
            connection,
            job_id=sweep_job_id(connection, minute),
            unique=True,
            ttl=ttl,
            job_timeout=JOB_TIMEOUT,
            result_ttl=RESULT_TTL,
            failure_ttl=int(timedelta(days=1).total_seconds()),
            description=f"sweep {connection} {minute:%H:%M}Z",
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


def run_sweep(connection: str) -> dict[str, Any]:
    """The RQ job: sweep one connection now; its summary is the job's result."""
    job = get_current_job()
    publisher = Publisher(job.connection if job is not None else None)
    with open_session(control_url()) as session:
        report = sweep(session, connection, now=datetime.now(UTC), publisher=publisher)
    return summary(report)


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
