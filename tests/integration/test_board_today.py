"""A board's cost follows its open rows (issue 36 §1): every open row, oldest first by its
time; a final state's column the venue's day, newest first, the rest counted to a bound and
linked; no statement of the board or its push reads the table without a bound."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest
import sqlalchemy as sa
from flask.testing import FlaskClient

from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import add_order

pytestmark = pytest.mark.integration
BOARD = "/apps/venue/venue/orders"


def column_ids(page: str, state: str) -> list[int]:
    """The keys of a column's cards, in the page's order."""
    found = re.search(
        rf'<div class="cards" id="column-orders-{state}">(.*?)</div>\s*(?:<p|</section)',
        page,
        re.S,
    )
    assert found, f"no {state} column"
    return [int(k) for k in re.findall(r'<article class="[^"]*" id="row-orders-(\d+)"', found[1])]


@pytest.fixture
def statements() -> Iterator[list[str]]:
    """Every SQL statement any engine runs meanwhile."""
    seen: list[str] = []

    def note(conn: object, cursor: object, statement: str, *_: object) -> None:
        seen.append(statement)

    sa.event.listen(sa.engine.Engine, "before_cursor_execute", note)
    yield seen
    sa.event.remove(sa.engine.Engine, "before_cursor_execute", note)


def test_final_columns_show_the_venues_day_newest_first_open_ones_every_row(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Fri 10 July 2026 18:00 UTC = 19:00 BST. The venue's day (Europe/London) runs from
    # Fri 00:00 BST = Thu 23:00 UTC to Sat 00:00 BST = Fri 23:00 UTC.
    monkeypatch.setattr(screens_site.clock, "now", at("2026-07-10 18:00"))
    week_old = add_order(screens_site, at("2026-07-03 11:30"))  # open: shown, whatever its day
    soon = add_order(screens_site, at("2026-07-10 18:20"))
    late = add_order(screens_site, at("2026-07-10 17:40"))
    early = add_order(screens_site, at("2026-07-09 23:30"), status="cancelled")  # Fri 00:30 BST
    evening = add_order(screens_site, at("2026-07-10 17:00"), status="cancelled")  # Fri 18:00
    yesterday = add_order(screens_site, at("2026-07-09 22:30"), status="cancelled")  # Thu 23:30
    tomorrow = add_order(screens_site, at("2026-07-10 23:00"), status="cancelled")  # Sat 00:00
    page = signed_in("manager").get(BOARD).text
    # Open: every row, oldest first by the time it is for (a week-old one first).
    placed = column_ids(page, "placed")
    assert placed.index(week_old) < placed.index(late) < placed.index(soon)
    # Final: today's, newest first; the other days counted, and linked to.
    assert column_ids(page, "cancelled") == [evening, early]
    assert 'id="count-orders-cancelled">2</span>' in page
    rest = re.search(r'<p class="rest" id="rest-orders-cancelled">(.*?)</p>', page, re.S)
    assert rest is not None
    assert rest[1].startswith("2 on other days · <a href=")
    assert f'href="{BOARD}?state=cancelled"' in rest[1]
    assert '<span class="window">today</span>' in page
    # The link: every cancelled order of any day, newest first.
    every = signed_in("manager").get(f"{BOARD}?state=cancelled").text
    assert column_ids(every, "cancelled") == [tomorrow, evening, early, yesterday]
    # Urgency by each ticket's own time: 20 min late is late, due in 20 min is on time.
    assert re.search(rf'class="card late" id="row-orders-{late}"', page)
    assert re.search(rf'class="card on-time" id="row-orders-{soon}"', page)
    assert f'id="row-orders-{late}"' in page and "late 20 min" in page


def test_a_final_window_the_board_names_and_thresholds_the_manifest_checks(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    from services.apps import add_app
    from services.models import App, db

    with screens_site.app.app_context():
        app = db.session.execute(db.select(App).filter_by(name="venue")).scalar_one()
        manifest = dict(app.manifest)
        orders = {**manifest["tables"]["orders"], "board": {"final_hours": 3, "soon_minutes": 30}}
        add_app(
            db.session,
            "venue",
            {**manifest, "tables": {**manifest["tables"], "orders": orders}},
            replace=True,
        )
    try:
        # Sat 11 July 01:00 UTC: within 3 h, Fri 22:30 UTC (yesterday on the venue's clock)
        # is shown; Fri 21:00 UTC is not. Due in 25 min is soon with soon_minutes 30.
        monkeypatch.setattr(screens_site.clock, "now", at("2026-07-11 01:00"))
        shown = add_order(screens_site, at("2026-07-10 22:30"), status="cancelled")
        hidden = add_order(screens_site, at("2026-07-10 21:00"), status="cancelled")
        soon = add_order(screens_site, at("2026-07-11 01:25"))
        page = signed_in("manager").get(BOARD).text
        cancelled = column_ids(page, "cancelled")
        assert shown in cancelled and hidden not in cancelled
        assert re.search(rf'class="card soon" id="row-orders-{soon}"', page)
        assert "the 3 h either side of now" in page
    finally:
        with screens_site.app.app_context():
            add_app(db.session, "venue", manifest, replace=True)


def test_the_manifest_check_refuses_thresholds_out_of_range() -> None:
    import json
    from pathlib import Path

    from core.manifest.check import check_manifest

    manifest = json.loads(Path("examples/takeaway.json").read_text())
    board = manifest["tables"]["orders"]["board"]
    assert check_manifest(manifest) == []
    board["soon_minutes"] = 5000
    board["final_hours"] = 0
    said = {(r.where, r.sentence) for r in check_manifest(manifest)}
    assert ("tables.orders.board.soon_minutes", "5000 is too large: write at most 1,440") in said
    assert any(where == "tables.orders.board.final_hours" for where, _ in said)


def test_counts_are_bounded_and_no_statement_reads_the_whole_table(
    screens_site: Site,
    signed_in: Callable[[str], FlaskClient],
    monkeypatch: pytest.MonkeyPatch,
    statements: list[str],
) -> None:
    monkeypatch.setattr(screens_site.clock, "now", at("2026-07-10 18:00"))
    with screens_site.store().engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO public.orders (status, pickup_at) SELECT 'cancelled',"
            " timestamptz '2025-07-01 12:00+00' + n * interval '1 hour'"
            " FROM generate_series(1, 1500) AS n"
        )
    today = add_order(screens_site, at("2026-07-10 12:00"), status="cancelled")
    client = signed_in("manager")
    statements.clear()
    page = client.get(BOARD).text
    assert today in column_ids(page, "cancelled")
    # Read to the bound (1,000), never counted through the whole history.
    rest = re.search(r'<p class="rest" id="rest-orders-cancelled">([\d,]+)\+ on other days', page)
    assert rest is not None and int(rest[1].replace(",", "")) < 1000
    # The counts a push of one move sends: open states' rows, today's of a final state.
    from web.screens.reading import state_counts

    counts = state_counts(screens_site.store(), "orders", "", at("2026-07-10 18:00"))
    assert counts["cancelled"] == len(column_ids(page, "cancelled"))
    read = [s for s in statements if re.search(r'FROM (public\.)?"?orders"?', s)]
    assert read
    for statement in read:
        flat = " ".join(statement.split())
        bounded = "LIMIT" in flat or re.search(
            r"status IN|status =|status >|status IS NULL|id IN|id =", flat
        )
        assert bounded, f"reads every row of orders: {flat}"
        assert "GROUP BY" not in flat or "status IN" in flat, flat
