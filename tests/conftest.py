"""Shared fixtures: real PostgreSQL and Redis, from TEST_*_URL or embedded."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from hypothesis import settings
from psycopg import sql

from adminium.embedded import Embedded, start_postgres, start_redis

ROOT = Path(__file__).resolve().parent.parent

# Property tests: `ci` (the default) runs the same examples every time, so a red build is
# red again on a rerun; `wide` (HYPOTHESIS_PROFILE=wide) searches far more, by hand.
settings.register_profile("ci", derandomize=True, database=None, max_examples=200)
settings.register_profile("wide", max_examples=5000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (`--dist loadgroup`), each test file runs on one worker, and every
    browser test on the same one: two Chromiums and their live servers at once starve a
    2-core machine's timers and sockets."""
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        group = "browser" if path.startswith("tests/browser/") else path
        item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(scope="session")
def embedded() -> Iterator[Embedded]:
    """Embedded servers for the session, started only when a test needs one without a URL."""
    servers = Embedded()
    yield servers
    servers.stop()


@pytest.fixture(scope="session")
def server_database_url(embedded: Embedded) -> str:
    """A PostgreSQL server's maintenance database URL."""
    url = os.environ.get("TEST_DATABASE_URL")
    if url:
        return url
    return start_postgres(ROOT / "instance" / "test-pg", embedded)


@pytest.fixture(scope="session")
def redis_url(embedded: Embedded) -> str:
    """A Redis server's URL: TEST_REDIS_URL's, else an embedded one.

    Under pytest-xdist (`make test` runs `-n 3`) only the first worker uses TEST_REDIS_URL;
    each other worker gets an embedded Redis of its own: the tests share fixed names on it
    (the `adminium` queue, the outbox drain's mark of connection `venue`, the live screens'
    channels), and a database number per worker would not part the channels, as Redis
    publishes across databases.
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    if worker != "gw0" or not os.environ.get("TEST_REDIS_URL"):
        name = "test-redis.db" if worker == "gw0" else f"test-redis-{worker}.db"
        return start_redis(ROOT / "instance" / name, embedded)
    return os.environ["TEST_REDIS_URL"]


@pytest.fixture
def make_database(server_database_url: str) -> Iterator[object]:
    """Factory: a fresh, empty database on the test server; dropped after the test."""
    made: list[str] = []

    def make() -> str:
        name = f"adm_test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(server_database_url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        made.append(name)
        return database_url_for(server_database_url, name)

    yield make
    with psycopg.connect(server_database_url, autocommit=True) as conn:
        for name in made:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def database_url_for(server_url: str, name: str) -> str:
    """The same server's URL for another database."""
    info = psycopg.conninfo.conninfo_to_dict(server_url)
    info["dbname"] = name
    return psycopg.conninfo.make_conninfo(**info)


@pytest.fixture
def database_url(make_database: object) -> str:
    """A fresh, empty database for one test."""
    return make_database()  # type: ignore[operator]
