"""What a sweep's give-backs leave behind besides the ledger: their counts in the minute's
record (adminium.sweeps, added to an older database by install_app) and a live event for
the account row as well as the order's (tests/integration/ledger_fixtures.TILL).

An order for a pickup on Friday 12 June 2026 is held until 21:00 in London that day (BST,
UTC+1), so 20:00 UTC.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal

import pytest
import sqlalchemy as sa

from core.store.install import install_app
from core.sweep.sweep import sweep_connection
from core.writes.pipeline import WriteResult
from tests.integration.ledger_fixtures import TILL, Till, till_of
from tests.integration.pipeline_fixtures import at
from tests.integration.sweep_fixtures import Shop

SLOT = at("2026-06-12 12:00")
NOON = at("2026-06-12 11:00")
HOLD_ENDS = at("2026-06-12 20:00")
COUNTS = ("given_back", "holds_set_aside", "holds_busy")


@pytest.fixture
def till(make_shop: Callable[..., Shop]) -> Till:
    built = till_of(make_shop(TILL))
    built.set(slot_capacity=100)
    return built


def last_counts(till: Till) -> tuple[int, ...]:
    record = till.sweeps()[-1]
    return tuple(record[name] for name in COUNTS)


def test_the_minute_record_counts_holds_given_back_set_aside_and_busy(till: Till) -> None:
    given, capped, busy = till.card("50"), till.card("50"), till.card("50")
    for card in (given, capped, busy):
        till.place(SLOT, NOON, gift_card_id=card, card_paid=Decimal("20"))
    till.sql("UPDATE gift_cards SET balance = 95 WHERE id = :k", k=capped)  # 95 + 20 > 100
    with till.engine.begin() as other:
        # Another writer holds the third card: its give-back waits for the next minute.
        other.execute(sa.text("SELECT * FROM gift_cards WHERE id = :k FOR UPDATE"), {"k": busy})
        report = sweep_connection([till.store], connection="shop", now=HOLD_ENDS)
    assert (len(report.given_back), len(report.holds_refused), len(report.holds_busy)) == (1, 1, 1)
    assert last_counts(till) == (1, 1, 1)
    sweep_connection([till.store], connection="shop", now=HOLD_ENDS + timedelta(minutes=1))
    assert last_counts(till) == (1, 0, 0)  # the busy one; the capped one's hour still runs


def test_install_app_adds_the_counts_to_an_older_sweeps_table(till: Till) -> None:
    for name in COUNTS:
        till.sql(f"ALTER TABLE adminium.sweeps DROP COLUMN {name}")
    till.sql(
        "INSERT INTO adminium.sweeps (connection, at, outcome, moved, set_aside, conflicts,"
        " passed_by, left_alone, refused, took_ms) VALUES ('shop', :at, 'done', 0, 0, 0, 0, 0,"
        " '{}', 1.0)",
        at=NOON,
    )
    install_app(till.engine, till.store.app)
    install_app(till.engine, till.store.app)  # idempotent
    assert last_counts(till) == (0, 0, 0)  # the older record reads 0
    sweep_connection([till.store], connection="shop", now=HOLD_ENDS)
    assert len(till.sweeps()) == 2


def test_a_give_back_publishes_the_order_and_the_account_it_went_back_to(till: Till) -> None:
    card = till.card("50")
    order = till.place(SLOT, NOON, gift_card_id=card, card_paid=Decimal("20")).key
    heard: list[WriteResult] = []
    sweep_connection([till.store], connection="shop", now=HOLD_ENDS, on_moved=heard.append)
    [result] = heard
    assert [(e.table, e.key, e.state, e.actor) for e in result.events] == [
        ("orders", order, "placed", "Timed move"),
        ("gift_cards", card, None, "Timed move"),
    ]


def test_a_take_publishes_the_account_it_took_from(till: Till) -> None:
    card = till.card("50")
    placed = till.place(SLOT, NOON, gift_card_id=card, card_paid=Decimal("20"))
    assert [(e.table, e.key, e.state) for e in placed.events] == [
        ("orders", placed.key, "placed"),
        ("gift_cards", card, None),
    ]
