"""Rows the sweep sets aside: refused moves, the log line, the hour, re-dated and hand-moved rows.

Times are UTC instants; the shop's moment is `due_at` itself, so no wall clock is involved.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta

import pytest

from core.store.store import Store
from tests.integration.db_roles import restricted_store
from tests.integration.pipeline_fixtures import at
from tests.integration.sweep_fixtures import Shop

NOW = at("2026-05-04 12:00")
VIP_CONSTRAINT = (
    "ALTER TABLE orders ADD CONSTRAINT vip_stays"
    " CHECK (status <> 'cancelled' OR note IS DISTINCT FROM 'vip')"
)
WORDS = "timed move refused; left alone for an hour"


@pytest.fixture
def restricted(shop: Shop) -> Iterator[Store]:
    """The shop through a role that may not write orders.cancel_code."""
    grants = (
        "GRANT USAGE ON SCHEMA public, adminium TO {}",
        "GRANT SELECT ON ALL TABLES IN SCHEMA public TO {}",
        "GRANT UPDATE (status, note, due_at) ON orders TO {}",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA adminium TO {}",
    )
    with restricted_store(shop.store, grants) as store:
        yield store


def assert_logged(caplog: pytest.LogCaptureFixture, key: object, code: str) -> None:
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert f"{WORDS}: connection=shop table=shop.orders key={key} rule=1 code={code}" in lines


def test_constraint_refusal_sets_the_row_aside_and_the_rows_after_it_move(
    shop: Shop, caplog: pytest.LogCaptureFixture
) -> None:
    shop.sql(VIP_CONSTRAINT)
    refused = shop.order(NOW - timedelta(hours=2), note="vip")
    after = [shop.order(NOW - timedelta(hours=1)), shop.order(NOW)]
    report = shop.sweep(NOW)
    assert [r.due.key for r in report.set_aside] == [refused]
    assert [d.key for d in report.moved] == after
    assert shop.status(refused) == "placed"
    (record,) = shop.records()
    # The record: rule 1, the code, the moment judged, until = now + 1 hour.
    assert (record["row_key"], record["rule"], record["code"]) == (str(refused), 1, "VALUE_REFUSED")
    assert (record["moment"], record["until"]) == (NOW - timedelta(hours=2), at("2026-05-04 13:00"))
    assert_logged(caplog, refused, "VALUE_REFUSED")
    (minute,) = shop.sweeps()
    assert (minute["moved"], minute["set_aside"], minute["refused"]) == (
        2,
        1,
        {"VALUE_REFUSED": 1},
    )


def test_column_the_role_may_not_write_sets_the_row_aside(
    shop: Shop, restricted: Store, caplog: pytest.LogCaptureFixture
) -> None:
    key = shop.order(NOW - timedelta(minutes=5))
    report = shop.sweep(NOW, store=restricted)
    assert [(r.due.key, r.code) for r in report.set_aside] == [(key, "COLUMN_NOT_WRITABLE")]
    assert shop.status(key) == "placed"
    assert_logged(caplog, key, "COLUMN_NOT_WRITABLE")


def test_condition_refusal_waits_its_hour_then_is_tried_again(
    shop: Shop, caplog: pytest.LogCaptureFixture
) -> None:
    shop.sql("UPDATE settings SET sweep_on = false")
    keys = [shop.order(NOW - timedelta(minutes=30)), shop.order(NOW - timedelta(minutes=20))]
    report = shop.sweep(NOW)
    assert [(r.due.key, r.code) for r in report.set_aside] == [
        (k, "STATE_MOVE_REFUSED") for k in keys
    ]
    assert_logged(caplog, keys[0], "STATE_MOVE_REFUSED")
    shop.sql("UPDATE settings SET sweep_on = true")
    # Fixed, but the hour (until 13:00) is not over: passed by.
    report = shop.sweep(at("2026-05-04 12:59"))
    assert (report.moved, [d.key for d in report.passed_by]) == ((), keys)
    report = shop.sweep(at("2026-05-04 13:00"))
    assert [d.key for d in report.moved] == keys
    assert shop.records() == []


def test_row_re_dated_after_it_was_set_aside_is_judged_on_its_new_moment(shop: Shop) -> None:
    shop.sql(VIP_CONSTRAINT)
    soon, later = shop.order(NOW - timedelta(hours=1), note="vip"), shop.order(NOW, note="vip")
    assert len(shop.sweep(NOW).set_aside) == 2
    shop.sql("UPDATE orders SET note = NULL, due_at = :d WHERE id = :k", d=NOW, k=soon)
    shop.sql(
        "UPDATE orders SET note = NULL, due_at = :d WHERE id = :k",
        d=at("2026-05-04 14:00"),
        k=later,
    )
    # 12:10, inside both hours: the first is due on its new moment (12:00) and moves; the
    # second's new moment (14:00) has not come.
    report = shop.sweep(at("2026-05-04 12:10"))
    assert [d.key for d in report.moved] == [soon]
    assert report.passed_by == ()
    assert shop.status(later) == "placed"


def test_row_moved_by_hand_is_never_tried_again(shop: Shop) -> None:
    shop.sql("UPDATE settings SET sweep_on = false")
    key = shop.order(NOW - timedelta(minutes=1))
    shop.sweep(NOW)
    shop.sql("UPDATE orders SET status = 'done' WHERE id = :k", k=key)
    shop.sweep(NOW + timedelta(minutes=1))
    assert shop.records() == []
    shop.sql("UPDATE settings SET sweep_on = true")
    shop.sql("UPDATE orders SET status = 'placed' WHERE id = :k", k=key)
    # Put back in `from` by hand, it is a new due row: its record is gone, so it moves now.
    assert [d.key for d in shop.sweep(NOW + timedelta(minutes=2)).moved] == [key]


def test_rows_set_aside_never_keep_newer_rows_waiting(shop: Shop) -> None:
    shop.sql(VIP_CONSTRAINT)
    old = [shop.order(NOW - timedelta(hours=3, minutes=i), note="vip") for i in range(3)]
    assert len(shop.sweep(NOW, limit=2).set_aside) == 2
    assert len(shop.sweep(NOW, limit=2).set_aside) == 1
    newer = [shop.order(NOW - timedelta(minutes=i)) for i in (2, 1)]
    report = shop.sweep(NOW + timedelta(minutes=1), limit=2)
    assert [d.key for d in report.moved] == newer
    assert sorted(d.key for d in report.passed_by) == sorted(old)
