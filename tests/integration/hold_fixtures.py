"""Many holds at once for the tests of examples/tickets.json: till tickets paid by gift
card, written by one SQL statement with what the write pipeline writes for each, column for
column (the ticket, its take entry, its held posting record, its card's balance), because
a thousand writes through the pipeline would cost seconds; and what the console tests share:
an app on a connection of a fresh control plane, `adminium` run on it in this process, and
a till ticket written through the pipeline.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from sqlalchemy.engine import Connection

from adminium.cli import main
from core.store.store import Store
from core.writes.pipeline import create_row
from core.writes.request import WriteRequest
from services.apps import add_app, app_store
from services.connections import add_connection, get_connection
from services.storage import open_session, upgrade_control_plane
from tests.integration.ledger_fixtures import STAFF
from tests.integration.pipeline_fixtures import at

TICKETS = json.loads((Path(__file__).parents[2] / "examples" / "tickets.json").read_text())
OPENED = at("2026-06-12 11:00")
"""When the console tests' till tickets are opened: 12:00 BST on Friday 12 June 2026."""


def app_on_connection(
    make_database: Callable[[], str], manifest: dict[str, Any]
) -> tuple[str, str, Store]:
    """A fresh control plane with a London connection on a fresh venue database holding the
    app (its tables made): the control plane's URL, the connection's name, the app's store."""
    control, venue = make_database(), make_database()
    upgrade_control_plane(control)
    name = f"c-{uuid.uuid4().hex[:8]}"
    with open_session(control) as session:
        add_connection(session, name, venue, "Europe/London")
        add_app(session, name, manifest, create_tables=True)
        store = app_store(get_connection(session, name).apps[0])
    return control, name, store


def run_console(control: str, *args: str, **env: str) -> Result:
    """`adminium ARGS` on that control plane, in this process, with no Redis."""
    return CliRunner().invoke(
        main, list(args), env={"DATABASE_URL": control, "REDIS_URL": "", **env}
    )


@dataclass
class AppConsole:
    """An app on a connection (app_on_connection) and `adminium` run on its control plane."""

    control: str
    name: str
    store: Store

    def run(self, *args: str, **env: str) -> Result:
        return run_console(self.control, *args, **env)


def till_ticket(store: Store, card: int) -> int:
    """A till ticket of 30 opened at OPENED, 20 of it paid by the gift card (held)."""
    values = {"items": "tea", "total": Decimal("30"), "gift_card_id": card}
    values |= {"card_paid": Decimal("20"), "opened_at": OPENED}
    return int(create_row(store, WriteRequest("till_tickets", STAFF, OPENED, values=values)).key)


_TAKE_HOLDS = """
WITH made AS (
    INSERT INTO tickets.till_tickets (items, total, gift_card_id, card_paid, opened_at, status)
    SELECT 'tea', 1, (SELECT array_agg(id ORDER BY id) FROM tickets.gift_cards)[1 + n %% {cards}],
           1, %(opened)s, 'open'
    FROM generate_series(0, {holds} - 1) AS n
    RETURNING id, gift_card_id
), numbered AS (
    SELECT made.id, made.gift_card_id,
           card.balance - row_number() OVER (PARTITION BY made.gift_card_id ORDER BY made.id)
               AS after
    FROM made JOIN tickets.gift_cards AS card ON card.id = made.gift_card_id
), entered AS (
    INSERT INTO adminium.ledger_entries
        (app, ledger, account, amount, balance, table_name, row_key, posting, kind, actor, at)
    SELECT 'tickets', 'gift_cards', gift_card_id::text, -1, after, 'till_tickets', id::text,
           1, 'take', 'staff@example.com', %(opened)s
    FROM numbered ORDER BY numbered.id
), posted AS (
    INSERT INTO adminium.postings
        (app, table_name, row_key, posting, ledger, account, amount, status, held_until, at)
    SELECT 'tickets', 'till_tickets', id::text, 1, 'gift_cards', gift_card_id::text, 1, 'held',
           %(until)s, %(opened)s
    FROM made
)
UPDATE tickets.gift_cards AS card SET balance = card.balance - taken.n
FROM (SELECT gift_card_id, count(*) AS n FROM made GROUP BY gift_card_id) AS taken
WHERE card.id = taken.gift_card_id
"""


def take_holds(
    conn: Connection, holds: int, cards: int, *, opened: datetime, until: datetime
) -> None:
    """`holds` open till tickets paid 1 each by the first `cards` gift cards in turn,
    opened at `opened`, each a hold until `until`."""
    sql = _TAKE_HOLDS.format(cards=cards, holds=holds)
    conn.exec_driver_sql(sql, {"opened": opened, "until": until})
