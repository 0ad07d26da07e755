"""Sending what writes queued (emails, webhook deliveries): claim, try, wait longer, give up.

One drain serves every such table (`adminium.outbox`, `adminium.deliveries`), one row at a
time (DESIGN.md, decision 11): a transaction claims the next row whose time has come
`FOR UPDATE SKIP LOCKED`, tries it, records what came of it and commits before the next
row is claimed, so any number of workers send each row once, and a row its receiver took
is marked sent before anything else can go wrong. Whatever a try raises is that row's
counted try, its reason kept as the answer: tried again after 1 min, 5 min, 30 min, 2 h
and 12 h, then failed. A row that can never go as it is (`Undeliverable`: an address with
a line break) is failed at its first try; one its sender says no longer goes (`Dropped`: a
reminder whose row reached a final state) is dropped with the reason, never tried again.
A person may drop a row that has not gone from a screen (`drop`); "Send again" queues a
failed row anew. A worker that dies mid-try takes its claim with it (the transaction rolls
back) and another tries that row again, with the same id so a receiver can tell.

A drain that cannot reach its database stops there, saying so, and returns what it did:
nothing it tries ever raises out of it (RQ's job timeout aside, which ends the job).

Each table has the columns `id`, `app`, `table_name`, `row_key`, `status` (queued, sent,
failed, dropped: `core.store.schema.MailStatus`), `attempts`, `send_at`, `sent_at`,
`answer`, `dropped_by` and `dropped_at`.

After a commit that queued rows, a drain is enqueued (`services.drain_job`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

import sqlalchemy as sa
from rq.timeouts import BaseTimeoutException
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
ANSWER_CHARS = 500
"""How much of a fault's words an answer keeps."""
DEADLINE = 50.0
"""Seconds a drain may run; what it did not reach goes next time."""

Send = Callable[[Connection, Mapping[str, Any], datetime], str]
"""Send one claimed row (in the claim's transaction, `now` the try's time): the answer to
record; or `Refused` with the answer, `Undeliverable` or `Dropped` with the reason. Anything
else it raises is a refusal too, its type and words the answer."""


class Refused(Exception):
    """A try that did not get through, and the answer to record (tried again later)."""

    def __init__(self, answer: str) -> None:
        super().__init__(answer)
        self.answer = answer


class Undeliverable(Exception):
    """A row that can never go as it is (its address holds a line break), and why: failed
    at this try, never tried again."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Dropped(Exception):
    """A row that is no longer sent, and why (recorded as its answer; never tried again)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Drained:
    """What one drain did: ids sent, tried again later, failed for good, dropped; and why
    it stopped early, if it did."""

    sent: list[int] = field(default_factory=list)
    retried: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    apps: set[str] = field(default_factory=set)
    """The apps whose rows it tried (their screens are told)."""
    dropped: list[int] = field(default_factory=list)
    stopped: str | None = None
    """Why the drain stopped before its queue was empty: its deadline, or its database."""

    def add(self, other: Drained) -> None:
        """Count another drain's rows in this one."""
        self.sent += other.sent
        self.retried += other.retried
        self.failed += other.failed
        self.dropped += other.dropped
        self.apps |= other.apps
        self.stopped = self.stopped or other.stopped

    @property
    def tried(self) -> list[int]:
        """Every row it tried: sent, tried again later, failed, dropped."""
        return [*self.sent, *self.retried, *self.failed, *self.dropped]

    @property
    def any(self) -> bool:
        """Whether the drain tried anything (or stopped early)."""
        return bool(self.tried) or self.stopped is not None

    def counts(self) -> dict[str, Any]:
        """Its counts, as a job's result and a log line give them."""
        return {
            "sent": len(self.sent),
            "retried": len(self.retried),
            "failed": len(self.failed),
            "dropped": len(self.dropped),
            "stopped": self.stopped,
        }

    def summary(self) -> str:
        """Its counts in words: `sent 3, to try again 1, failed 1, dropped 0`."""
        said = (
            f"sent {len(self.sent)}, to try again {len(self.retried)},"
            f" failed {len(self.failed)}, dropped {len(self.dropped)}"
        )
        return f"{said}; stopped early: {self.stopped}" if self.stopped else said


class Outcome(StrEnum):
    """What came of one try."""

    sent = "sent"
    retried = "retried"
    failed = "failed"
    dropped = "dropped"


def drain_due(
    engine: Engine,
    table: sa.Table,
    send: Send,
    *,
    noun: str,
    clock: Callable[[], datetime],
    deadline: float = DEADLINE,
    monotonic: Callable[[], float] | None = None,
    app: str | None = None,
) -> Drained:
    """Try a table's queued rows whose time has come (of one app, when named), one per
    transaction, until none is left, the deadline passes (the rest go next time) or the
    database fails (said in `stopped`; nothing is raised)."""
    tick = monotonic or time.monotonic
    started = tick()
    done = Drained()
    while True:
        try:
            tried = _try_next(
                engine, table, send, clock, noun, app, late=lambda: tick() - started >= deadline
            )
        except BaseTimeoutException:
            raise  # RQ's job timeout ends the job (the row's claim rolls back with it)
        except _TimeUp:
            done.stopped = f"its {deadline:g} s were up; the rest go with the next drain"
            break
        except Exception as error:  # the claim or the mark: the database itself
            done.stopped = f"the database failed: {_reason(error)}"
            log.error("%s drain stopped: %s", noun, done.stopped)
            log.debug("%s drain stopped", noun, exc_info=True)
            break
        if tried is None:
            break
        row, outcome = tried
        done.apps.add(row["app"])
        getattr(done, outcome.value).append(row["id"])
    return done


class _TimeUp(Exception):
    """A row is due, but the drain's time is up: it stays queued for the next drain."""


def _try_next(
    engine: Engine,
    table: sa.Table,
    send: Send,
    clock: Callable[[], datetime],
    noun: str,
    app: str | None,
    *,
    late: Callable[[], bool],
) -> tuple[dict[str, Any], Outcome] | None:
    """Claim the next due row, try it and record what came of it, in one transaction that
    commits before this returns; None when no row is due. `_TimeUp` when one is but the
    drain's time is up (the claim rolls back: the row stays queued)."""
    with engine.begin() as conn:
        row = _claim(conn, table, clock(), app)
        if row is None:
            return None
        if late():
            raise _TimeUp
        return row, _try(conn, table, send, row, clock(), noun)


def _claim(
    conn: Connection, table: sa.Table, now: datetime, app: str | None = None
) -> dict[str, Any] | None:
    query = (
        sa.select(table)
        .where(table.c.status == MailStatus.queued.value, table.c.send_at <= now)
        .order_by(table.c.send_at, table.c.id)
        .limit(1)
        .with_for_update(skip_locked=True)
    )
    if app is not None:
        query = query.where(table.c.app == app)
    found = conn.execute(query).mappings().first()
    return dict(found) if found is not None else None


def _try(
    conn: Connection, table: sa.Table, send: Send, row: Mapping[str, Any], now: datetime, noun: str
) -> Outcome:
    """Send one claimed row and record what came of it, in the claim's transaction. The
    sender works in a savepoint: what it wrote stays with its answer (a delivery's try), and
    is rolled back when it raises anything else, so the mark always lands."""
    where = f"{noun} {row['id']} of {row['app']}.{row['table_name']} key={row['row_key']}"
    # A plain SAVEPOINT (no RELEASE: the commit ends it), one round trip a try.
    conn.execute(_SAVEPOINT)
    try:
        answer = send(conn, row, now)
    except BaseTimeoutException:
        raise
    except (Refused, Dropped, Undeliverable) as said:
        return _said(conn, table, row, now, said, where)
    except Exception as error:  # any other fault is this row's try, never the drain's stop
        conn.execute(_ROLLBACK_TO)
        log.debug("%s: its try raised", where, exc_info=True)
        return _refused(conn, table, row, now, _reason(error), where)
    _update(conn, table, row["id"], status=MailStatus.sent.value, sent_at=now, answer=answer)
    return Outcome.sent


_SAVEPOINT = sa.text("SAVEPOINT adminium_try")
_ROLLBACK_TO = sa.text("ROLLBACK TO SAVEPOINT adminium_try")


def _said(
    conn: Connection,
    table: sa.Table,
    row: Mapping[str, Any],
    now: datetime,
    said: Refused | Dropped | Undeliverable,
    where: str,
) -> Outcome:
    """Record what a sender said of a row it did not send."""
    if isinstance(said, Refused):
        return _refused(conn, table, row, now, said.answer, where)
    if isinstance(said, Dropped):
        _update(conn, table, row["id"], status=MailStatus.dropped.value, answer=said.reason)
        log.info("%s dropped: %s", where, said.reason)
        return Outcome.dropped
    failed, attempts = MailStatus.failed.value, row["attempts"] + 1
    _update(conn, table, row["id"], status=failed, attempts=attempts, answer=said.reason)
    log.error("%s failed at once, never tried again: %s", where, said.reason)
    return Outcome.failed


def _reason(error: BaseException) -> str:
    """An exception as a one-line answer: its type and first line, at most ANSWER_CHARS (a
    database's own error rather than SQLAlchemy's wrapping of it)."""
    cause = getattr(error, "orig", None) or error
    text = str(cause).strip().splitlines()
    said = f"{type(cause).__name__}: {text[0]}" if text else type(cause).__name__
    return said[:ANSWER_CHARS]


def _refused(
    conn: Connection,
    table: sa.Table,
    row: Mapping[str, Any],
    now: datetime,
    answer: str,
    where: str,
) -> Outcome:
    attempts = row["attempts"] + 1
    if attempts <= len(RETRY_WAITS):
        wait = RETRY_WAITS[attempts - 1]
        _update(conn, table, row["id"], attempts=attempts, send_at=now + wait, answer=answer)
        log.warning("%s refused (%s): tried again in %s", where, answer, wait)
        return Outcome.retried
    failed = MailStatus.failed.value
    _update(conn, table, row["id"], attempts=attempts, status=failed, answer=answer)
    log.error("%s failed after %s tries: %s", where, attempts, answer)
    return Outcome.failed


def _update(conn: Connection, table: sa.Table, row_id: int, **values: Any) -> None:
    if isinstance(values.get("answer"), str):
        values["answer"] = plain_text(values["answer"])
    conn.execute(sa.update(table).where(table.c.id == row_id).values(**values))


def plain_text(text: str) -> str:
    """Text PostgreSQL keeps: a NUL (which a reply may hold) shown as U+FFFD."""
    return text.replace("\x00", "\ufffd")


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


class DropAnswer(StrEnum):
    """What a Drop did: dropped it, found nothing of that id, found it gone already (sent or
    dropped), or found it being tried this moment (look again in a second)."""

    dropped = "dropped"
    missing = "missing"
    gone = "gone"
    busy = "busy"


def drop(
    engine: Engine, table: sa.Table, row_id: int, app: str, *, now: datetime, actor: str, noun: str
) -> DropAnswer:
    """A person drops a row that has not gone (queued, a retry included, or failed): it is
    never tried again, and keeps its last answer. A row a drain is trying this moment is
    left alone (`busy`): the drain's mark comes first."""
    open_states = (MailStatus.queued.value, MailStatus.failed.value)
    with engine.begin() as conn:
        held = (
            sa.select(table.c.id)
            .where(table.c.id == row_id, table.c.app == app, table.c.status.in_(open_states))
            .with_for_update(skip_locked=True)
            .scalar_subquery()
        )
        found = conn.execute(
            sa.update(table)
            .where(table.c.id == held)
            .values(status=MailStatus.dropped.value, dropped_by=actor, dropped_at=now)
            .returning(table.c.id)
        ).first()
        if found is not None:
            log.info("%s %s of %s dropped by %s", noun, row_id, app, actor)
            return DropAnswer.dropped
        status = conn.execute(
            sa.select(table.c.status).where(table.c.id == row_id, table.c.app == app)
        ).scalar()
    if status is None:
        return DropAnswer.missing
    return DropAnswer.busy if status in open_states else DropAnswer.gone
