"""The outbox: emails queued in the write's own transaction, in `adminium.outbox`.

A message producer queues one email when a write makes its watched column take a watched
value (from another value, or on a new row); a reminder is queued by the minute job
(`core.outbox.reminders`). Never for sample data: not by the sample writer, and not for a row
sample data made, whoever moves it (the clock included). An empty address queues
nothing; one that is not a single address (a line break in it, a list: `core.outbox.addresses`)
queues no email to send, but a row `failed` with the reason, so the Outbox screen says why.
Delivery (claim, send, retry) is the operations layer's (`services.outbox`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import date, datetime, time
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.basics.actors import Actor, ActorKind
from core.manifest.model import App
from core.manifest.outbox_model import Message, Reminder
from core.outbox.addresses import address_fault
from core.outbox.mail import RowValues, render_words
from core.rules.stamps import takes_value
from core.store.sample_marks import is_sample_row
from core.store.schema import MailStatus, outbox

if TYPE_CHECKING:
    from core.store.store import Store

Row = Mapping[str, Any]


def producers(app: App) -> list[tuple[int, Message | Reminder]]:
    """The app's producers, numbered from 1 as the manifest lists them."""
    listed = app.outbox.producers if app.outbox is not None else []
    return list(enumerate(listed, start=1))


def reminder_address(app: App, reminder: Reminder) -> str | None:
    """The column a reminder's address is read from: its `to`, else the `to` of the first
    message producer of its table (the table's address column)."""
    if reminder.to is not None:
        return reminder.to
    for _, producer in producers(app):
        if isinstance(producer, Message) and producer.table == reminder.before.table:
            return producer.to
    return None


def queue_messages(
    conn: Connection,
    store: Store,
    table: str,
    before: Row | None,
    after: Row,
    actor: Actor,
    now: datetime,
) -> int:
    """Step 7 of the pipeline: queue the message producers' emails this write sets off, in
    its transaction; how many were queued to be sent (not those refused for their address)."""
    if actor.kind is ActorKind.sample:
        return 0
    firing = [
        (number, producer)
        for number, producer in producers(store.app)
        if isinstance(producer, Message)
        and producer.table == table
        and takes_value(producer.on, before, after)
    ]
    if not firing:
        return 0
    key = str(after[store.spec(table).key])
    if is_sample_row(conn, store.app.name, table, key):
        return 0
    rows = []
    for number, producer in firing:
        address = _address(after.get(producer.to))
        if address is None:
            continue
        words = render_words(producer, mail_context(store, table, after))
        rows.append(
            mail_row(store.app.name, table, key, number, producer.kind, address, words, now)
        )
    if rows:
        conn.execute(sa.insert(outbox), rows)
    return sum(1 for row in rows if row["status"] == MailStatus.queued.value)


def _address(value: Any) -> str | None:
    """An address as kept; None for an empty one."""
    text = value.strip() if isinstance(value, str) else ""
    return text or None


def mail_context(store: Store, table: str, row: Row, **extra: Any) -> dict[str, Any]:
    """What a template reads: the row (values as JSON gives them), the app and the table."""
    return {"row": RowValues(_plain(row)), "app": store.app.name, "table": table, **extra}


def _plain(row: Row) -> dict[str, Any]:
    """A row's values as a reader sees them: instants and numbers as text JSON would write."""
    return {name: _shown(value) for name, value in row.items()}


def _shown(value: Any) -> Any:
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict | list):
        return json.loads(json.dumps(value, default=str))
    return value


def mail_row(
    app: str,
    table: str,
    key: str,
    producer: int,
    kind: str,
    address: str,
    words: Any,
    now: datetime,
    moment: datetime | None = None,
) -> dict[str, Any]:
    """An outbox row as queued: it may go at once; or, when its address is no single
    address, failed with the reason (never sent)."""
    fault = address_fault(address)
    return {
        "app": app,
        "table_name": table,
        "row_key": key,
        "producer": producer,
        "kind": kind,
        "moment": moment,
        "address": address,
        "subject": words.subject,
        "body": words.body,
        "queued_at": now,
        "send_at": now,
        "status": MailStatus.queued.value if fault is None else MailStatus.failed.value,
        "answer": fault,
    }
