"""Databases reached through Debian's PgBouncer in transaction mode keep their connection
open in a process past `ADMINIUM_WARM_ENGINES` (an idle client of PgBouncer holds no
PostgreSQL session), bounded apart; a connection idle past `PING_IDLE` is not pinged
through the pooler (a round trip to a server session) but looked at on its socket, and
one PgBouncer closed is replaced as it is handed out (real PostgreSQL and PgBouncer)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from services import storage
from services.storage import Engines
from tests.integration.pgbouncer_fixtures import Bouncer, start_pgbouncer


@pytest.fixture
def bouncer(server_database_url: str) -> Iterator[Bouncer]:
    with start_pgbouncer(server_database_url, "transaction") as running:
        yield running


def used(engines: Engines, url: str) -> Any:
    """Run a statement on the URL's engine; the DBAPI connection it ran on."""
    with engines.get(url).connect() as conn:
        conn.exec_driver_sql("SELECT 1")
        return conn.connection.dbapi_connection


@pytest.fixture
def pings(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Each connection pinged as it is handed out (every handed-back one is asked: a
    PING_IDLE of 0)."""
    from sqlalchemy.dialects.postgresql.psycopg import PGDialect_psycopg

    pinged: list[Any] = []
    ping = PGDialect_psycopg.do_ping

    def counting(self: Any, dbapi_connection: Any) -> bool:
        pinged.append(dbapi_connection)
        return bool(ping(self, dbapi_connection))

    monkeypatch.setattr(PGDialect_psycopg, "do_ping", counting)
    monkeypatch.setattr(storage, "PING_IDLE", 0.0)
    return pinged


def test_pooled_databases_keep_their_connection_past_the_warm_engines(
    bouncer: Bouncer, make_database: Callable[[], str]
) -> None:
    direct = [make_database() for _ in range(2)]
    pooled = [bouncer.url(make_database()) for _ in range(3)]
    engines = Engines(1, pooled=3)
    try:
        urls = [*pooled, *direct]
        first = {url: used(engines, url) for url in urls}
        again = {url: used(engines, url) for url in urls}
        # Through PgBouncer: the same connection each time (the first database met its
        # server first, before the pooler was known, and came in once more after).
        assert [again[u] is first[u] for u in pooled[1:]] == [True, True]
        # Direct, one warm engine: each met the other's going cold in between.
        assert [again[u] is first[u] for u in direct] == [False, False]
        third = {url: used(engines, url) for url in urls}
        assert all(third[u] is again[u] for u in pooled)
        assert [engines.get(u).pool.checkedin() for u in pooled] == [1, 1, 1]
        assert engines.get(direct[0]).pool.checkedin() == 0  # cold: its connection closed
        assert len(engines) == 4  # three pooled and one direct warm
    finally:
        engines.clear()


def test_pooled_databases_are_bounded_apart(
    bouncer: Bouncer, make_database: Callable[[], str]
) -> None:
    pooled = [bouncer.url(make_database()) for _ in range(3)]
    engines = Engines(8, pooled=2)
    try:
        for url in [*pooled, *pooled]:
            used(engines, url)
        # The least recently used of the three pooled went cold as the third came in.
        assert [engines.get(u).pool.checkedin() for u in pooled[1:]] == [1, 1]
    finally:
        engines.clear()


def test_a_pooled_connection_is_looked_at_not_pinged_and_one_the_pooler_closed_is_replaced(
    server_database_url: str, make_database: Callable[[], str], pings: list[Any]
) -> None:
    database, direct = make_database(), make_database()
    engines = Engines(8)
    try:
        used(engines, direct)
        used(engines, direct)
        assert len(pings) == 1  # a direct connection handed back is pinged (PING_IDLE 0)
        with start_pgbouncer(server_database_url) as first:
            url = first.url(database)
            used(engines, url)
            kept = used(engines, url)
            assert used(engines, url) is kept
            assert len(pings) == 1  # through the pooler: none
        # PgBouncer stopped (its clients' sockets closed) and started again on its port.
        with start_pgbouncer(server_database_url, listen_on=first.port):
            replaced = used(engines, url)
            assert replaced is not kept and kept.closed
            assert used(engines, url) is replaced
        assert len(pings) == 1
    finally:
        engines.clear()
