"""Through Debian's PgBouncer in transaction mode, where a client's transactions go to
whichever server session is free: racing sweeps on two connections over one database
move each row once (the fence is a lease row, not a session's advisory lock), writes
through the pipeline work (no prepared statement is left to another client's session),
and a pooler in statement mode is refused when the connection is added."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest
from click.testing import CliRunner

from adminium.cli import main
from core.basics.actors import Actor
from core.store.store import Store
from core.sweep.report import SweepOutcome, SweepReport
from core.sweep.sweep import sweep_connection
from core.time.clock import venue_zone
from core.writes.pipeline import change_row, create_row
from core.writes.request import WriteRequest
from services.connections import STATEMENT_POOLING
from services.storage import engine_for
from tests.integration.pgbouncer_fixtures import Bouncer, start_pgbouncer
from tests.integration.sweep_fixtures import Shop
from tests.integration.test_sweep_races import NOW, many

PERSON = Actor.person("sam@shop.test", {"staff"})


@pytest.fixture
def bouncer(server_database_url: str) -> Iterator[Bouncer]:
    """PgBouncer in transaction mode, four server sessions per database."""
    with start_pgbouncer(server_database_url, "transaction", pool_size=4) as running:
        yield running


def through(bouncer: Bouncer, shop: Shop, name: str, extra: str = "") -> Store:
    """The shop's app on the product's engine for its database through PgBouncer."""
    engine = engine_for(bouncer.url(shop.url) + extra)
    assert engine.url.port == bouncer.port
    return Store(engine, shop.store.app, venue_zone("Europe/London"), connection=name)


@pytest.mark.parametrize("mode", ["transaction", "session"])
def test_racing_sweeps_on_two_connections_through_pgbouncer_move_each_row_once(
    server_database_url: str, shop: Shop, mode: str
) -> None:
    # Transaction mode: four server sessions shared by every client's transactions;
    # session mode gives each client one of its own (enough of them).
    sessions = 4 if mode == "transaction" else 20
    with start_pgbouncer(server_database_url, mode, pool_size=sessions) as bouncer:
        race_through(bouncer, shop)


def race_through(bouncer: Bouncer, shop: Shop) -> None:
    """Two sweeps of each of two connections over the shop's database, released at once."""
    keys = many(shop, 200)
    names = ["shop", "shop", "shop-two", "shop-two"]
    stores = {name: through(bouncer, shop, name) for name in set(names)}
    gate = threading.Barrier(len(names))
    reports: list[SweepReport] = []

    def run(name: str) -> None:
        gate.wait()
        reports.append(sweep_connection([stores[name]], connection=name, now=NOW))

    threads = [threading.Thread(target=run, args=(name,)) for name in names]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        for store in stores.values():
            store.engine.dispose()
    assert sum(len(r.moved) for r in reports) == 200
    assert shop.audit_counts() == {str(k): 1 for k in keys}
    # Each connection's fence held through the pooler: of its two sweeps, one was
    # turned away by the other's lease.
    for name in set(names):
        outcomes = sorted(r.outcome.value for r in reports if r.connection == name)
        assert outcomes == [SweepOutcome.done.value, SweepOutcome.fenced.value]


def test_writes_through_the_pipeline_share_one_server_session_through_pgbouncer(
    server_database_url: str, shop: Shop
) -> None:
    # One server session for every client: psycopg's prepared statements (after the
    # fifth run of a statement on a connection) would meet another client's there.
    with start_pgbouncer(server_database_url, "transaction", pool_size=1) as one:
        stores = [through(one, shop, "shop"), through(one, shop, "shop", " application_name=b")]
        try:
            keys = []
            for turn in range(12):
                store = stores[turn % 2]
                made = create_row(store, WriteRequest("orders", PERSON, NOW, values={}))
                change_row(
                    store,
                    WriteRequest("orders", PERSON, NOW, key=made.key, values={"note": f"{turn}"}),
                )
                keys.append(made.key)
            shop.sql("UPDATE orders SET due_at = :due", due=NOW - timedelta(minutes=1))
            report = sweep_connection(stores, connection="shop", now=NOW)
        finally:
            for store in stores:
                store.engine.dispose()
    assert sorted(d.key for d in report.moved) == sorted(keys)
    assert [shop.status(k) for k in keys] == ["cancelled"] * 12
    assert len(shop.audit()) == 12 * 3


def test_connection_add_refuses_a_pooler_in_statement_mode_and_names_the_mode_to_use(
    server_database_url: str, make_database: Callable[[], str], bouncer: Bouncer, shop: Shop
) -> None:
    runner, env = CliRunner(), {"DATABASE_URL": make_database(), "REDIS_URL": ""}
    with start_pgbouncer(server_database_url, "statement") as statement:
        refused = runner.invoke(
            main, ["connection", "add", "shop", "--url", statement.url(shop.url)], env=env
        )
    assert refused.exit_code == 1
    assert refused.output.strip() == f"Error: {STATEMENT_POOLING} (INVALID_VALUE)"
    assert "pool_mode = transaction" in STATEMENT_POOLING
    added = runner.invoke(
        main, ["connection", "add", "shop", "--url", bouncer.url(shop.url)], env=env
    )
    assert added.exit_code == 0, added.output
    assert added.output.startswith("connection shop added:")
