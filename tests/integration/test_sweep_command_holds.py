"""`adminium sweep` says what it did with holds: a line per hold given back, set aside by
the ledger's cap, or left to the next minute because another writer held its account,
and the three counts in its summary.

examples/tickets.json: a till ticket holds its card payment until opened_at plus
settings.till_hold_minutes (3); a card holds at most settings.card_max (500). Opened at
11:00 UTC on Friday 12 June 2026 (BST, UTC+1): held until 11:03 UTC, printed on the venue's
clock as 12:03:00+01:00.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.integration.hold_fixtures import TICKETS, app_on_connection, run_console, till_ticket

HELD_UNTIL = "held until 2026-06-12T12:03:00+01:00"


def test_the_sweep_prints_each_hold_given_back_set_aside_or_busy(
    make_database: Callable[[], str],
) -> None:
    control, name, store = app_on_connection(make_database, TICKETS)
    schema = store.app.schema_name
    with store.engine.begin() as conn:
        conn.exec_driver_sql(f"SET search_path TO {schema}")
        conn.exec_driver_sql("INSERT INTO settings DEFAULT VALUES")
        given, capped, busy = (
            conn.exec_driver_sql(
                "INSERT INTO gift_cards (holder_name, balance) VALUES ('Ann', 50) RETURNING id"
            ).scalar_one()
            for _ in range(3)
        )
    tickets = {card: till_ticket(store, card) for card in (given, capped, busy)}
    with store.engine.begin() as conn:  # topped up meanwhile: 490 + 20 passes the max 500
        conn.exec_driver_sql(f"UPDATE {schema}.gift_cards SET balance = 490 WHERE id = {capped}")
    with store.engine.begin() as other:
        # Another posting's writer holds the third card while the sweep runs.
        other.exec_driver_sql(
            f"SELECT * FROM {schema}.gift_cards WHERE id = {busy} FOR NO KEY UPDATE"
        )
        swept = run_console(control, "sweep", name, "--now", "2026-06-12T11:03:00+00:00")
    assert swept.exit_code == 0, swept.output
    lines = swept.output.splitlines()

    def hold(card: int) -> str:
        return f"tickets.till_tickets {tickets[card]} posting 1: 20 to gift_cards account {card}"

    assert f"gave back {hold(given)}, {HELD_UNTIL}" in lines
    assert f"give-back set aside for an hour {hold(capped)}, {HELD_UNTIL}: LEDGER_CAP" in lines
    assert f"give-back next minute (held elsewhere) {hold(busy)}, {HELD_UNTIL}" in lines
    assert lines[-1].startswith(
        f"sweep of {name}: done, moved 0, set aside 0, conflicts 0, gave back 1,"
        " give-backs set aside 1, give-backs busy 1,"
        # The busy one is still due; the one set aside is not.
        " still due 1 (0 timed moves, 1 give-back),"
    )
    store.engine.dispose()
