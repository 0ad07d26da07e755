"""Which rows the sweep takes: longest-due first across rules, at most 500 a minute."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import sqlalchemy as sa

from core.sweep.report import SweepOutcome
from tests.integration.pipeline_fixtures import MANIFEST, at
from tests.integration.sweep_fixtures import Shop

NOW = at("2026-05-04 12:00")


def test_at_most_500_move_a_minute_longest_due_first_and_the_rest_next_minute(shop: Shop) -> None:
    with shop.engine.begin() as conn:
        # 510 orders due one minute apart, inserted newest first so keys do not give the order.
        conn.execute(
            sa.text(
                "INSERT INTO orders (status, due_at) SELECT 'placed', "
                ":now - make_interval(mins => g) FROM generate_series(1, 510) g"
            ),
            {"now": NOW},
        )
        by_due = list(conn.execute(sa.text("SELECT id FROM orders ORDER BY due_at")).scalars())
    report = shop.sweep(NOW)
    assert report.outcome is SweepOutcome.more
    assert [d.key for d in report.moved] == by_due[:500]
    report = shop.sweep(NOW + timedelta(minutes=1))
    assert (report.outcome, [d.key for d in report.moved]) == (SweepOutcome.done, by_due[500:])


def test_longest_due_first_across_every_rule_of_the_connection(
    make_shop: Callable[..., Shop],
) -> None:
    venue = make_shop(MANIFEST)
    event = venue.insert("events", doors_at=at("2026-06-20 18:00"))

    def ticket(until: str) -> int:
        key: int = venue.insert("tickets", event_id=event, status="offered", offer_until=at(until))
        return key

    early, late = ticket("2026-06-10 09:00"), ticket("2026-06-10 22:00")
    # Wednesday 10 June 2026 (BST) closes at 21:00 BST = 20:00 UTC.
    order = venue.insert("orders", status="placed", pickup_at=at("2026-06-10 11:30"))
    report = venue.sweep(at("2026-06-10 23:00"), limit=2)
    assert [(d.rule.table, d.key) for d in report.moved] == [("tickets", early), ("orders", order)]
    assert report.outcome is SweepOutcome.more
    assert venue.row("tickets", late)["status"] == "offered"


def test_rows_not_yet_due_and_rows_with_no_moment_never_move(shop: Shop) -> None:
    later, empty = shop.order(NOW + timedelta(seconds=1)), shop.order(None)
    report = shop.sweep(NOW)
    assert (report.moved, report.outcome) == ((), SweepOutcome.done)
    assert (shop.status(later), shop.status(empty)) == ("placed", "placed")


def test_dry_run_moves_nothing_and_keeps_no_record(shop: Shop) -> None:
    key = shop.order(NOW - timedelta(minutes=1))
    report = shop.sweep(NOW, dry_run=True)
    assert ([d.key for d in report.left], report.moved) == ([key], ())
    assert (shop.status(key), shop.sweeps(), shop.audit()) == ("placed", [], [])


def test_every_minute_leaves_a_record(shop: Shop) -> None:
    shop.order(NOW - timedelta(minutes=1))
    shop.sweep(NOW)
    shop.sweep(NOW + timedelta(minutes=1))
    records = shop.sweeps()
    assert [(r["connection"], r["at"], r["outcome"], r["moved"]) for r in records] == [
        ("shop", NOW, "done", 1),
        ("shop", NOW + timedelta(minutes=1), "done", 0),
    ]
    assert all(r["took_ms"] > 0 for r in records)
