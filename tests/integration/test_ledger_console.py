"""The spec's gift card case end to end through the console: a till ticket paid partly by
a gift card that nobody finishes is given back by `adminium sweep CONN --now`, and
`adminium ledger CONN LEDGER KEY` prints the card's entries and checks they add up.

examples/tickets.json: a till ticket holds its card payment until opened_at plus
settings.till_hold_minutes (3). Opened at 11:00 UTC on Friday 12 June 2026 (BST, UTC+1):
held until 11:03 UTC, which the console prints as 12:03:00+01:00 on the venue's clock.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from adminium.cli import main
from core.store.store import Store
from core.writes.pipeline import change_row, create_row
from core.writes.request import WriteRequest
from services.apps import add_app, app_store
from services.connections import add_connection, get_connection
from services.storage import open_session, upgrade_control_plane
from tests.integration.ledger_fixtures import STAFF
from tests.integration.pipeline_fixtures import at

TICKETS = json.loads((Path(__file__).parents[2] / "examples" / "tickets.json").read_text())
OPENED = at("2026-06-12 11:00")


def _open_ticket(store: Store, card: int, paid: str) -> Any:
    values = {
        "items": "2 lemonades",
        "total": Decimal("30"),
        "gift_card_id": card,
        "card_paid": Decimal(paid),
        "opened_at": OPENED,
    }
    return create_row(store, WriteRequest("till_tickets", STAFF, OPENED, values=values)).key


def _balance(store: Store, card: int) -> Decimal:
    with store.engine.connect() as conn:
        conn.exec_driver_sql(f"SET search_path TO {store.app.schema_name}")
        found = conn.exec_driver_sql("SELECT balance FROM gift_cards WHERE id = %s", (card,))
        return Decimal(found.scalar_one())


def test_a_card_payment_nobody_finishes_is_given_back_and_its_card_adds_up(
    make_database: Callable[[], str],
) -> None:
    control, venue = make_database(), make_database()
    upgrade_control_plane(control)
    name = f"c-{uuid.uuid4().hex[:8]}"
    with open_session(control) as session:
        add_connection(session, name, venue, "Europe/London")
        add_app(session, name, TICKETS, create_tables=True)
        store = app_store(get_connection(session, name).apps[0])
    with store.engine.begin() as conn:
        conn.exec_driver_sql(f"SET search_path TO {store.app.schema_name}")
        conn.exec_driver_sql("INSERT INTO settings DEFAULT VALUES")  # till_hold_minutes 3
        card = conn.exec_driver_sql(
            "INSERT INTO gift_cards (holder_name, balance) VALUES ('Ann', 50) RETURNING id"
        ).scalar_one()
    left = _open_ticket(store, card, "20")  # nobody finishes it
    paid = _open_ticket(store, card, "5")
    change_row(store, WriteRequest("till_tickets", STAFF, OPENED, key=paid, move_to="paid"))
    assert _balance(store, card) == Decimal("25")
    env = {"DATABASE_URL": control, "REDIS_URL": ""}

    def run(*args: str) -> Result:
        return CliRunner().invoke(main, list(args), env=env)

    early = run("sweep", name, "--now", "2026-06-12T11:02:59+00:00")
    assert early.exit_code == 0, early.output
    assert _balance(store, card) == Decimal("25")  # a second before heldUntil
    swept = run("sweep", name, "--now", "2026-06-12T11:03:00+00:00")
    assert swept.exit_code == 0, swept.output
    # The open ticket's 20 is back on the card and off the ticket, the ticket still open;
    # the paid ticket's 5 stands.
    assert _balance(store, card) == Decimal("45")
    with store.engine.connect() as conn:
        conn.exec_driver_sql(f"SET search_path TO {store.app.schema_name}")
        ticket = conn.exec_driver_sql(
            "SELECT status, card_paid FROM till_tickets WHERE id = %s", (left,)
        ).one()
    assert (ticket.status, ticket.card_paid) == ("open", 0)
    again = run("sweep", name, "--now", "2026-06-12T11:04:00+00:00")
    assert again.exit_code == 0 and _balance(store, card) == Decimal("45")  # given back once

    statement = run("ledger", name, "gift_cards", str(card))
    assert statement.exit_code == 0, statement.output
    lines = statement.output.splitlines()
    assert (
        lines[0]
        == f"tickets.gift_cards account {card}: opening balance 50 (before its first entry)"
    )
    kinds = [(line.split()[2], line.split()[3], line.split()[5]) for line in lines[1:4]]
    assert kinds == [("take", "-20", "30"), ("take", "-5", "25"), ("give-back", "+20", "45")]
    assert "2026-06-12T12:03:00+01:00" in lines[3] and "by Timed move" in lines[3]
    assert "2026-06-12T12:00:00+01:00" in lines[1] and f"till_tickets {left} posting 1" in lines[1]
    assert lines[4] == "balance 45 = opening 50 + entries -5: adds up"

    # Topped up by hand, outside any posting: the balance no longer adds up.
    with store.engine.begin() as conn:
        conn.exec_driver_sql(f"SET search_path TO {store.app.schema_name}")
        conn.exec_driver_sql("UPDATE gift_cards SET balance = balance + 40 WHERE id = %s", (card,))
    topped = run("ledger", name, "gift_cards", str(card))
    assert topped.exit_code == 1
    last_entry = lines[3].split()[0]
    assert topped.stderr.strip() == (
        "Error: does not add up: balance 85 != opening 50 + entries -5 = 45;"
        f" changed outside its postings: +40 between entry {last_entry} and now"
        " (LEDGER_UNBALANCED)"
    )
    unknown = run("ledger", name, "points", str(card))
    assert unknown.exit_code == 1 and "keeps a ledger 'points'" in unknown.output
    missing = run("ledger", name, "gift_cards", "999")
    assert missing.exit_code == 1 and "no account '999' in gift_cards" in missing.output
    store.engine.dispose()
