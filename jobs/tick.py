"""The minute tick: enqueue one sweep per connection whose apps list a timed move."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from datetime import UTC, datetime

from redis import Redis
from rq import Queue, get_current_job

from jobs.sweep import QUEUE, control_url, enqueue_sweep, minute_of
from services.connections import connections_with_timed_moves
from services.storage import open_session

log = logging.getLogger(__name__)


def enqueue_minute(queue: Queue, names: Iterable[str], minute: datetime, now: datetime) -> int:
    """Enqueue each connection's sweep of `minute` once; how many this call enqueued."""
    return sum(enqueue_sweep(queue, name, minute, now) is not None for name in names)


def enqueue_sweeps() -> int:
    """The cron job: enqueue this minute's sweeps; returns how many this tick enqueued."""
    job = get_current_job()
    now = datetime.now(UTC)
    # The minute is the tick's own, so every clock's tick of one minute names the same jobs.
    minute = minute_of(job.enqueued_at if job is not None and job.enqueued_at else now)
    client = job.connection if job is not None else Redis.from_url(os.environ["REDIS_URL"])
    with open_session(control_url()) as session:
        names = connections_with_timed_moves(session)
    count = enqueue_minute(Queue(QUEUE, connection=client), names, minute, now)
    log.info("minute %s: %s of %s sweeps enqueued", f"{minute:%H:%M}Z", count, len(names))
    return count
