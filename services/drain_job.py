"""The drain job of a table of things to send, enqueued after the commits that queue its rows.

After a commit that queued rows, a drain is enqueued unless one already waits to start: a
Redis mark says one waits, and the drain clears it as it starts, so a commit while a drain
runs (it may have made its last claim) gets a drain of its own.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import redis
from rq import Queue

log = logging.getLogger(__name__)

WAITING_TTL = 120
"""Seconds a drain's waiting mark lasts at most (a job lost before it started)."""


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
