"""Holds in the operator's tools: `adminium set-aside list` shows a give-back the ledger's
cap set aside and `set-aside retry` tries it again; `sweep --dry-run` and `due --at` show
the due holds (at their row's own heldUntil); the sweep's `still due` counts them.

examples/tickets.json: a till ticket holds its card payment until opened_at plus
settings.till_hold_minutes (3); a card holds at most settings.card_max (500). Opened at
11:00 UTC on Friday 12 June 2026 (BST, UTC+1): held until 11:03 UTC, printed on the venue's
clock as 12:03:00+01:00.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from decimal import Decimal

import pytest

from tests.integration.hold_fixtures import (
    OPENED,
    TICKETS,
    AppConsole,
    app_on_connection,
    take_holds,
    till_ticket,
)
from tests.integration.pipeline_fixtures import at

DUE = "2026-06-12T11:03:00+00:00"


class Console(AppConsole):
    """A connection on a fresh venue database with examples/tickets.json installed."""

    def sql(self, statement: str) -> list[tuple[object, ...]]:
        with self.store.engine.begin() as conn:
            found = conn.exec_driver_sql(statement)
            return [tuple(row) for row in found] if found.returns_rows else []

    def card(self, balance: int) -> int:
        [(card,)] = self.sql(
            "INSERT INTO tickets.gift_cards (holder_name, balance)"
            f" VALUES ('Ann', {balance}) RETURNING id"
        )
        return int(str(card))

    def ticket(self, card: int) -> int:
        return till_ticket(self.store, card)

    def balance(self, card: int) -> Decimal:
        [(balance,)] = self.sql(f"SELECT balance FROM tickets.gift_cards WHERE id = {card}")
        return Decimal(str(balance))


@pytest.fixture
def console(make_database: Callable[[], str]) -> Iterator[Console]:
    control, name, store = app_on_connection(make_database, TICKETS)
    made = Console(control, name, store)
    made.sql("INSERT INTO tickets.settings DEFAULT VALUES")
    yield made
    store.engine.dispose()


def test_a_give_back_the_cap_set_aside_is_listed_and_tried_again(console: Console) -> None:
    card = console.card(50)
    ticket = console.ticket(card)
    console.sql(f"UPDATE tickets.gift_cards SET balance = 490 WHERE id = {card}")  # topped up
    swept = console.run("sweep", console.name, "--now", DUE)
    assert "give-backs set aside 1" in swept.output, swept.output
    listed = console.run("set-aside", "list", console.name)
    assert listed.exit_code == 0, listed.output
    [line] = listed.output.splitlines()
    assert line.startswith(
        f"tickets.till_tickets {ticket} give-back of posting 1 (20 to gift_cards account {card})"
        " held until 2026-06-12T12:03:00+01:00: LEDGER_CAP: "
    ), line
    assert line.endswith("set aside until 2026-06-12T13:03:00+01:00"), line
    # Still over the cap: refused again, set aside for a new hour.
    again = console.run("set-aside", "retry", console.name, "tickets", "till_tickets", str(ticket))
    assert again.exit_code == 1, again.output
    assert again.stderr.startswith("Error: give-back refused again: gift_cards account ")
    assert again.stderr.endswith(" (LEDGER_CAP)\n"), again.stderr
    assert console.balance(card) == Decimal("490")
    console.sql(f"UPDATE tickets.gift_cards SET balance = 100 WHERE id = {card}")  # spent
    retried = console.run(
        "set-aside", "retry", console.name, "tickets", "till_tickets", str(ticket)
    )
    assert retried.exit_code == 0, retried.output
    assert (
        f"tickets.till_tickets {ticket} gave back posting 1: 20 to gift_cards account {card}"
        " on a retry"
    ) in retried.output
    assert console.balance(card) == Decimal("120")
    assert console.run("set-aside", "list", console.name).output.startswith("no rows set aside")
    again = console.run("set-aside", "retry", console.name, "tickets", "till_tickets", str(ticket))
    assert again.exit_code == 1 and "is not set aside" in again.output


def test_due_and_the_dry_run_show_the_due_holds_at_their_rows_own_moment(
    console: Console,
) -> None:
    card = console.card(100)
    first, second = console.ticket(card), console.ticket(card)
    # The venue's own software opened the second ticket ten minutes earlier.
    console.sql(
        f"UPDATE tickets.till_tickets SET opened_at = '2026-06-12 10:50Z' WHERE id = {second}"
    )

    def hold(key: int, until: str) -> str:
        return (
            f"tickets.till_tickets {key} posting 1: 20 to gift_cards account {card},"
            f" held until 2026-06-12T{until}+01:00"
        )

    early = console.run("due", console.name, "--at", "2026-06-12T10:53:00+00:00")
    assert early.exit_code == 0, early.output
    assert early.output.splitlines() == [f"give-back of {hold(second, '11:53:00')}"]
    both = console.run("due", console.name, "--at", DUE, "--json")
    listed = [(e["kind"], e["key"], e["held_until"]) for e in json.loads(both.output)]
    assert listed == [
        ("give-back", str(second), "2026-06-12T11:53:00+01:00"),
        ("give-back", str(first), "2026-06-12T12:03:00+01:00"),
    ]
    dry = console.run("sweep", console.name, "--now", DUE, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert f"would give back {hold(second, '11:53:00')}" in dry.output.splitlines()
    assert f"would give back {hold(first, '12:03:00')}" in dry.output.splitlines()
    assert console.balance(card) == Decimal("60")  # nothing given back


def test_the_sweeps_still_due_counts_the_holds_the_cap_kept_back(console: Console) -> None:
    console.sql("UPDATE tickets.settings SET card_max = 100000")
    for _ in range(3):
        console.card(1000)
    with console.store.engine.begin() as conn:
        take_holds(conn, 510, 3, opened=OPENED, until=at("2026-06-12 11:03"))
    # Twenty tickets offered, their offer run out at 11:00 UTC: due timed moves.
    console.sql(
        "INSERT INTO tickets.events (name, venue, doors_at, starts_at, ends_at) VALUES"
        " ('Gig', 'Hall', '2026-06-20 18:00Z', '2026-06-20 19:00Z', '2026-06-20 22:00Z')"
    )
    console.sql(
        "INSERT INTO tickets.tickets (event_id, holder_name, holder_email, price, valid_to,"
        " status, offer_until) SELECT (SELECT min(id) FROM tickets.events), 'Bo',"
        " 'bo@example.com', 10, '2026-06-20 22:00Z', 'offered', '2026-06-12 11:00Z'"
        " FROM generate_series(1, 20)"
    )
    swept = console.run("sweep", console.name, "--now", DUE)
    assert swept.exit_code == 0, swept.output
    summary = swept.output.splitlines()[-1]
    # The holds go first, 500 of the minute's 500: 10 give-backs and 20 moves wait.
    assert summary.startswith(f"sweep of {console.name}: more, moved 0,"), summary
    assert "gave back 500," in summary
    assert "still due 30 (20 timed moves, 10 give-backs)," in summary, summary
    later = console.run("sweep", console.name, "--now", "2026-06-12T11:04:00+00:00")
    summary = later.output.splitlines()[-1]
    assert "moved 20," in summary and "gave back 10," in summary, summary
    assert "still due 0," in summary, summary


def test_a_dry_run_names_each_give_back_it_counts(console: Console) -> None:
    """Issue 33 item 5: at an instant one hold is due and no timed move, the dry run's
    `still due 1 (0 timed moves, 1 give-back)` comes after a line naming that hold, as
    each move it would make gets a `would move` line; nothing is given back."""
    card = console.card(100)
    ticket = console.ticket(card)
    dry = console.run("sweep", console.name, "--now", DUE, "--dry-run")
    assert dry.exit_code == 0, dry.output
    [line, summary] = dry.output.splitlines()
    assert line == (
        f"would give back tickets.till_tickets {ticket} posting 1: 20 to gift_cards account"
        f" {card}, held until 2026-06-12T12:03:00+01:00"
    )
    assert "gave back 0," in summary and "(dry run)" in summary, summary
    assert "still due 1 (0 timed moves, 1 give-back)," in summary, summary
    assert console.balance(card) == Decimal("80")  # 100 less the ticket's 20: still held
