"""Sending what writes queued (emails, webhook deliveries): claim, try, wait longer, give up.

One drain serves every such table (`adminium.outbox`, `adminium.deliveries`): it claims
queued rows whose time has come `FOR UPDATE SKIP LOCKED`, a batch per transaction, tries
each and records what came of it in the same transaction, so any number of workers send
each row once. A worker that dies mid-batch takes its claim with it (the transaction
rolls back) and another sends the batch again, with the same id so a receiver can tell.
A refusal is tried again after 1 min, 5 min, 30 min, 2 h and 12 h, then the row is failed
with the last answer; "Send again" queues a failed row anew.

Each table has the columns `id`, `app`, `table_name`, `row_key`, `status` (queued, sent,
failed, dropped: `core.store.schema.MailStatus`), `attempts`, `send_at`, `sent_at` and `answer`.
A row its sender says no longer goes (`Dropped`: a reminder whose row reached a final
state) is marked dropped with the reason as its answer, and never tried again.

After a commit that queued rows, a drain is enqueued unless one already waits to start
(`DrainJob`): a Redis mark says one waits, and the drain clears it as it starts, so a
commit while a drain runs (it may have made its last claim) gets a drain of its own.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import redis
import sqlalchemy as sa
from rq import Queue
from sqlalchemy.engine import Connection, Engine

from core.store.schema import MailStatus

log = logging.getLogger(__name__)

RETRY_WAITS = (
    timedelta(minutes=1),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=12),
)
"""The waits before each new try of a refused row; after the last, it is failed."""
BATCH = 50
"""Rows claimed per transaction."""
DEADLINE = 50.0
"""Seconds a drain may run; what it did not reach goes next time."""
WAITING_TTL = 120
"""Seconds a drain's waiting mark lasts at most (a job lost before it started)."""

Send = Callable[[Connection, Mapping[str, Any], datetime], str]
"""Send one claimed row (in the claim's transaction, `now` the try's time): the answer to
record, or `Refused` with the answer."""


@dataclass(frozen=True)
class DrainJob:
    """The drain job of one table, enqueued after the commits that queue its rows.

    Not one job id per connection: a drain already running may have made its last claim,
    so a commit during it needs a drain of its own. Drains of one connection side by side
    share the work through SKIP LOCKED. The mark expires, so a lost job is not waited on.
    """

    job: str
    """The job's dotted name (named, so the operations layer imports no adapter)."""
    kind: str
    """The word in the waiting mark's key and the job's description."""
    timeout: int
    """Seconds the job may run."""

    def waiting_key(self, connection: str) -> str:
        """The Redis key held while a drain of the connection waits in the queue."""
        return f"adminium:{self.kind}:waiting:{connection}"

    def enqueue(self, queue: Queue, connection: str) -> bool:
        """Enqueue a drain of the connection unless one already waits to start (it will
        claim what this commit queued); whether one was enqueued."""
        key = self.waiting_key(connection)
        if not queue.connection.set(key, 1, nx=True, ex=WAITING_TTL):
            log.debug("%s drain of connection %s already waiting", self.kind, connection)
            return False
        try:
            queue.enqueue(
                self.job,
                connection,
                job_timeout=self.timeout,
                result_ttl=0,
                failure_ttl=60,
                description=f"{self.kind} {connection}",
            )
        except redis.RedisError:
            queue.connection.delete(key)
            raise
        return True

    def started(self, client: redis.Redis | None, connection: str) -> None:
        """A drain starts: it clears the mark, so from now on a commit enqueues another."""
        if client is not None:
            client.delete(self.waiting_key(connection))

    def wake(self, client: redis.Redis | None, queue_name: str, connection: str) -> None:
        """After a commit: enqueue a drain of the connection. Best effort: the minute's
        drain is the safety net."""
        if client is None:
            return
        try:
            self.enqueue(Queue(queue_name, connection=client), connection)
        except redis.RedisError as error:
            log.warning(
                "%s drain of connection %s not enqueued: %s",
                self.kind, connection, type(error).__name__,
            )  # fmt: skip


class Refused(Exception):
    """A try that did not get through, and the answer to record (tried again later)."""

    def __init__(self, answer: str) -> None:
        super().__init__(answer)
        self.answer = answer


class Dropped(Exception):
    """A row that is no longer sent, and why (recorded as its answer; never tried again)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Drained:
    """What one drain did: ids sent, tried again later, failed for good."""

    sent: list[int] = field(default_factory=list)
    retried: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    apps: set[str] = field(default_factory=set)
    """The apps whose rows it tried (their screens are told)."""
    dropped: list[int] = field(default_factory=list)

    def add(self, other: Drained) -> None:
        """Count another drain's rows in this one."""
        self.sent += other.sent
        self.retried += other.retried
        self.failed += other.failed
        self.dropped += other.dropped
        self.apps |= other.apps

    @property
    def tried(self) -> list[int]:
        """Every row it tried: sent, tried again later, failed, dropped."""
        return [*self.sent, *self.retried, *self.failed, *self.dropped]

    @property
    def any(self) -> bool:
        """Whether the drain tried anything."""
        return bool(self.sent or self.retried or self.failed or self.dropped)


def drain_due(
    engine: Engine,
    table: sa.Table,
    send: Send,
    *,
    noun: str,
    clock: Callable[[], datetime],
    batch: int = BATCH,
    deadline: float = DEADLINE,
    monotonic: Callable[[], float] | None = None,
    app: str | None = None,
) -> Drained:
    """Try a table's queued rows whose time has come (of one app, when named), a batch per
    transaction, until none is left or the deadline passes (rows claimed but not reached
    stay queued for next time)."""
    tick = monotonic or time.monotonic
    started = tick()
    done = Drained()
    while tick() - started < deadline:
        with engine.begin() as conn:
            claimed = _claim(conn, table, clock(), batch, app)
            sent: list[dict[str, Any]] = []
            for row in claimed:
                if tick() - started >= deadline:
                    _record_sent(conn, table, sent)
                    return done
                _try(conn, table, send, row, clock(), done, noun, sent)
            _record_sent(conn, table, sent)
        if len(claimed) < batch:
            break
    return done


def _claim(
    conn: Connection, table: sa.Table, now: datetime, batch: int, app: str | None = None
) -> list[dict[str, Any]]:
    query = (
        sa.select(table)
        .where(table.c.status == MailStatus.queued.value, table.c.send_at <= now)
        .order_by(table.c.send_at, table.c.id)
        .limit(batch)
        .with_for_update(skip_locked=True)
    )
    if app is not None:
        query = query.where(table.c.app == app)
    return [dict(r) for r in conn.execute(query).mappings()]


def _try(
    conn: Connection,
    table: sa.Table,
    send: Send,
    row: Mapping[str, Any],
    now: datetime,
    done: Drained,
    noun: str,
    sent: list[dict[str, Any]],
) -> None:
    """Send one claimed row and record what came of it, in the claim's transaction (a row
    sent joins `sent`, recorded with the rest of its batch)."""
    done.apps.add(row["app"])
    try:
        answer = send(conn, row, now)
    except Refused as refused:
        _refused(conn, table, row, now, refused.answer, done, noun)
    except Dropped as dropped:
        _update(conn, table, row["id"], status=MailStatus.dropped.value, answer=dropped.reason)
        done.dropped.append(row["id"])
        log.info(
            "%s %s of %s.%s key=%s dropped: %s",
            noun, row["id"], row["app"], row["table_name"], row["row_key"], dropped.reason,
        )  # fmt: skip
    else:
        sent.append({"b_id": row["id"], "b_sent_at": now, "b_answer": answer})
        done.sent.append(row["id"])


def _record_sent(conn: Connection, table: sa.Table, sent: list[dict[str, Any]]) -> None:
    """A batch's sent rows recorded in one statement (executemany), before its commit."""
    if sent:
        conn.execute(
            sa.update(table)
            .where(table.c.id == sa.bindparam("b_id"))
            .values(
                status=MailStatus.sent.value,
                sent_at=sa.bindparam("b_sent_at"),
                answer=sa.bindparam("b_answer"),
            ),
            sent,
        )


def _refused(
    conn: Connection,
    table: sa.Table,
    row: Mapping[str, Any],
    now: datetime,
    answer: str,
    done: Drained,
    noun: str,
) -> None:
    attempts = row["attempts"] + 1
    if attempts <= len(RETRY_WAITS):
        wait = RETRY_WAITS[attempts - 1]
        _update(conn, table, row["id"], attempts=attempts, send_at=now + wait, answer=answer)
        done.retried.append(row["id"])
        log.warning(
            "%s %s of %s.%s key=%s refused (%s): tried again in %s",
            noun, row["id"], row["app"], row["table_name"], row["row_key"], answer, wait,
        )  # fmt: skip
    else:
        failed = MailStatus.failed.value
        _update(conn, table, row["id"], attempts=attempts, status=failed, answer=answer)
        done.failed.append(row["id"])
        log.error(
            "%s %s of %s.%s key=%s failed after %s tries: %s",
            noun, row["id"], row["app"], row["table_name"], row["row_key"], attempts, answer,
        )  # fmt: skip


def _update(conn: Connection, table: sa.Table, row_id: int, **values: Any) -> None:
    conn.execute(sa.update(table).where(table.c.id == row_id).values(**values))


def send_again(
    engine: Engine, table: sa.Table, row_id: int, app: str, *, now: datetime, noun: str
) -> bool:
    """A failed row queued again from now, its tries counted anew; False when there is no
    failed row of that id in that app."""
    with engine.begin() as conn:
        found = conn.execute(
            sa.update(table)
            .where(
                table.c.id == row_id,
                table.c.app == app,
                table.c.status == MailStatus.failed.value,
            )
            .values(status=MailStatus.queued.value, send_at=now, attempts=0)
            .returning(table.c.id)
        ).first()
    if found is not None:
        log.info("%s %s of %s queued again", noun, row_id, app)
    return found is not None
