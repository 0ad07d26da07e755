"""Automations: a watched change queues a webhook delivery in `adminium.deliveries`, in the
write's own transaction.

An automation hears a write of its table that makes its `on` column take one of its
values (from another value, or on a new row); with no `on`, every write that changes a
row of the table. A refused write rolls back with its deliveries, so it delivers nothing.
A sample row (made by sample data, whoever moves it later) is delivered only to an
automation with `samples: true`, its event marked `"sample": true`. Delivery (claim, sign,
POST, retry, attempts) is the operations layer's (`services.deliveries`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.basics.actors import Actor, ActorKind
from core.basics.json_rows import jsonable, row_json
from core.manifest.automation_model import Automation
from core.rules.stamps import takes_value
from core.store.sample_marks import is_sample_row
from core.store.schema import MailStatus, deliveries

if TYPE_CHECKING:
    from core.store.store import Store

Row = Mapping[str, Any]

DeliveryStatus = MailStatus
"""Where a delivery is: waiting to go (a retry included), sent, or given up on, as an
email is; one set of states, so one drain serves both (`services.sending`)."""

ANSWER_BYTES = 500
"""How much of a receiver's answer an attempt keeps."""


def watching(automations: list[Automation] | None, table: str) -> list[Automation]:
    """The automations of a table."""
    return [a for a in automations or () if a.table == table]


def hears(automation: Automation, before: Row | None, after: Row) -> bool:
    """Whether this write is a change the automation watches."""
    return automation.on is None or takes_value(automation.on, before, after)


def queue_deliveries(
    conn: Connection,
    store: Store,
    table: str,
    before: Row | None,
    after: Row,
    actor: Actor,
    now: datetime,
) -> int:
    """Step 7 of the pipeline: queue a delivery for each automation that hears this write,
    in its transaction; how many were queued."""
    heard = [a for a in watching(store.app.automations, table) if hears(a, before, after)]
    if not heard:
        return 0
    key_column = store.spec(table).key
    key = str(after[key_column])
    sample = actor.kind is ActorKind.sample or is_sample_row(conn, store.app.name, table, key)
    heard = [a for a in heard if a.samples or not sample]
    if not heard:
        return 0
    event = {
        "app": store.app.name,
        "table": table,
        "key": jsonable(after[key_column]),
        "before": row_json(before) if before is not None else None,
        "after": row_json(after),
        "actor": actor.name,
        "time": jsonable(now.astimezone(UTC)),
        "sample": sample,
    }
    conn.execute(
        sa.insert(deliveries),
        [
            {
                "app": store.app.name,
                "automation": automation.name,
                "webhook": automation.webhook,
                "table_name": table,
                "row_key": key,
                "event": {"automation": automation.name, **event},
                "sample": sample,
                "queued_at": now,
                "send_at": now,
                "status": DeliveryStatus.queued.value,
            }
            for automation in heard
        ],
    )
    return len(heard)
