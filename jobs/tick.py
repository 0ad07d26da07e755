"""The minute tick: enqueue one sweep per connection the minute job has work for.

Every clock enqueues the tick each minute; the first tick of a minute claims it, takes
the sweeps of earlier minutes that never started (dropped: logged, counted, shown), and
enqueues the minute's sweeps: those of the connections with something due in the minute
first (their due hints, `services.due_hints`), the first few of them in a pipeline of
their own so that the workers start on them at once, then the rest of them, then every
other connection; each part in fair order, the connections served longest ago first, so
a connection skipped in one minute is among the first of the next. A tick that runs
after its minute is over (Redis did not answer meanwhile) still enqueues its sweeps, at
once: its rows are due, and the next tick may be most of a minute away.

The minute's outbox and delivery drains (the safety net) are a job of their own, queued
behind the minute's sweeps: listing the connections they serve reads every app (about
1.5 s at 1,000 connections here), which the tick's worker spent before it could take a
due sweep.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from datetime import UTC, datetime

from rq import Queue, get_current_job
from rq.queue import EnqueueData

from jobs.outbox import enqueue_drains
from jobs.sweep import (
    FAILURE_TTL,
    RESULT_TTL,
    WAIT_SECONDS,
    control_url,
    minute_of,
    sweep_data,
    wait_left,
)
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
FIRST_FLUSH = 20
"""How many of the due sweeps go in the tick's first pipeline, before the others are built:
enough to keep the workers busy while the rest of the due part goes in."""
DRAINS_TIMEOUT = 50
"""The drains job's `job_timeout`, as the tick's own (`jobs.cron`)."""


def claim_key(queue: Queue, minute: datetime) -> str:
    """The key the first tick of a minute sets; later ticks of that minute find it."""
    return f"adminium:tick:{queue.name}:{minute_of(minute):%Y%m%dT%H%MZ}"


def enqueue_minute(
    queue: Queue,
    names: Sequence[str],
    minute: datetime,
    now: datetime,
    after: Sequence[EnqueueData] = (),
) -> int:
    """Enqueue each connection's sweep of `minute` once, due first, each part longest
    unserved first, then the jobs `after` (behind them all); how many sweeps this call
    enqueued (none, and nothing after them, when another tick of the minute did)."""
    client = queue.connection
    minute = minute_of(minute)
    if not client.set(claim_key(queue, minute), 1, nx=True, ex=CLAIM_SECONDS):
        return 0
    # Taken before this minute's marks are set (a mark set would hide an older one), and
    # counted and logged once the sweeps are in.
    drops = take_dropped(client, minute)
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
    # Those with something due in this minute first (their hints), each part in fair order:
    # the first few due in a pipeline of their own, so workers start on them while the
    # other parts are built and go in.
    due, rest = due_first(client, fair_order(client, names), minute)
    parts = [part for part in (due[:FIRST_FLUSH], due[FIRST_FLUSH:], rest) if part] or [[]]
    for index, part in enumerate(parts):
        with client.pipeline() as pipe:
            if part:
                queue.enqueue_many([sweep_data(name, minute, ttl) for name in part], pipeline=pipe)
                if not late:
                    mark_waiting(pipe, part, minute)
            if index == len(parts) - 1 and after:
                # Behind the minute's sweeps, in the pipeline of the last of them.
                queue.enqueue_many(list(after), pipeline=pipe)
            pipe.execute()
    count_drops(client, drops)
    return len(due) + len(rest)


def drains_data(minute: datetime, ttl: int) -> EnqueueData:
    """The minute's drains job (`enqueue_minute_drains`), once a minute."""
    return Queue.prepare_data(
        enqueue_minute_drains,
        job_id=f"adminium-drains-{minute_of(minute):%Y%m%dT%H%MZ}",
        ttl=ttl,
        timeout=DRAINS_TIMEOUT,
        result_ttl=RESULT_TTL,
        failure_ttl=FAILURE_TTL,
        description=f"drains {minute_of(minute):%H:%M}Z",
    )


def enqueue_minute_drains() -> dict[str, int]:
    """The RQ job queued behind the minute's sweeps: each connection with producers gets
    an outbox drain, each with automations a delivery drain (one waiting already serves)."""
    job = get_current_job()
    client = job.connection if job is not None else connect(os.environ["REDIS_URL"])
    queue = Queue(QUEUE, connection=client)
    with open_session(control_url()) as session:
        outbox = enqueue_drains(queue, session)
        deliveries = enqueue_delivery_drains(queue, session)
    return {"outbox": outbox, "deliveries": deliveries}


def enqueue_sweeps() -> int:
    """The cron job: enqueue this minute's sweeps, and behind them its drains job; returns
    how many sweeps this tick enqueued."""
    job = get_current_job()
    now = datetime.now(UTC)
    # The minute is the tick's own, so every clock's tick of one minute names the same jobs.
    minute = minute_of(job.enqueued_at if job is not None and job.enqueued_at else now)
    client = job.connection if job is not None else connect(os.environ["REDIS_URL"])
    queue = Queue(QUEUE, connection=client)
    with open_session(control_url()) as session:
        names = connections_with_minute_work(session)
    # The drains wait as long as the sweeps may (a full wait when the tick is late).
    ttl = wait_left(minute, now)
    ttl = ttl if ttl > 0 else WAIT_SECONDS
    count = enqueue_minute(queue, names, minute, now, after=[drains_data(minute, ttl)])
    log.debug("minute %s: %s of %s sweeps enqueued", f"{minute:%H:%M}Z", count, len(names))
    return count
