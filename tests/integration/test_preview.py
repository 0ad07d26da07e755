"""`preview`: what the clock will do differently after a change, read at a
given now, writing nothing. Every expected moment is worked out by hand from the calendar
(Europe/London: clocks back 2026-10-25 01:00 UTC, forward 2027-03-28 01:00 UTC)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa

from core.preview.preview import Preview
from core.store.store import Store
from core.sweep.sweep import sweep_connection
from services.preview import parse_set, preview_values
from services.storage import open_session
from tests.integration.preview_fixtures import Diner, build_diner


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


@pytest.fixture
def diner(make_database: Callable[[], str]) -> Iterator[Diner]:
    made = build_diner(make_database(), make_database())
    yield made
    made.dispose()


def preview(diner: Diner, *sets: str, now: datetime) -> Preview:
    with open_session(diner.control_url) as session:
        return preview_values(session, "diner", [parse_set(s) for s in sets], now=now)


def moments(found: Preview, table: str) -> dict[str, tuple[datetime | None, datetime | None, str]]:
    return {c.key: (c.old, c.new, c.effect(found.now)) for c in found.changes if c.table == table}


def test_friday_closing_moved_from_23_to_21_before_the_clocks_go_back(diner: Diner) -> None:
    # Friday 2026-10-23 is on BST (UTC+1); Friday 2026-10-30 on GMT (clocks back on the 25th).
    fri23 = [
        diner.insert("orders", pickup_at=utc(2026, 10, 23, h, 0), status="placed")
        for h in (12, 17, 19)
    ]
    fri30 = [
        diner.insert("orders", pickup_at=utc(2026, 10, 30, h, 0), status="placed") for h in (12, 18)
    ]
    diner.insert("orders", pickup_at=utc(2026, 10, 24, 12, 0), status="placed")  # Saturday
    diner.insert("orders", pickup_at=utc(2026, 10, 23, 12, 0), status="collected")
    now = utc(2026, 10, 23, 20, 30)  # 21:30 BST
    found = preview(diner, "opening_hours[weekday=fri].closes=21:00", now=now)
    got = moments(found, "orders")
    # 23 Oct: 23:00 BST = 22:00Z -> 21:00 BST = 20:00Z, past 20:30Z: due at once.
    for key in fri23:
        assert got[str(key)] == (utc(2026, 10, 23, 22), utc(2026, 10, 23, 20), "due-at-once")
    # 30 Oct: 23:00 GMT = 23:00Z -> 21:00 GMT = 21:00Z: two hours earlier, not yet due.
    for key in fri30:
        assert got[str(key)] == (utc(2026, 10, 30, 23), utc(2026, 10, 30, 21), "earlier")
    assert len(got) == 5  # the Saturday order and the collected one are untouched
    assert found.summary() == "3 rows due at once, 0 moments later, 2 earlier"
    change = next(c for c in found.changes if c.key == str(fri23[0]))
    assert "closing hour on Friday" in change.old_read and change.new_read.endswith("Fri 21:00")


def test_the_same_change_previewed_at_20_30_utc_either_side_of_the_clocks_going_back(
    diner: Diner,
) -> None:
    key = diner.insert("orders", pickup_at=utc(2026, 10, 30, 12, 0), status="placed")
    # 2026-10-30 20:30Z is 20:30 GMT: before the new 21:00 closing (21:00Z).
    after = preview(diner, "opening_hours[weekday=fri].closes=21:00", now=utc(2026, 10, 30, 20, 30))
    assert moments(after, "orders")[str(key)] == (
        utc(2026, 10, 30, 23),
        utc(2026, 10, 30, 21),
        "earlier",
    )
    # A week before (BST), 20:30Z is 21:30 local: the 23 Oct order is past its new closing.
    early = diner.insert("orders", pickup_at=utc(2026, 10, 23, 12, 0), status="placed")
    before = preview(
        diner, "opening_hours[weekday=fri].closes=21:00", now=utc(2026, 10, 23, 20, 30)
    )
    assert moments(before, "orders")[str(early)][2] == "due-at-once"


def test_spring_forward_preview_at_either_side(diner: Diner) -> None:
    # Friday 2027-03-26 is GMT; Friday 2027-04-02 BST (clocks forward 2027-03-28 01:00Z).
    march = diner.insert("orders", pickup_at=utc(2027, 3, 26, 12, 0), status="placed")
    april = diner.insert("orders", pickup_at=utc(2027, 4, 2, 12, 0), status="placed")
    at_march = preview(
        diner, "opening_hours[weekday=fri].closes=21:00", now=utc(2027, 3, 26, 20, 30)
    )
    # 26 Mar: 23:00 GMT = 23:00Z -> 21:00Z, after 20:30Z; 2 Apr: 22:00Z -> 20:00Z.
    assert moments(at_march, "orders") == {
        str(march): (utc(2027, 3, 26, 23), utc(2027, 3, 26, 21), "earlier"),
        str(april): (utc(2027, 4, 2, 22), utc(2027, 4, 2, 20), "earlier"),
    }
    at_april = preview(
        diner, "opening_hours[weekday=fri].closes=21:00", now=utc(2027, 4, 2, 20, 30)
    )
    # By then the March order is long past both closings (still due, not listed as new).
    assert moments(at_april, "orders")[str(april)] == (
        utc(2027, 4, 2, 22),
        utc(2027, 4, 2, 20),
        "due-at-once",
    )
    assert moments(at_april, "orders")[str(march)][2] == "still-due"


def test_a_shorter_offer_window_read_from_settings(diner: Diner) -> None:
    now = utc(2026, 10, 23, 12, 0)
    # offer_minutes 60 -> 30: made_at + 60 min -> made_at + 30 min.
    soon = diner.insert(
        "offers", made_at=utc(2026, 10, 23, 11, 20), status="open"
    )  # 12:20 -> 11:50
    later = diner.insert(
        "offers", made_at=utc(2026, 10, 23, 11, 40), status="open"
    )  # 12:40 -> 12:10
    gone = diner.insert(
        "offers", made_at=utc(2026, 10, 23, 10, 50), status="open"
    )  # 11:50 -> 11:20
    diner.insert("offers", made_at=utc(2026, 10, 23, 11, 20), status="taken")
    diner.insert("offers", made_at=utc(2026, 11, 9, 11, 0), status="open")  # past the 8 days
    found = preview(diner, "diner.settings.offer_minutes=30", now=now)
    assert moments(found, "offers") == {
        str(soon): (utc(2026, 10, 23, 12, 20), utc(2026, 10, 23, 11, 50), "due-at-once"),
        str(later): (utc(2026, 10, 23, 12, 40), utc(2026, 10, 23, 12, 10), "earlier"),
        str(gone): (utc(2026, 10, 23, 11, 50), utc(2026, 10, 23, 11, 20), "still-due"),
    }
    assert found.summary() == "1 row due at once, 0 moments later, 1 earlier"
    # Nothing the setting does not reach is read: orders and bookings untouched.
    assert {c.table for c in found.changes} == {"offers"}


def test_an_or_fallback_that_starts_to_answer(diner: Diner) -> None:
    now = utc(2026, 10, 23, 12, 0)
    # No arrive_by, grace_minutes empty: no time. With grace 30: starts_at + 30 min.
    late = diner.insert("bookings", starts_at=utc(2026, 10, 23, 11, 0), status="booked")
    ahead = diner.insert("bookings", starts_at=utc(2026, 10, 23, 13, 0), status="booked")
    diner.insert(
        "bookings",
        arrive_by=utc(2026, 10, 23, 12, 30),
        starts_at=utc(2026, 10, 23, 11, 0),
        status="booked",
    )
    found = preview(diner, "diner.settings.grace_minutes=30", now=now)
    assert moments(found, "bookings") == {
        str(late): (None, utc(2026, 10, 23, 11, 30), "due-at-once"),
        str(ahead): (None, utc(2026, 10, 23, 13, 30), "new-time"),
    }
    change = next(c for c in found.changes if c.key == str(late))
    assert change.old_read.endswith("no time") and "fallback 1" in change.new_read


def test_a_reminder_lead_raised(diner: Diner) -> None:
    now = utc(2026, 10, 23, 12, 0)
    # reminder_hours 2 -> 5: pickup 15:00Z sends 13:00Z -> 10:00Z (at once); 18:00Z 16:00 -> 13:00.
    at_once = diner.insert(
        "orders", email="a@example.com", pickup_at=utc(2026, 10, 23, 15), status="placed"
    )
    earlier = diner.insert(
        "orders", email="b@example.com", pickup_at=utc(2026, 10, 23, 18), status="placed"
    )
    diner.insert(
        "orders", email="c@example.com", pickup_at=utc(2026, 10, 23, 15), status="collected"
    )
    # No address: never reminded (the reminder queue skips it), so not listed.
    diner.insert("orders", pickup_at=utc(2026, 10, 23, 15), status="placed")
    found = preview(diner, "diner.settings.reminder_hours=5", now=now)
    assert moments(found, "orders") == {
        str(at_once): (utc(2026, 10, 23, 13), utc(2026, 10, 23, 10), "due-at-once"),
        str(earlier): (utc(2026, 10, 23, 16), utc(2026, 10, 23, 13), "earlier"),
    }
    assert {c.kind for c in found.changes} == {"reminder"}
    assert found.counts() == {"sent-at-once": 1, "reminder-earlier": 1}
    assert found.summary() == (
        "0 rows due at once, 0 moments later, 0 earlier; 1 reminder sent at once, 0 no longer sent"
    )


def test_a_holds_minutes_lowered(diner: Diner) -> None:
    from tests.integration.hold_fixtures import take_holds

    now = utc(2026, 10, 23, 12, 0)
    diner.sql("UPDATE tickets.settings SET till_hold_minutes = 30")
    diner.insert("gift_cards", schema="tickets", holder_name="Ann", balance=100)
    with diner.engine.begin() as conn:
        # heldUntil opened_at + 30 min -> + 10 min.
        take_holds(conn, 1, 1, opened=utc(2026, 10, 23, 11, 45), until=utc(2026, 10, 23, 12, 15))
        take_holds(conn, 1, 1, opened=utc(2026, 10, 23, 11, 55), until=utc(2026, 10, 23, 12, 25))
    keys = [r[0] for r in diner.rows("SELECT id FROM tickets.till_tickets ORDER BY id")]
    found = preview(diner, "tickets.settings.till_hold_minutes=10", now=now)
    assert moments(found, "till_tickets") == {
        str(keys[0]): (utc(2026, 10, 23, 12, 15), utc(2026, 10, 23, 11, 55), "due-at-once"),
        str(keys[1]): (utc(2026, 10, 23, 12, 25), utc(2026, 10, 23, 12, 5), "earlier"),
    }
    assert {(c.kind, c.what) for c in found.changes} == {("hold", "hold 1")}


@contextmanager
def _commits_on(database: str) -> Iterator[list[str]]:
    """Every commit any SQLAlchemy engine makes on the named database while the block runs
    (the statement-level event, not the server's counters, which a backend flushes as it
    exits and an autovacuum worker adds to, both in their own time)."""
    seen: list[str] = []

    def commit(conn: sa.Connection) -> None:
        if conn.engine.url.database == database:
            seen.append(str(conn.engine.url))

    sa.event.listen(sa.Engine, "commit", commit)
    try:
        yield seen
    finally:
        sa.event.remove(sa.Engine, "commit", commit)


def _catalog(diner: Diner) -> list[tuple[object, ...]]:
    """The venue database's schemas, relations, columns and sequences' positions: what a
    committed DDL statement or a rolled-back insert's nextval would change."""
    return [
        *diner.rows(
            "SELECT n.nspname, c.relname, c.relkind, a.attname,"
            " format_type(a.atttypid, a.atttypmod)"
            " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0"
            " AND NOT a.attisdropped"
            " WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')"
            " ORDER BY 1, 2, 4"
        ),
        *diner.rows("SELECT schemaname, sequencename, last_value FROM pg_sequences ORDER BY 1, 2"),
    ]


def _contents(diner: Diner) -> list[tuple[object, ...]]:
    """Every row of every table of the venue database, as text, and its catalog."""
    tables = diner.rows(
        "SELECT quote_ident(table_schema) || '.' || quote_ident(table_name)"
        " FROM information_schema.tables"
        " WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1"
    )
    assert {name.split(".")[0] for (name,) in tables} >= {"diner", "tickets", "adminium"}
    found: list[tuple[object, ...]] = []
    for (name,) in tables:
        found += [(name, *row) for row in diner.rows(f"SELECT t::text FROM {name} AS t ORDER BY 1")]
    return found + _catalog(diner)


def test_a_preview_writes_nothing_and_its_due_at_once_is_what_the_sweep_then_moves(
    diner: Diner,
) -> None:
    now = utc(2026, 10, 23, 20, 30)  # 21:30 BST on Friday 23 Oct
    keys = [
        diner.insert("orders", pickup_at=utc(2026, 10, 23, h), status="placed")
        for h in (12, 15, 19)
    ]
    diner.insert("orders", pickup_at=utc(2026, 10, 30, 12), status="placed")
    diner.insert("orders", pickup_at=utc(2026, 10, 24, 12), status="placed")
    diner.insert("offers", made_at=utc(2026, 10, 23, 20), status="open")  # due 21:00Z: not yet
    # The third was refused at 20:00Z before (an hour set aside until 21:00Z): the sweep
    # passes it by, and so does the preview.
    diner.sql(
        "INSERT INTO adminium.set_aside (app, table_name, row_key, rule, code, moment, at, until)"
        " VALUES ('diner', 'orders', :key, 1, 'STATE_MOVE_REFUSED', :moment, :at, :until)",
        key=str(keys[2]),
        moment=utc(2026, 10, 23, 20),
        at=utc(2026, 10, 23, 20, 1),
        until=utc(2026, 10, 23, 21, 1),
    )
    database = diner.engine.url.database
    assert database is not None
    before_rows = _contents(diner)
    # The test's own commit is seen, so the listener hears this database's engines.
    with _commits_on(database) as probe:
        diner.sql("SELECT 1")
    assert probe != []
    with _commits_on(database) as commits:
        found = preview(diner, "opening_hours[weekday=fri].closes=21:00", now=now)
    assert commits == []
    assert _contents(diner) == before_rows
    assert sorted(int(c.key) for c in found.due_at_once) == keys[:2]
    assert [int(c.key) for c in found.of("set-aside")] == [keys[2]]
    # Saved, then swept at the same now: exactly those rows move.
    diner.sql("UPDATE diner.opening_hours SET closes = '21:00' WHERE weekday = 'fri'")
    saved = diner.store()
    store = Store(diner.engine, saved.app, saved.zone, connection="diner")
    report = sweep_connection([store], connection="diner", now=now)
    assert sorted(int(d.key) for d in report.moved) == keys[:2]
    assert [int(d.key) for d in report.passed_by] == [keys[2]]
