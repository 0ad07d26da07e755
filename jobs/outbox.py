"""The outbox jobs: RQ glue around `services.outbox`.

`run_drain` sends one connection's due emails. A commit that queued mail, and a sweep that
queued reminders, enqueue it unless one already waits to start (`services.drain_job.DrainJob`:
the drain clears its waiting mark as it starts, so mail queued while it runs gets a drain
of its own); the minute's tick enqueues it for every connection with producers
(`enqueue_drains`): the safety net, and the retries' clock.
"""

from __future__ import annotations

import logging
import os
from datetime import UTC, datetime
from typing import Any

from rq import Queue, get_current_job
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from core.basics.errors import AdminiumError
from services.errors import first_line
from services.events import Publisher
from services.outbox import (
    connections_with_outbox,
    drain_connection,
    enqueue_drain,
)
from services.sending import Drained
from services.smtp import SmtpConfig
from services.storage import open_session

log = logging.getLogger(__name__)


def _control_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if not url:
        raise RuntimeError("DATABASE_URL is not set: the outbox cannot find its connections")
    return url


def run_drain(connection: str) -> dict[str, Any]:
    """The RQ job: send a connection's due emails now; its counts are the job's result.
    A drain never raises what one email did (`services.sending`)."""
    job = get_current_job()
    publisher = Publisher(job.connection if job is not None else None)
    try:
        with open_session(_control_url()) as session:
            done = drain_connection(
                session,
                connection,
                SmtpConfig.from_env(),
                clock=lambda: datetime.now(UTC),
                publisher=publisher,
            )
    except (SQLAlchemyError, AdminiumError) as error:
        # The control plane, or the connection gone from it: said once, no traceback.
        log.error("outbox drain of connection %s did not start: %s", connection, first_line(error))
        return Drained(stopped=f"it did not start: {first_line(error)}").counts()
    return done.counts()


def enqueue_drains(queue: Queue, session: Session) -> int:
    """The minute's safety net, from the tick: each connection with producers gets a drain
    (one waiting already serves); how many connections."""
    names = connections_with_outbox(session)
    for name in names:
        enqueue_drain(queue, name)
    log.debug("outbox drains enqueued for %s connections", len(names))
    return len(names)
