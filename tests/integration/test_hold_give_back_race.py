"""Money exactly once: two `adminium sweep`s of two connections over one database (so two
fences: neither keeps the other out) race over 1,000 due holds, five rounds, while staff
void one ticket in forty (a move into givesBack) and take payment for another one in
forty (out of the held states: taken for good). Every hold is given back once or
taken once, never both; every card ends at its top-up less what was taken, and adds up.

examples/tickets.json: a till ticket holds its card payment until opened_at plus
settings.till_hold_minutes (3). Round r's tickets are opened at 11:00 UTC on Friday
12 June 2026 plus r days, so they are all due at 11:03 UTC that day.

The tickets, their take entries and their held posting records are written by one SQL
statement per round (tests/integration/hold_fixtures.take_holds). Each sweep is the
console's own `adminium sweep` command, run in one of two long-lived processes; both wait
on a barrier and start each minute together; the staff's moves go through the write
pipeline in this process meanwhile.
"""

from __future__ import annotations

import json
import multiprocessing
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from decimal import Decimal
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from click.testing import CliRunner

from adminium.cli import main
from core.basics.errors import AdminiumError
from core.store.store import Store
from core.writes.pipeline import change_row
from core.writes.request import WriteRequest
from services.apps import add_app, app_store
from services.connections import add_connection, get_connection
from services.storage import open_session, upgrade_control_plane
from tests.integration.hold_fixtures import take_holds
from tests.integration.ledger_fixtures import STAFF
from tests.integration.pipeline_fixtures import at

TICKETS = json.loads((Path(__file__).parents[2] / "examples" / "tickets.json").read_text())
OPENED = at("2026-06-12 11:00")
HOLDS, CARDS, ROUNDS, MINUTES = 1000, 10, 5, 3
TOP_UP = Decimal(1000)
STAFF_EVERY = 20
"""Staff move every 20th ticket of a round while the sweeps race, paid or void in turn."""


def _sweeper(control: str, name: str, barrier: Any, pipe: Connection) -> None:
    """One process: for each round's instants sent down `pipe`, wait for the other at the
    barrier, then run `adminium sweep NAME --now T`; send back each summary line."""
    runner = CliRunner()
    env = {"DATABASE_URL": control, "REDIS_URL": ""}
    while (instants := pipe.recv()) is not None:
        lines = []
        for instant in instants:
            barrier.wait(timeout=60)
            swept = runner.invoke(main, ["sweep", name, "--now", instant], env=env)
            lines.append(f"exit {swept.exit_code}: {swept.output.splitlines()[-1:]}")
        pipe.send(lines)


def test_two_sweeps_of_two_connections_over_one_database_give_each_hold_back_once(
    make_database: Callable[[], str],
) -> None:
    control, venue = make_database(), make_database()
    upgrade_control_plane(control)
    names = [f"c-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    with open_session(control) as session:
        add_connection(session, names[0], venue, "Europe/London")
        add_connection(session, names[1], venue, "Europe/London", force=True)
        add_app(session, names[0], TICKETS, create_tables=True)
        add_app(session, names[1], TICKETS)
        store = app_store(get_connection(session, names[0]).apps[0])
    engine = store.engine
    with engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO tickets.settings (card_max) VALUES (1000000)")
        for _ in range(CARDS):
            conn.exec_driver_sql(
                "INSERT INTO tickets.gift_cards (holder_name, balance) VALUES ('Ann', %s)",
                (TOP_UP,),
            )
        cards = [str(r[0]) for r in conn.exec_driver_sql("SELECT id FROM tickets.gift_cards")]

    env = {"DATABASE_URL": control, "REDIS_URL": ""}
    spawn = multiprocessing.get_context("spawn")
    barrier = spawn.Barrier(2)
    pipes, processes = [], []
    for name in names:
        ours, theirs = spawn.Pipe()
        process = spawn.Process(target=_sweeper, args=(control, name, barrier, theirs))
        process.start()
        pipes.append(ours)
        processes.append(process)
    doubled: list[tuple[int, int]] = []
    try:
        for round_ in range(ROUNDS):
            opened = OPENED + timedelta(days=round_)
            due = opened + timedelta(minutes=3)
            with engine.begin() as conn:
                take_holds(conn, HOLDS, CARDS, opened=opened, until=due)
            # 500 a minute at most: two minutes give back 1,000; the third catches a hold
            # left to the next minute because the other sweep held it.
            instants = [(due + timedelta(minutes=m)).isoformat() for m in range(MINUTES)]
            for pipe in pipes:
                pipe.send(instants)
            # Meanwhile staff void some tickets (a move into givesBack) and take payment
            # for others (out of the held states: the hold taken for good).
            with engine.connect() as conn:
                keys = conn.exec_driver_sql(
                    "SELECT id FROM tickets.till_tickets WHERE opened_at = %s ORDER BY id",
                    (opened,),
                ).scalars()
                keys = list(keys)
            for index, key in enumerate(keys[::STAFF_EVERY]):
                _person_moves(store, key, "void" if index % 2 else "paid", due)
            summaries = [pipe.recv() for pipe in pipes]
            assert all(line.startswith("exit 0") for s in summaries for line in s), summaries
            # The next minute, alone: whatever a staff move held while both sweeps passed.
            last = (due + timedelta(minutes=MINUTES)).isoformat()
            alone = CliRunner().invoke(main, ["sweep", names[0], "--now", last], env=env)
            assert alone.exit_code == 0, alone.output
            with engine.connect() as conn:
                doubled.append(_round_counts(conn, opened))
    finally:
        for pipe in pipes:
            pipe.send(None)
        for process in processes:
            process.join(timeout=30)
    # Per round: tickets given back more than once, whose entries do not match where their
    # posting stands, and still held.
    assert doubled == [(0, 0, 0)] * ROUNDS
    with engine.connect() as conn:
        standing = conn.exec_driver_sql(
            "SELECT t.status, p.status, count(*) FROM tickets.till_tickets t"
            " JOIN adminium.postings p ON p.row_key = t.id::text GROUP BY 1, 2 ORDER BY 1, 2"
        ).all()
        found = {(row[0], row[1]): row[2] for row in standing}
        moved = HOLDS // STAFF_EVERY // 2 * ROUNDS
        # A ticket paid before the clock gave its hold back took it for good; after, the
        # clock had given it back. Voided or left open, each was given back.
        assert found[("open", "given-back")] == (HOLDS - HOLDS // STAFF_EVERY) * ROUNDS
        assert found[("void", "given-back")] == moved
        assert found.get(("paid", "taken"), 0) + found.get(("paid", "given-back"), 0) == moved
        assert set(found) <= {
            ("open", "given-back"),
            ("void", "given-back"),
            ("paid", "taken"),
            ("paid", "given-back"),
        }
        # One Timed move audit entry for each hold the clock gave back, one row each.
        audits = conn.exec_driver_sql(
            "SELECT count(*), count(DISTINCT row_key) FROM adminium.audit"
            " WHERE table_name = 'till_tickets' AND actor = 'Timed move'"
        ).one()
        clock_gave = conn.exec_driver_sql(
            "SELECT count(*) FROM adminium.ledger_entries"
            " WHERE kind = 'give-back' AND actor = 'Timed move'"
        ).scalar_one()
        assert tuple(audits) == (clock_gave, clock_gave)
        assert clock_gave >= (HOLDS - HOLDS // STAFF_EVERY) * ROUNDS
        # Each card ends at its top-up less what the holds taken for good took.
        balances = conn.execute(sa.text("SELECT id::text, balance FROM tickets.gift_cards"))
        kept = conn.execute(
            sa.text(
                "SELECT account, sum(amount) FROM adminium.postings"
                " WHERE status = 'taken' GROUP BY 1"
            )
        )
        taken = {card: Decimal(total) for card, total in kept}
        assert {key: Decimal(b) for key, b in balances} == {
            card: TOP_UP - taken.get(card, 0) for card in cards
        }
    for card in cards:
        checked = CliRunner().invoke(main, ["ledger", names[0], "gift_cards", card], env=env)
        assert checked.exit_code == 0, checked.output
        assert checked.output.rstrip().endswith(": adds up"), checked.output
    engine.dispose()


def _person_moves(store: Store, key: int, to: str, now: datetime) -> None:
    """Staff move a ticket, trying again while a sweep holds the row or its card."""
    request = WriteRequest("till_tickets", STAFF, now, key=key, move_to=to)
    for _ in range(500):
        try:
            change_row(store, request)
            return
        except AdminiumError as error:
            assert error.code in ("WRITE_CONFLICT", "LEDGER_BUSY"), error
            time.sleep(0.005)
    raise AssertionError(f"ticket {key} never moved to {to}")


def _round_counts(conn: sa.Connection, opened: Any) -> tuple[int, int, int]:
    """How many of a round's tickets got more than one give-back entry; how many whose
    posting stands given back got none, or taken for good got one; how many still held."""
    found = conn.execute(
        sa.text(
            "SELECT count(*) FILTER (WHERE backs > 1),"
            " count(*) FILTER (WHERE (standing = 'given-back' AND backs = 0)"
            " OR (standing = 'taken' AND backs > 0)),"
            " count(*) FILTER (WHERE standing = 'held')"
            " FROM (SELECT t.id, p.status AS standing, count(e.id) AS backs"
            " FROM tickets.till_tickets t"
            " JOIN adminium.postings p ON p.row_key = t.id::text"
            " LEFT JOIN adminium.ledger_entries e ON e.row_key = t.id::text"
            " AND e.table_name = 'till_tickets' AND e.kind = 'give-back'"
            " WHERE t.opened_at = :opened GROUP BY t.id, p.status) AS per_ticket"
        ),
        {"opened": opened},
    ).one()
    return int(found[0]), int(found[1]), int(found[2])
