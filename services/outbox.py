"""Delivery of the outbox over SMTP, "Send again", and the reads the Outbox screen shows.

A drain (`services.sending`: claimed `FOR UPDATE SKIP LOCKED` a batch per transaction,
the answer recorded in it, tried again after 1 min, 5 min, 30 min, 2 h and 12 h, then
failed) sends each email over one SMTP session. A worker that dies mid-batch takes its
claim with it and another sends the batch again with the same `Message-ID`, so a resend
is recognisable. `SMTP_URL` (`smtp://user:pass@host:587`, STARTTLS; `smtps://…`) and `MAIL_FROM`
configure it; the URL is shown and logged only through `hide_password`. The server's
certificate is always verified, against the system's CAs or, with `SMTP_CA_FILE`, the CAs
in that file (a private CA; the tests' own).
"""

from __future__ import annotations

import json
import logging
import os
import re
import smtplib
import ssl
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from email.charset import QP, Charset
from email.header import Header
from email.message import Message
from email.mime.text import MIMEText
from email.utils import format_datetime
from functools import partial
from typing import Any
from urllib.parse import unquote, urlsplit

import redis
import sqlalchemy as sa
from rq import Queue
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import Session

from core.outbox import outbox
from core.reminders import Waiting, waiting_reminders, why_dropped
from core.store import Store
from core.writes import WriteResult
from services import sending
from services.apps import app_store
from services.connections import get_connection, list_connections
from services.errors import NotFound
from services.events import Publisher, events_channel
from services.sending import DEADLINE, Drained, DrainJob, Dropped, Refused
from services.sending import RETRY_WAITS as RETRY_WAITS
from services.storage import connection_engine
from services.sweep_ledger import QUEUE
from services.urls import hide_password

log = logging.getLogger(__name__)

SMTP_TIMEOUT = 20.0
DEFAULT_FROM = "adminium@localhost"
LOOPBACK = ("localhost", "127.0.0.1", "::1")
DRAIN_JOB = "jobs.outbox.run_drain"
"""The job a commit that queued mail enqueues (named, so this layer imports no adapter)."""
DRAIN = DrainJob(DRAIN_JOB, "outbox", int(DEADLINE) + 10)
"""The outbox drain, enqueued after commits that queued mail."""


@dataclass(frozen=True)
class SmtpConfig:
    """Where mail goes: the SMTP URL, the sender's address, and the CAs that may sign the
    server's certificate (None: the system's)."""

    url: str
    mail_from: str = DEFAULT_FROM
    ca_file: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> SmtpConfig:
        """SMTP_URL, MAIL_FROM and SMTP_CA_FILE; without SMTP_URL, the embedded server's port
        on the loopback."""
        url = environ.get("SMTP_URL") or "smtp://127.0.0.1:8025"
        return cls(
            url, environ.get("MAIL_FROM") or DEFAULT_FROM, environ.get("SMTP_CA_FILE") or None
        )

    @property
    def shown(self) -> str:
        return hide_password(self.url)


class _Session:
    """One SMTP session, opened at the first email and reopened after a broken one."""

    def __init__(self, config: SmtpConfig) -> None:
        self.config = config
        self.smtp: smtplib.SMTP | None = None

    def open(self) -> smtplib.SMTP:
        if self.smtp is None:
            self.smtp = connect(self.config.url, ca_file=self.config.ca_file)
        return self.smtp

    def close(self) -> None:
        if self.smtp is not None:
            try:
                self.smtp.quit()
            except (smtplib.SMTPException, OSError):
                self.smtp.close()
            self.smtp = None

    def send(self, message: Message, to: str) -> str:
        """Send one message; the server's answer to its data. Raises on any refusal."""
        smtp = self.open()
        try:
            for call, ok in (
                (lambda: smtp.mail(self.config.mail_from), (250,)),
                (lambda: smtp.rcpt(to), (250, 251)),
                (lambda: smtp.data(message.as_bytes()), (250,)),
            ):
                code, text = call()
                if code not in ok:
                    smtp.rset()
                    raise smtplib.SMTPResponseException(code, text)
            return f"{code} {_text(text)}"
        except (smtplib.SMTPServerDisconnected, OSError):
            # A broken session is dropped; the next email opens a new one.
            smtp.close()
            self.smtp = None
            raise


def connect(url: str, *, ca_file: str | None = None) -> smtplib.SMTP:
    """An SMTP session at `url`: smtps:// is TLS from the start; smtp:// takes STARTTLS when
    offered, and insists on it off the loopback; with a user, logged in. The certificate is
    verified (chain and host name) against the system's CAs, or only those in `ca_file`."""
    parts = urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    context = ssl.create_default_context(cafile=ca_file)
    if parts.scheme == "smtps":
        smtp: smtplib.SMTP = smtplib.SMTP_SSL(timeout=SMTP_TIMEOUT, context=context)
    elif parts.scheme == "smtp":
        smtp = smtplib.SMTP(timeout=SMTP_TIMEOUT)
    else:
        raise ValueError(f"SMTP_URL is smtp:// or smtps://, not {parts.scheme or '(none)'}://")
    # Connected here rather than by the constructor, which leaves the socket open when the
    # server's greeting never comes; TLS checks the certificate against `_host`, which only
    # the constructor would set.
    smtp._host = host
    try:
        code, greeting = smtp.connect(host, parts.port or (465 if parts.scheme == "smtps" else 587))
        if code != 220:
            raise smtplib.SMTPConnectError(code, greeting)
        # EHLO first on either scheme: smtplib's mail() never says it (only sendmail() and
        # login() do), and a server may refuse MAIL without it.
        smtp.ehlo()
        if parts.scheme == "smtp":
            if smtp.has_extn("starttls"):
                smtp.starttls(context=context)
                smtp.ehlo()
            elif host not in LOOPBACK:
                raise smtplib.SMTPNotSupportedError(f"{host} offers no STARTTLS")
        if parts.username:
            smtp.login(unquote(parts.username), unquote(parts.password or ""))
    except (smtplib.SMTPException, OSError):
        smtp.close()
        raise
    return smtp


MAIL_BATCH = 200
"""Emails claimed per transaction: a mail server answers in a millisecond or two, so a
batch is a fraction of a second (and a worker that dies resends at most this many)."""


def message_id(connection: str, row: Mapping[str, Any], mail_from: str) -> str:
    """The one Message-ID of an outbox row: its id, app and connection, at the sender's domain."""
    domain = mail_from.rpartition("@")[2] or "localhost"
    where = re.sub(r"[^A-Za-z0-9.-]", "-", f"{row['app']}.{connection}")
    return f"<outbox-{row['id']}.{where}@{domain}>"


def build_message(connection: str, row: Mapping[str, Any], mail_from: str) -> Message:
    """An outbox row as the email its reader gets: plain text in UTF-8, headers encoded
    where they need it. (The classic `email` API: the modern one took a millisecond an
    email to build, more than the sending.)"""
    body: str = row["body"]
    message = MIMEText(body, "plain", "us-ascii" if body.isascii() else _UTF8)
    message["From"] = mail_from
    message["To"] = _header(row["address"])
    message["Subject"] = _header(row["subject"])
    message["Date"] = format_datetime(row["queued_at"])
    message["Message-ID"] = message_id(connection, row, mail_from)
    return message


_UTF8 = Charset("utf-8")
_UTF8.body_encoding = QP  # readable as it is kept (instance/mail), unlike base64


def _header(text: str) -> str | Header:
    return text if text.isascii() else Header(text, "utf-8")


def drain(
    engine: Engine,
    connection: str,
    config: SmtpConfig,
    *,
    clock: Callable[[], datetime],
    batch: int = MAIL_BATCH,
    deadline: float = DEADLINE,
    monotonic: Callable[[], float] | None = None,
    stores: Sequence[Store] = (),
    app: str | None = None,
) -> Drained:
    """Send a connection's queued emails whose time has come (of one app, when named), a
    batch per transaction. A reminder of an app among `stores` whose row has reached a
    state it is not sent in is dropped unsent, with the reason (`core.reminders`)."""
    session = _Session(config)
    by_app = {store.app.name: store for store in stores}
    try:
        done = sending.drain_due(
            engine,
            outbox,
            partial(_send, session, connection, by_app),
            noun="email",
            clock=clock,
            batch=batch,
            deadline=deadline,
            monotonic=monotonic,
            app=app,
        )
    finally:
        session.close()
    if done.any:
        log.info(
            "outbox of connection %s via %s: sent %s, to try again %s, failed %s, dropped %s",
            connection,
            config.shown,
            len(done.sent),
            len(done.retried),
            len(done.failed),
            len(done.dropped),
        )
    return done


def _send(
    session: _Session,
    connection: str,
    stores: Mapping[str, Store],
    conn: Connection,
    row: Mapping[str, Any],
    now: datetime,
) -> str:
    """Send one claimed email: the server's answer; Refused with it when it says no; Dropped
    with the reason when it is a reminder its row no longer takes."""
    store = stores.get(row["app"])
    if row["kind"] == "reminder" and store is not None:
        reason = why_dropped(conn, store, row["producer"], row["row_key"])
        if reason is not None:
            raise Dropped(reason)
    message = build_message(connection, row, session.config.mail_from)
    try:
        return session.send(message, row["address"])
    except smtplib.SMTPResponseException as error:
        raise Refused(f"{error.smtp_code} {_text(error.smtp_error)}") from error
    except (smtplib.SMTPException, OSError) as error:
        raise Refused(f"{type(error).__name__}: {error}") from error


def _text(text: bytes | str) -> str:
    return text.decode(errors="replace") if isinstance(text, bytes) else str(text)


def send_again(engine: Engine, mail: int, app: str, *, now: datetime) -> bool:
    """A failed email queued again from now, its tries counted anew; False when there is no
    failed email of that id in that app."""
    return sending.send_again(engine, outbox, mail, app, now=now, noun="email")


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
    what this commit queued); whether one was enqueued (`services.sending.DrainJob`)."""
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
