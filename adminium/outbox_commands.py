"""Console commands for the outbox: list a connection's emails, or send the due ones now.

The same operations as the Outbox screen and the drain job: `services.outbox.app_emails`
reads the list (newest first), `services.outbox.drain_connection` sends what is due (over
`SMTP_URL`, else smtp://127.0.0.1:8025, as a worker does), and each
email it tried is printed with its answer. Times are on the venue's clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import click

from adminium.control_commands import control_plane, redis_publisher
from adminium.sweep_commands import venue_time
from services.outbox import app_emails, drain_connection, emails_by_id, outbox_stores
from services.smtp import SmtpConfig

LIST_LIMIT = 100
"""How many emails `adminium outbox list` shows per app, newest first."""


def _fate(mail: Mapping[str, Any], zone: ZoneInfo) -> str:
    """Where an email is, with its answer: sent (when), failed or dropped (why), queued
    (when it goes, and the last answer of a try)."""
    status, answer = mail["status"], mail["answer"]
    if status == "sent":
        return f"sent {venue_time(mail['sent_at'].replace(microsecond=0), zone)}: {answer}"
    if status in ("failed", "dropped"):
        tries = f" after {mail['attempts']} tries" if status == "failed" else ""
        return f"{status}{tries}: {answer}"
    goes = f"queued, goes {venue_time(mail['send_at'], zone)}"
    return f"{goes}; tried {mail['attempts']}x: {answer}" if mail["attempts"] else goes


def _line(app: str, mail: Mapping[str, Any], zone: ZoneInfo) -> str:
    """One email as one line."""
    return (
        f"email {mail['id']} {app}.{mail['table_name']} {mail['row_key']} {mail['kind']}"
        f" {mail['producer']} to {mail['address']}: {mail['subject']!r}; queued"
        f" {venue_time(mail['queued_at'], zone)}; {_fate(mail, zone)}"
    )


@click.group("outbox")
def outbox_group() -> None:
    """The outbox: the emails a connection's apps queued, and their fate."""


@outbox_group.command("list")
@click.argument("connection")
@click.argument("app", required=False)
def outbox_list(connection: str, app: str | None) -> None:
    """The emails of CONNECTION (of APP only, when named), newest first: queued, sent,
    failed and dropped, each with its answer."""
    with control_plane() as session:
        stores = outbox_stores(session, connection, app)
        listed = [(s, app_emails(s.engine, s.app.name, limit=LIST_LIMIT)) for s in stores]
    if not any(emails for _, emails in listed):
        click.echo(f"no email on {connection}" + (f" for {app}" if app else ""))
    for store, emails in listed:
        for mail in emails:
            click.echo(_line(store.app.name, mail, store.zone))


@outbox_group.command("send")
@click.argument("connection")
@click.argument("app", required=False)
def outbox_send(connection: str, app: str | None) -> None:
    """Send the due emails of CONNECTION (of APP only, when named) now, as the drain job
    does, over SMTP_URL (unset: smtp://127.0.0.1:8025, as a worker outside `adminium run`);
    print each email tried with its answer."""
    config = SmtpConfig.from_env()
    with control_plane() as session, redis_publisher() as publisher:
        stores = outbox_stores(session, connection, app)
        done = drain_connection(
            session,
            connection,
            config,
            clock=lambda: datetime.now(UTC),
            publisher=publisher,
            app=app,
        )
    zones = {s.app.name: s.zone for s in stores}
    engine = stores[0].engine if stores else None
    tried = emails_by_id(engine, done.tried) if engine is not None else []
    for mail in tried:
        click.echo(_line(mail["app"], mail, zones.get(mail["app"], ZoneInfo("UTC"))))
    click.echo(f"outbox of {connection} via {config.shown}: {done.summary()}")
