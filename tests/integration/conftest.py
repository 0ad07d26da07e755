"""The integration tests' fixtures, found by pytest in every module of this folder.

Each fixture is a thin wrapper: what it builds (a venue, a shop, a site with its users)
lives in the plain modules beside it (`pipeline_fixtures`, `sweep_fixtures`,
`api_fixtures`, `screens_fixtures`), which the tests import for their helpers.
"""

from __future__ import annotations

import shutil
import signal
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from flask.testing import FlaskClient
from rq import Queue

from services.storage import engine_for, upgrade_control_plane
from tests.integration.api_fixtures import SETTINGS, Clock, Site, installed_site
from tests.integration.launching import Launch, start_launch
from tests.integration.pipeline_fixtures import LONDON, Venue, build_venue
from tests.integration.screens_fixtures import installed_screens_site, served, signed_in_client
from tests.integration.sweep_fixtures import SHOP, Shop, build_shop

# --- Redis and a queue of the test's own ------------------------------------------


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    """A Redis client on the test's Redis (the screens' tests name their web clients
    for whom they sign in)."""
    connection = redis.Redis.from_url(redis_url)
    yield connection
    connection.close()


@pytest.fixture
def queue(client: redis.Redis, request: pytest.FixtureRequest) -> Iterator[Queue]:
    """An RQ queue of this test's own, emptied after it (the sweep ledger's keys are
    shared; the queue's name is unique)."""
    module = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")
    found = Queue(f"test-{module}-{uuid.uuid4().hex[:8]}", connection=client)
    yield found
    found.empty()


@pytest.fixture
def control(make_database: Callable[[], str], monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A migrated control plane of the test's own, as DATABASE_URL (the jobs read it)."""
    url = make_database()
    upgrade_control_plane(url)
    monkeypatch.setenv("DATABASE_URL", url)
    yield url
    engine_for(url).dispose()


# --- the write pipeline: the venue app on a database of its own --------------------


@pytest.fixture
def make_venue(make_database: Callable[[], str]) -> Iterator[Callable[..., Venue]]:
    """Factory: the test app on a fresh database (engines disposed after the test)."""
    made: list[Venue] = []

    def make(manifest: dict[str, Any] | None = None, zone: str = LONDON) -> Venue:
        venue = build_venue(make_database(), manifest, zone)
        made.append(venue)
        return venue

    yield make
    for venue in made:
        venue.engine.dispose()


@pytest.fixture
def venue(make_venue: Callable[..., Venue]) -> Venue:
    """The test app on a fresh database, in London."""
    return make_venue()


# --- the sweep: the shop app on a database of its own --------------------------------


@pytest.fixture
def make_shop(make_database: Callable[[], str]) -> Iterator[Callable[..., Shop]]:
    """Factory: an app (the shop by default) on a fresh database, as a Shop."""
    made: list[Shop] = []

    def make(manifest: dict[str, Any] | None = None, zone: str = "Europe/London") -> Shop:
        shop = build_shop(make_database(), manifest or SHOP, zone)
        made.append(shop)
        return shop

    yield make
    for shop in made:
        shop.engine.dispose()


@pytest.fixture
def shop(make_shop: Callable[..., Shop]) -> Shop:
    """The shop on a fresh database, in London."""
    return make_shop()


# --- the web: a control plane, the venue app on its connection, users ---------------


@pytest.fixture(scope="module")
def shared_site(server_database_url: str, redis_url: str) -> Iterator[Site]:
    """One site per test module: making databases is the slow part, and tests add own rows."""
    with installed_site(server_database_url, redis_url) as built:
        yield built


@pytest.fixture
def site(shared_site: Site) -> Site:
    """The module's site, its clock and settings as a test expects to find them."""
    shared_site.clock.now = Clock().now
    store = shared_site.store()
    with store.engine.begin() as conn:
        conn.execute(store.table("settings").update().values(**SETTINGS))
    return shared_site


@pytest.fixture
def fresh_site(server_database_url: str, redis_url: str) -> Iterator[Site]:
    """A site of its own, for a test that changes the control plane."""
    with installed_site(server_database_url, redis_url) as built:
        yield built


@pytest.fixture(scope="module")
def screens_site(server_database_url: str, redis_url: str) -> Iterator[Site]:
    """The venue site for a module's tests, its users able to sign in (rows differ by key)."""
    with installed_screens_site(server_database_url, redis_url) as built:
        yield built


@pytest.fixture(scope="module")
def base_url(screens_site: Site) -> Iterator[str]:
    """The module's screens site served by a real threaded server (websockets need one):
    its `host:port`."""
    with served(screens_site.app) as port:
        yield f"127.0.0.1:{port}"


@pytest.fixture
def signed_in(screens_site: Site) -> Callable[[str], FlaskClient]:
    """Factory: a fresh client signed in as one of the test users (`manager`, `clerk`, …)."""
    return lambda user: signed_in_client(screens_site, user)


# --- `adminium run` on a fresh instance folder --------------------------------------


@pytest.fixture
def instance_folder() -> Iterator[Path]:
    """A fresh instance folder with a short path (the servers' sockets live under it)."""
    folder = Path(tempfile.mkdtemp(prefix="adm", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def launch(instance_folder: Path) -> Iterator[Callable[[], Launch]]:
    """Factory: start `adminium run` on the instance folder and a free port."""
    launches: list[Launch] = []

    def start() -> Launch:
        launches.append(start_launch(instance_folder, len(launches) + 1))
        return launches[-1]

    yield start
    for running in launches:
        if running.process.poll() is None:  # a failed test: do not leave it behind
            running.stop(signal.SIGTERM, group=False)
