"""Delivery of the outbox over SMTP, "Send again", "Drop", and the reads the Outbox screen
shows.

A drain (`services.sending`: one email per transaction, claimed `FOR UPDATE SKIP LOCKED`,
its answer committed before the next is claimed; any fault a counted try, tried again after
1 min, 5 min, 30 min, 2 h and 12 h, then failed) sends each email over one SMTP session
(`services.smtp`), opened again after one that broke. An email whose address is no single
address (a line break in it: `core.outbox.addresses`) or that cannot be encoded is failed
at its first try, never tried again. A worker that dies mid-send takes its claim with it and
another sends that email again with the same `Message-ID`, so a resend is recognisable.
"""

from __future__ import annotations

import json
import logging
import smtplib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

import redis
import sqlalchemy as sa
from rq import Queue
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import Session

from core.outbox.addresses import address_fault
from core.outbox.reminders import Waiting, waiting_reminders, why_dropped
from core.store.schema import outbox
from core.store.store import Store
from core.writes.pipeline import WriteResult
from services import sending
from services.apps import app_store
from services.connections import get_connection, list_connections
from services.drain_job import DrainJob
from services.errors import NotFound
from services.events import Publisher, events_channel
from services.sending import (
    DEADLINE,
    Drained,
    DropAnswer,
    Dropped,
    Refused,
    Undeliverable,
)
from services.smtp import SmtpConfig, SmtpSession, build_message, reply_text
from services.storage import connection_engine
from services.sweep_ledger import QUEUE

log = logging.getLogger(__name__)

DRAIN_JOB = "jobs.outbox.run_drain"
"""The job a commit that queued mail enqueues (named, so this layer imports no adapter)."""
DRAIN = DrainJob(DRAIN_JOB, "outbox", int(DEADLINE) + 10)
"""The outbox drain, enqueued after commits that queued mail."""


def drain(
    engine: Engine,
    connection: str,
    config: SmtpConfig,
    *,
    clock: Callable[[], datetime],
    deadline: float = DEADLINE,
    monotonic: Callable[[], float] | None = None,
    stores: Sequence[Store] = (),
    app: str | None = None,
) -> Drained:
    """Send a connection's queued emails whose time has come (of one app, when named), one
    per transaction; the run ends with its counts in the log. A reminder of an app among
    `stores` whose row has reached a state it is not sent in is dropped unsent, with the
    reason (`core.outbox.reminders`)."""
    session = SmtpSession(config)
    by_app = {store.app.name: store for store in stores}
    try:
        done = sending.drain_due(
            engine,
            outbox,
            partial(_send, session, connection, by_app),
            noun="email",
            clock=clock,
            deadline=deadline,
            monotonic=monotonic,
            app=app,
        )
    finally:
        session.close()
    log.log(
        logging.INFO if done.any else logging.DEBUG,
        "outbox of connection %s via %s: %s",
        connection,
        config.shown,
        done.summary(),
    )
    return done


def _send(
    session: SmtpSession,
    connection: str,
    stores: Mapping[str, Store],
    conn: Connection,
    row: Mapping[str, Any],
    now: datetime,
) -> str:
    """Send one claimed email: the server's answer; Refused with it when it says no;
    Undeliverable when its address or a header cannot go into SMTP; Dropped with the reason
    when it is a reminder its row no longer takes."""
    store = stores.get(row["app"])
    if row["kind"] == "reminder" and store is not None:
        reason = why_dropped(conn, store, row["producer"], row["row_key"])
        if reason is not None:
            raise Dropped(reason)
    fault = address_fault(row["address"])
    if fault is not None:
        raise Undeliverable(fault)
    try:
        message = build_message(connection, row, session.config.mail_from).as_bytes()
    except Exception as error:  # the same words fail the same way every time
        raise Undeliverable(
            f"the email cannot be encoded: {type(error).__name__}: {error}"
        ) from error
    try:
        return session.send(message, row["address"])
    except smtplib.SMTPResponseException as error:
        raise Refused(f"{error.smtp_code} {reply_text(error.smtp_error)}") from error


def send_again(engine: Engine, mail: int, app: str, *, now: datetime) -> bool:
    """A failed email queued again from now, its tries counted anew; False when there is no
    failed email of that id in that app."""
    return sending.send_again(engine, outbox, mail, app, now=now, noun="email")


def drop(engine: Engine, mail: int, app: str, *, now: datetime, actor: str) -> DropAnswer:
    """A person drops an email that has not gone (queued or failed): never sent (`sending.drop`)."""
    return sending.drop(engine, outbox, mail, app, now=now, actor=actor, noun="email")


def app_emails(engine: Engine, app: str, *, limit: int = 100) -> list[dict[str, Any]]:
    """An app's emails, newest first."""
    query = sa.select(outbox).where(outbox.c.app == app).order_by(outbox.c.id.desc()).limit(limit)
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(query).mappings()]


def outbox_stores(session: Session, connection: str, app: str | None = None) -> list[Store]:
    """The stores of a connection's apps that keep an outbox (only `app`, when named; an app
    the connection lacks is NotFound)."""
    found = get_connection(session, connection)
    apps = [a for a in found.apps if app in (None, a.name)]
    if app is not None and not apps:
        raise NotFound(f"no app {app!r} on connection {connection!r}", {"app": app})
    return [app_store(a) for a in apps if a.model.outbox is not None]


def emails_by_id(engine: Engine, ids: Sequence[int]) -> list[dict[str, Any]]:
    """These emails as they are now, by id (what a drain did to each)."""
    if not ids:
        return []
    query = sa.select(outbox).where(outbox.c.id.in_(list(ids))).order_by(outbox.c.id)
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(query).mappings()]


def row_emails(engine: Engine, app: str, table: str, key: str) -> list[dict[str, Any]]:
    """The emails one row queued, newest first."""
    query = (
        sa.select(outbox)
        .where(outbox.c.app == app, outbox.c.table_name == table, outbox.c.row_key == key)
        .order_by(outbox.c.id.desc())
    )
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(query).mappings()]


def email(engine: Engine, app: str, mail: int) -> dict[str, Any] | None:
    """One email of an app, or None."""
    query = sa.select(outbox).where(outbox.c.id == mail, outbox.c.app == app)
    with engine.connect() as conn:
        found = conn.execute(query).mappings().first()
    return dict(found) if found is not None else None


def mail_queued(publisher: Publisher, *results: WriteResult) -> None:
    """After commits: when they queued email, enqueue the connection's drain and tell the
    Outbox screens. Best effort: the minute's drain is the safety net."""
    queued = [r for r in results if r.queued and r.events]
    if queued:
        event = queued[0].events[0]
        tell_outbox(publisher, event.connection, event.app, drain=True)


def wake_drain(publisher: Publisher, connection: str) -> None:
    """Enqueue a drain of the connection's outbox (after a sweep that queued reminders).
    Best effort: the minute's drain is the safety net."""
    DRAIN.wake(publisher.client, QUEUE, connection)


def outbox_event(connection: str, app: str) -> str:
    """The live event an Outbox screen listens for."""
    return json.dumps({"connection": connection, "outbox": app})


def enqueue_drain(queue: Queue, connection: str) -> bool:
    """Enqueue a drain of a connection unless one already waits to start (it will claim
    what this commit queued); whether one was enqueued (`services.drain_job.DrainJob`)."""
    return DRAIN.enqueue(queue, connection)


def connections_with_outbox(session: Session) -> list[str]:
    """Every connection with an app that has producers: the minute's drains."""
    return [
        c.name
        for c in list_connections(session)
        if any(app.model.outbox is not None and app.model.outbox.producers for app in c.apps)
    ]


def drain_connection(
    session: Session,
    connection: str,
    config: SmtpConfig,
    *,
    clock: Callable[[], datetime],
    publisher: Publisher,
    app: str | None = None,
) -> Drained:
    """Drain a connection of the control plane (its own database holds its outbox; one app's
    emails, when named), then tell the Outbox screens of the apps whose emails changed. The
    drain's waiting mark is cleared first (with the publisher's Redis): from then on a
    commit enqueues another."""
    DRAIN.started(publisher.client, connection)
    found = get_connection(session, connection)
    engine = connection_engine(found)
    stores = [app_store(kept) for kept in found.apps if kept.model.outbox is not None]
    session.rollback()
    done = drain(engine, connection, config, clock=clock, stores=stores, app=app)
    for app in sorted(done.apps):
        tell_outbox(publisher, connection, app, drain=False)
    return done


def send_again_now(
    store: Store, mail: int, *, now: datetime, publisher: Publisher, actor: str
) -> bool:
    """ "Send again" on a failed email: queued from now, the drain enqueued, the screens told."""
    again = send_again(store.engine, mail, store.app.name, now=now)
    if again:
        tell_outbox(publisher, store.connection, store.app.name, drain=True)
        log.info("email %s of %s sent again by %s", mail, store.app.name, actor)
    return again


def drop_now(
    store: Store, mail: int, *, now: datetime, publisher: Publisher, actor: str
) -> DropAnswer:
    """ "Drop" on an email that has not gone: never sent; the screens told."""
    answer = drop(store.engine, mail, store.app.name, now=now, actor=actor)
    if answer is DropAnswer.dropped:
        tell_outbox(publisher, store.connection, store.app.name, drain=False)
    return answer


def tell_outbox(publisher: Publisher, connection: str, app: str, *, drain: bool) -> None:
    """Tell an app's Outbox screens that its emails changed (and enqueue a drain). Best effort."""
    if publisher.client is None:
        return
    try:
        if drain:
            enqueue_drain(Queue(QUEUE, connection=publisher.client), connection)
        publisher.client.publish(events_channel(connection), outbox_event(connection, app))
    except redis.RedisError as error:
        log.warning("outbox of connection %s not told: %s", connection, type(error).__name__)


@dataclass(frozen=True)
class RowMail:
    """What a row page shows of its emails: those it queued, and the reminders it waits for."""

    emails: list[dict[str, Any]]
    waiting: list[Waiting]


def row_mail(store: Store, table: str, row: Mapping[str, Any], now: datetime) -> RowMail:
    """A row's emails, newest first, and its reminders still to come."""
    key = str(row.get(store.spec(table).key))
    with store.engine.connect() as conn:
        waiting = waiting_reminders(conn, store, table, row, now)
    return RowMail(row_emails(store.engine, store.app.name, table, key), waiting)
