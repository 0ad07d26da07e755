"""Before a sample set is added: the rows the next sweep moves at once, asked writing nothing
(as a change's preview asks it, for a sample set the sweep would move at once)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import sqlalchemy as sa

from core.samples.data import add_sample
from core.samples.preview import sample_due
from core.store.store import Store
from core.sweep.sweep import sweep_connection
from tests.integration.pipeline_fixtures import example_sample, example_stores

# Wed 1 Jul 2026 13:00 BST.
NOW = datetime(2026, 7, 1, 12, tzinfo=UTC)

MakeStore = Callable[[str], Store]


@pytest.fixture
def make_store(database_url: str) -> Iterator[MakeStore]:
    """Factory: an example app installed on the test's database, in Europe/London."""
    with example_stores(database_url) as make:
        yield make


example = example_sample


def everything(store: Store) -> dict[str, Any]:
    """Every row of the app's tables and of adminium's own, as text (what 'nothing written'
    is checked against)."""
    found: dict[str, Any] = {}
    with store.engine.connect() as conn:
        names = conn.execute(
            sa.text(
                "SELECT table_schema || '.' || table_name FROM information_schema.tables"
                " WHERE table_schema IN (:app, 'adminium') AND table_type = 'BASE TABLE'"
            ),
            {"app": store.app.schema_name},
        ).scalars()
        for name in sorted(names):
            rows = conn.execute(sa.text(f"SELECT t::text FROM {name} t")).scalars()
            found[name] = sorted(rows)
    return found


def test_the_takeaway_sample_names_its_order_of_yesterday_worked_by_hand(
    make_store: MakeStore,
) -> None:
    store = make_store("takeaway")
    due = sample_due(store, example("takeaway"), now=NOW)
    # order1: pickup_at = now - 1 day = Tue 30 Jun 13:00 BST, still `placed`; its moment is
    # that day's closing, 23:00 BST = 22:00 UTC, passed: cancelled at the first sweep.
    # The other orders pick up 5-40 minutes ahead or are past `placed`/`confirmed`.
    assert [(d.table, d.place, d.label, d.what, d.moment) for d in due] == [
        ("orders", 1, "order1", "placed → cancelled", datetime(2026, 6, 30, 22, tzinfo=UTC))
    ]


@pytest.mark.parametrize("name", ["takeaway", "tickets", "hotel"])
def test_asking_writes_nothing_and_names_what_the_sweep_then_moves(
    make_store: MakeStore, name: str
) -> None:
    store = make_store(name)
    before = everything(store)
    due = sample_due(store, example(name), now=NOW)
    assert everything(store) == before  # no row, mark, audit entry, posting or email
    added = add_sample(store, example(name), now=NOW)
    place = {(row.table, str(row.key)): (row.table, row.place) for row in added}
    report = sweep_connection([store], connection="test", now=NOW)
    moved = {place[(d.rule.table, str(d.key))] for d in report.moved}
    moved |= {place[(g.record.table, str(g.record.key))] for g in report.given_back}
    assert moved == {(d.table, d.place) for d in due}
    assert not report.set_aside and not report.conflicts
