"""The minute tick: enqueue one sweep per connection the minute job has work for.

Every clock enqueues the tick each minute; the first tick of a minute claims it, counts
the sweeps of earlier minutes that never started (dropped: logged, counted, shown), and
enqueues the minute's sweeps in one pipeline, the connections served longest ago first,
so a connection skipped in one minute is among the first of the next. A tick that runs
after its minute is over (Redis did not answer meanwhile) still enqueues its sweeps, at
once: its rows are due, and the next tick may be most of a minute away.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from datetime import UTC, datetime

from rq import Queue, get_current_job

from jobs.outbox import enqueue_drains
from jobs.sweep import WAIT_SECONDS, control_url, minute_of, sweep_data, wait_left
from jobs.webhooks import enqueue_delivery_drains
from services.connections import connections_with_minute_work
from services.due_hints import due_first
from services.redis_client import connect
from services.storage import open_session
from services.sweep_ledger import (
    QUEUE,
    count_drops,
    fair_order,
    mark_waiting,
    take_dropped,
)

log = logging.getLogger(__name__)

CLAIM_SECONDS = 120
"""How long a minute's claim is kept: past its minute, so a second clock's tick finds it."""


def claim_key(queue: Queue, minute: datetime) -> str:
    """The key the first tick of a minute sets; later ticks of that minute find it."""
    return f"adminium:tick:{queue.name}:{minute_of(minute):%Y%m%dT%H%MZ}"


def enqueue_minute(queue: Queue, names: Sequence[str], minute: datetime, now: datetime) -> int:
    """Enqueue each connection's sweep of `minute` once, longest unserved first; how many
    this call enqueued (none when another tick of the minute did)."""
    client = queue.connection
    minute = minute_of(minute)
    if not client.set(claim_key(queue, minute), 1, nx=True, ex=CLAIM_SECONDS):
        return 0
    count_drops(client, take_dropped(client, minute))
    ttl = wait_left(minute, now)
    late = ttl <= 0
    if late:
        # Its tick could not run in its minute (Redis did not answer, or no worker took
        # it): its rows are still due, so its sweeps go now, with a full wait of their own.
        # They are not marked waiting: the next minute's tick must not count them dropped.
        ttl = WAIT_SECONDS
        log.warning(
            "minute %s: its tick came %.0f s late; its sweeps go now (%s)",
            f"{minute:%H:%M}Z",
            (now - minute).total_seconds(),
            len(names),
        )
    # Those with something due in this minute first (their hints), each part in fair order;
    # the first part in a pipeline of its own, so workers start on it while the rest go in.
    due, rest = due_first(client, fair_order(client, names), minute)
    for part in (due, rest):
        if not part:
            continue
        with client.pipeline() as pipe:
            queue.enqueue_many([sweep_data(name, minute, ttl) for name in part], pipeline=pipe)
            if not late:
                mark_waiting(pipe, part, minute)
            pipe.execute()
    return len(due) + len(rest)


def enqueue_sweeps() -> int:
    """The cron job: enqueue this minute's sweeps; returns how many this tick enqueued."""
    job = get_current_job()
    now = datetime.now(UTC)
    # The minute is the tick's own, so every clock's tick of one minute names the same jobs.
    minute = minute_of(job.enqueued_at if job is not None and job.enqueued_at else now)
    client = job.connection if job is not None else connect(os.environ["REDIS_URL"])
    queue = Queue(QUEUE, connection=client)
    with open_session(control_url()) as session:
        names = connections_with_minute_work(session)
        count = enqueue_minute(queue, names, minute, now)
        # The drains after the sweeps: on the one queue, drains enqueued first held the
        # minute's moves back (1,000 connections: ~1 s; bench/scale.py --punctual).
        enqueue_drains(queue, session)
        enqueue_delivery_drains(queue, session)
    log.info("minute %s: %s of %s sweeps enqueued", f"{minute:%H:%M}Z", count, len(names))
    return count
