"""The webhook delivery job: RQ glue around `services.deliveries`.

`run_deliveries` posts one connection's due events. A commit that queued deliveries marks
the connection due and enqueues it (`services.deliveries.deliveries_queued`); the minute's
tick enqueues it for every connection with automations (`enqueue_delivery_drains`): the
safety net, and the retries' clock.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from rq import Queue, get_current_job
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from core.basics.errors import AdminiumError
from jobs.sweep import control_url
from services.deliveries import DRAIN, drain_connection
from services.errors import first_line
from services.sending import Drained
from services.storage import open_session
from services.webhooks import connections_with_automations

log = logging.getLogger(__name__)


def run_deliveries(connection: str) -> dict[str, Any]:
    """The RQ job: deliver a connection's due events now; its counts are the job's result.
    A drain never raises what one delivery did (`services.sending`)."""
    job = get_current_job()
    client = job.connection if job is not None else None
    try:
        with open_session(control_url()) as session:
            done = drain_connection(
                session, connection, clock=lambda: datetime.now(UTC), client=client
            )
    except (SQLAlchemyError, AdminiumError) as error:
        # The control plane, or the connection gone from it: said once, no traceback.
        log.error(
            "delivery drain of connection %s did not start: %s", connection, first_line(error)
        )
        return Drained(stopped=f"it did not start: {first_line(error)}").counts()
    return done.counts()


def enqueue_delivery_drains(queue: Queue, session: Session) -> int:
    """The minute's safety net, from the tick: each connection with automations gets a
    delivery drain (one waiting already serves); how many connections."""
    names = connections_with_automations(session)
    for name in names:
        DRAIN.enqueue(queue, name)
    log.debug("delivery drains enqueued for %s connections", len(names))
    return len(names)
