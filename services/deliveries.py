"""Delivery of automations' events to their webhooks, "Send again", and the Deliveries reads.

A drain (`services.sending`: claimed `FOR UPDATE SKIP LOCKED`, retried with growing waits,
then failed) POSTs each event as JSON, signed as the Standard Webhooks specification says
(the `standardwebhooks` package): `webhook-id` is the delivery's own id, the same on
every try, so a receiver can drop a repeat; `webhook-timestamp` is the try's time;
`webhook-signature` is `v1,<HMAC-SHA256>` of `id.timestamp.body` with the webhook's secret.
One delivery per transaction (`services.sending`), to public addresses only unless the
operator allows others (`services.webhook_http`). A 2xx answer is delivered; anything else
(another status, no answer within the timeout, an answer that is not HTTP or is malformed,
an address refused, a webhook the connection lacks) is that delivery's refused try, tried
again later, and never another delivery's stop. Each try is kept in
`adminium.delivery_attempts` (status, time, how long, the answer's first bytes, or why
there was none).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from math import floor
from typing import Any

import redis
import sqlalchemy as sa
from rq.timeouts import BaseTimeoutException
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import Session
from standardwebhooks.webhooks import Webhook as Signer

from core.setoff.automations import ANSWER_BYTES
from core.store.schema import deliveries, delivery_attempts
from core.writes.pipeline import WriteResult
from services import sending
from services.connections import get_connection
from services.drain_job import DrainJob
from services.events import Publisher
from services.sending import Drained, DropAnswer, Refused, plain_text
from services.storage import connection_engine
from services.sweep_ledger import QUEUE
from services.webhook_http import post
from services.webhooks import BlockedAddress, Endpoint, endpoints, private_allowed

log = logging.getLogger(__name__)

TIMEOUT = 10.0
"""Seconds a receiver has to answer one POST."""
DEADLINE = 50.0
DELIVERY_JOB = "jobs.webhooks.run_deliveries"
"""The job a commit that queued deliveries enqueues (named, so this layer imports no adapter)."""
DRAIN = DrainJob(DELIVERY_JOB, "deliveries", int(DEADLINE + TIMEOUT) + 10)
"""The delivery drain, enqueued after commits that queued deliveries."""
USER_AGENT = "Adminium-Webhooks/1"
NOUN = "delivery"


def webhook_id(connection: str, row: Mapping[str, Any]) -> str:
    """The one `webhook-id` of a delivery: its id, app and connection."""
    return f"delivery-{row['id']}.{row['app']}.{connection}"


def event_body(row: Mapping[str, Any]) -> str:
    """The JSON a delivery posts (the signature covers exactly these characters)."""
    return json.dumps(row["event"], separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def signed_headers(endpoint: Endpoint, msg_id: str, body: str, now: datetime) -> dict[str, str]:
    """The Standard Webhooks headers of one try, signed with the endpoint's secret."""
    at = now.astimezone(UTC)
    return {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": msg_id,
        "webhook-timestamp": str(floor(at.timestamp())),
        "webhook-signature": Signer(endpoint.secret).sign(msg_id, at, body),
    }


class _Sender:
    """Sends the claimed deliveries of one connection and keeps each try."""

    def __init__(
        self, connection: str, hooks: Mapping[str, Endpoint], timeout: float, allow_private: bool
    ) -> None:
        self.connection = connection
        self.hooks = hooks
        self.timeout = timeout
        self.allow_private = allow_private

    def __call__(self, conn: Connection, row: Mapping[str, Any], now: datetime) -> str:
        started = time.monotonic()
        status, ok, answer = self._try(row, now)
        elapsed = round((time.monotonic() - started) * 1000)
        answer = plain_text(answer)
        conn.execute(
            sa.insert(delivery_attempts).values(
                delivery_id=row["id"], at=now, status=status, ok=ok, answer=answer, ms=elapsed
            )
        )
        shown = f"{status} {answer}".strip() if status is not None else answer
        if not ok:
            raise Refused(shown)
        return shown

    def _try(self, row: Mapping[str, Any], now: datetime) -> tuple[int | None, bool, str]:
        """One POST: its status (None without an answer), whether it delivered, the answer's
        first bytes or why there was none. Whatever the POST raises is a try's reason here."""
        endpoint = self.hooks.get(row["webhook"])
        if endpoint is None:
            why = (
                f"connection {self.connection} has no webhook named {row['webhook']}:"
                f" adminium webhook add {self.connection} {row['webhook']} URL"
            )
            return None, False, why
        body = event_body(row)
        headers = signed_headers(endpoint, webhook_id(self.connection, row), body, now)
        try:
            status, answer = post(
                endpoint.url, body, headers, self.timeout, allow_private=self.allow_private
            )
        except BaseTimeoutException:
            raise
        except BlockedAddress as blocked:
            return None, False, str(blocked)
        except Exception as error:  # no answer, or one that is not HTTP: this try's reason
            return None, False, f"{type(error).__name__}: {error}".strip()[:ANSWER_BYTES]
        return status, 200 <= status < 300, answer


def drain(
    engine: Engine,
    connection: str,
    hooks: Mapping[str, Endpoint],
    *,
    clock: Callable[[], datetime],
    timeout: float = TIMEOUT,
    deadline: float = DEADLINE,
    monotonic: Callable[[], float] | None = None,
    allow_private: bool = False,
) -> Drained:
    """Deliver a connection's queued events whose time has come, one per transaction, to
    public addresses only unless `allow_private`; the run ends with its counts in the log."""
    done = sending.drain_due(
        engine,
        deliveries,
        _Sender(connection, hooks, timeout, allow_private),
        noun=NOUN,
        clock=clock,
        deadline=deadline,
        monotonic=monotonic,
    )
    log.log(
        logging.INFO if done.any else logging.DEBUG,
        "deliveries of connection %s: %s",
        connection,
        done.summary(),
    )
    return done


def drain_connection(
    session: Session,
    connection: str,
    *,
    clock: Callable[[], datetime],
    client: redis.Redis | None = None,
) -> Drained:
    """Deliver for a connection of the control plane (its own database holds the deliveries).

    With `client` (the job's Redis), the waiting mark is taken first: from then on a commit
    enqueues another drain, so none that this one's claims may miss goes unserved.
    """
    DRAIN.started(client, connection)
    engine = connection_engine(get_connection(session, connection))
    hooks = endpoints(session, connection)
    session.rollback()
    return drain(engine, connection, hooks, clock=clock, allow_private=private_allowed())


def send_again(engine: Engine, delivery: int, app: str, *, now: datetime) -> bool:
    """A failed delivery queued again from now; False when there is none of that id in that app."""
    return sending.send_again(engine, deliveries, delivery, app, now=now, noun=NOUN)


def drop(engine: Engine, delivery: int, app: str, *, now: datetime, actor: str) -> DropAnswer:
    """A person drops a delivery that has not gone (queued or failed): never posted."""
    return sending.drop(engine, deliveries, delivery, app, now=now, actor=actor, noun=NOUN)


def send_again_now(
    engine: Engine,
    connection: str,
    delivery: int,
    app: str,
    *,
    now: datetime,
    publisher: Publisher,
    actor: str,
) -> bool:
    """ "Send again" on a failed delivery: queued from now and the drain enqueued."""
    again = send_again(engine, delivery, app, now=now)
    if again:
        log.info("delivery %s of %s sent again by %s", delivery, app, actor)
        DRAIN.wake(publisher.client, QUEUE, connection)
    return again


def app_deliveries(engine: Engine, apps: list[str], *, limit: int = 100) -> list[dict[str, Any]]:
    """The apps' deliveries, newest first, each with its tries (`attempts_made`, oldest first)."""
    query = (
        sa.select(deliveries)
        .where(deliveries.c.app.in_(apps))
        .order_by(deliveries.c.id.desc())
        .limit(limit)
    )
    with engine.connect() as conn:
        found = [dict(r) for r in conn.execute(query).mappings()]
        ids = [row["id"] for row in found]
        tries = conn.execute(
            sa.select(delivery_attempts)
            .where(delivery_attempts.c.delivery_id.in_(ids))
            .order_by(delivery_attempts.c.id)
        ).mappings()
        by_delivery: dict[int, list[dict[str, Any]]] = {}
        for attempt in tries:
            by_delivery.setdefault(attempt["delivery_id"], []).append(dict(attempt))
    for row in found:
        row["attempts_made"] = by_delivery.get(row["id"], [])
    return found


def deliveries_queued(publisher: Publisher, *results: WriteResult) -> None:
    """After commits: when they queued deliveries, enqueue the connection's delivery drain.
    Best effort: the minute's drain is the safety net."""
    queued = [r for r in results if r.deliveries and r.events]
    if not queued or publisher.client is None:
        return
    DRAIN.wake(publisher.client, QUEUE, queued[0].events[0].connection)
