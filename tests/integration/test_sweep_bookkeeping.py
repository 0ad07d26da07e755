"""An idle sweep's bookkeeping is one statement: the fence taken and let go of, the
minute's record written closed, when no row is a candidate and none is set aside (and,
beside, the next due moment: `core.sweep.idle`). Any other sweep's is a statement at each
end: the fence taken with the record opened, then the record closed with the fence let go
of, each autocommitted; its reads are autocommitted too, and nothing it sets outlives its
own transaction."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import sqlalchemy as sa
from psycopg.pq import TransactionStatus

from core.sweep.fence import Fence
from core.sweep.report import SweepOutcome
from tests.integration.sweep_fixtures import Shop
from tests.integration.test_sweep_races import NOW, VIP_CONSTRAINT

IDLE = TransactionStatus.IDLE


@contextmanager
def sent(engine: sa.Engine) -> Iterator[list[str]]:
    """Every statement, BEGIN, COMMIT and ROLLBACK the engine sends while it runs."""
    seen: list[str] = []

    def statement(conn: Any, cursor: Any, text: str, *args: Any) -> None:
        seen.append(" ".join(text.split())[:60])

    def driver(conn: Any) -> Any:
        return conn.connection.driver_connection

    def began(conn: Any) -> None:
        if not driver(conn).autocommit:  # sent with the next statement
            seen.append("BEGIN")

    def committed(conn: Any) -> None:
        if driver(conn).info.transaction_status != IDLE:
            seen.append("COMMIT")

    def rolled_back(conn: Any) -> None:
        if driver(conn).info.transaction_status != IDLE:
            seen.append("ROLLBACK")

    events = {
        "before_cursor_execute": statement,
        "begin": began,
        "commit": committed,
        "rollback": rolled_back,
    }
    for name, listener in events.items():
        sa.event.listen(engine, name, listener)
    try:
        yield seen
    finally:
        for name, listener in events.items():
            sa.event.remove(engine, name, listener)


def test_an_idle_sweep_sends_one_statement_and_no_transaction_of_its_own(shop: Shop) -> None:
    shop.order(NOW + timedelta(hours=2))  # placed for later: nothing due
    shop.sweep(NOW - timedelta(minutes=1))  # a first sweep: pools, statements warm
    with sent(shop.engine) as seen:
        report = shop.sweep(NOW)
    assert report.outcome is SweepOutcome.done
    assert report.next_due == NOW + timedelta(hours=2)
    # Fence taken and let go of, record written closed, with no row a candidate and the
    # next due moment beside them. No search of its own, no settings: the shop's timed
    # moment reads only the row's own column.
    assert len(seen) == 1, seen
    assert seen[0].startswith("WITH calm AS")
    assert not {"BEGIN", "COMMIT", "ROLLBACK"} & set(seen)
    last = shop.sweeps()[-1]
    assert (last["outcome"], last["at"], last["moved"], last["error"]) == ("done", NOW, 0, None)
    # The sweep's time until it sent the statement, and the statement's own: not nothing,
    # and no more than the whole sweep took.
    assert 0 < last["took_ms"] <= report.took_ms
    # The fence was let go of as it was taken: the next sweep takes it at once.
    with shop.engine.connect() as conn:
        assert Fence("shop", deadline=50.0).acquire(conn)


def test_a_row_set_aside_keeps_a_minute_from_being_calm(shop: Shop) -> None:
    shop.sql(VIP_CONSTRAINT)
    aside = shop.order(NOW - timedelta(minutes=5), note="vip")
    assert [r.due.key for r in shop.sweep(NOW).set_aside] == [aside]
    # Its row out of the search's reach (its state left as it is, its moment later), the
    # record stays: the minute is not calm, the records are read and the row forgotten.
    shop.sql(
        "UPDATE orders SET due_at = :later WHERE id = :k", later=NOW + timedelta(hours=5), k=aside
    )
    with sent(shop.engine) as seen:
        report = shop.sweep(NOW + timedelta(minutes=1))
    assert report.outcome is SweepOutcome.done
    assert len(seen) > 1 and seen[-1].startswith("WITH let_go AS"), seen
    assert shop.sweeps()[-1]["outcome"] == "done"


def test_a_sweep_with_a_row_due_searches_after_its_opening_statement(shop: Shop) -> None:
    late = shop.order(NOW - timedelta(minutes=3))
    shop.order(NOW + timedelta(hours=1))
    with sent(shop.engine) as seen:
        report = shop.sweep(NOW)
    assert [d.key for d in report.moved] == [late]
    assert report.next_due == NOW + timedelta(hours=1)
    assert seen[0].startswith("WITH calm AS")
    assert seen[1].startswith("SELECT beside.beside_0, page.id, page.status, page.due_at")


def test_a_row_set_aside_is_passed_by_though_no_row_is_due(shop: Shop) -> None:
    shop.sql(VIP_CONSTRAINT)
    aside = shop.order(NOW - timedelta(minutes=5), note="vip")
    assert [r.due.key for r in shop.sweep(NOW).set_aside] == [aside]
    shop.order(NOW + timedelta(hours=3))
    with sent(shop.engine) as seen:
        second = shop.sweep(NOW + timedelta(minutes=1))
    # A row is set aside: the sweep reads the records and searches (its row is a candidate).
    assert [d.key for d in second.passed_by] == [aside]
    assert any(s.startswith("SELECT beside.beside_0") for s in seen), seen
    assert second.next_due == NOW + timedelta(hours=3)


def test_a_sweep_with_a_row_due_reads_the_settings_once_for_its_moves(shop: Shop) -> None:
    due = [shop.order(NOW - timedelta(minutes=m)) for m in (5, 4)]
    shop.sweep(NOW - timedelta(hours=1))  # warm; nothing due yet
    with sent(shop.engine) as seen:
        report = shop.sweep(NOW)
    assert sorted(d.key for d in report.moved) == sorted(due)
    # The move to cancelled requires the setting sweep_on: read once, after the search.
    read = "SELECT public.settings.id, public.settings.sweep_on"
    settings = [s for s in seen if s.startswith(read)]
    assert len(settings) == 1, "\n".join(seen)
    search = next(i for i, s in enumerate(seen) if s.startswith("SELECT beside.beside_0"))
    assert seen.index(settings[0]) > search


def test_a_due_row_is_judged_on_the_settings_read_after_the_search(shop: Shop) -> None:
    shop.sql("UPDATE settings SET sweep_on = false")
    kept = shop.order(NOW - timedelta(minutes=5))
    report = shop.sweep(NOW)
    # Its move requires sweep_on: refused on the settings as they are, not moved.
    assert report.moved == ()
    assert [r.due.key for r in report.set_aside] == [kept]


def test_a_sweep_with_rows_set_aside_reads_them(shop: Shop) -> None:
    shop.sql(VIP_CONSTRAINT)
    aside = shop.order(NOW - timedelta(minutes=5), note="vip")
    first = shop.sweep(NOW)
    assert [r.due.key for r in first.set_aside] == [aside]
    second = shop.sweep(NOW + timedelta(minutes=1))
    # Its record read: the row is passed by within its hour, not tried (and refused) again.
    assert [d.key for d in second.passed_by] == [aside]
    assert (second.moved, second.set_aside) == ((), ())


def test_a_sweep_leaves_its_session_as_it_found_it(shop: Shop) -> None:
    shop.order(NOW - timedelta(minutes=5))
    report = shop.sweep(NOW)
    assert len(report.moved) == 1
    # Its bookkeeping commits without waiting for the disk within its own transactions
    # only: a pooler's next client on this session finds the server's setting.
    with shop.engine.connect() as conn:
        assert conn.exec_driver_sql("SHOW synchronous_commit").scalar() == "on"
        assert conn.get_isolation_level() != "AUTOCOMMIT"


def test_a_sweep_turned_away_opens_no_record(shop: Shop) -> None:
    shop.order(NOW - timedelta(minutes=5))
    with shop.engine.connect() as conn:
        holder = Fence("shop", deadline=50.0, holder="worker elsewhere:1")
        assert holder.acquire(conn)
        report = shop.sweep(NOW)
        holder.release(conn)
    assert report.outcome is SweepOutcome.fenced
    assert report.error is not None and "worker elsewhere:1" in report.error
    assert [r["outcome"] for r in shop.sweeps()] == ["fenced"]
    assert shop.sweep(NOW).outcome is SweepOutcome.done


def test_the_opening_statement_reads_the_fingerprints_only_when_asked(shop: Shop) -> None:
    shop.order(NOW + timedelta(hours=2))
    shop.sweep(NOW - timedelta(minutes=2))  # warm
    statements: list[str] = []

    def statement(conn: Any, cursor: Any, text: str, *args: Any) -> None:
        statements.append(text)

    sa.event.listen(shop.engine, "before_cursor_execute", statement)
    try:
        without = shop.sweep(NOW - timedelta(minutes=1), fingerprints=False)
        opening_without = statements[0]
        statements.clear()
        asked = shop.sweep(NOW, fingerprints=True)
        opening_with = statements[0]
    finally:
        sa.event.remove(shop.engine, "before_cursor_execute", statement)
    # The catalogue's read is left out of the statement (its plan most of the statement's).
    assert "json_object_agg" not in opening_without
    assert without.fingerprints == {}
    assert "json_object_agg" in opening_with
    assert set(asked.fingerprints) == {"shop"}
    assert (without.outcome, asked.outcome) == (SweepOutcome.done, SweepOutcome.done)


def test_an_app_whose_table_the_check_cannot_read_faults_in_its_own_boundary(shop: Shop) -> None:
    shop.order(NOW + timedelta(hours=2))
    shop.sweep(NOW - timedelta(minutes=1))
    shop.sql("ALTER TABLE orders RENAME COLUMN due_at TO due_later")
    report = shop.sweep(NOW)
    # The opening statement's check failed on the app's table: opened again without it,
    # the search found the fault as the app's (not the connection's whole minute).
    assert [f.app for f in report.faults] == ["shop"]
    assert "due_at" in report.faults[0].error
    assert report.error is not None and report.error.startswith("every app stopped this minute")
    last = shop.sweeps()[-1]
    assert last["outcome"] == "stopped" and "shop" in (last["faults"] or {})
