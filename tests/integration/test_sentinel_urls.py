"""REDIS_URL's forms read in one place (`services.redis_client`): one server as
redis-py reads it, and `redis+sentinel://` as `limits` reads it, with the data nodes' and
the sentinels' passwords; what the throttle's storage is told; how the URL is shown."""

from __future__ import annotations

import pytest
from redis.sentinel import SentinelConnectionPool

from services import redis_client
from services.redis_client import SentinelURL, limiter_storage, parse_sentinel
from services.urls import hide_password

URL = "redis+sentinel://:s3cret@10.0.0.1:26379,10.0.0.2:26380,[::1]:26381/adminium/2"


def test_a_sentinel_url_names_its_sentinels_service_database_and_passwords() -> None:
    assert parse_sentinel(URL) == SentinelURL(
        sentinels=(("10.0.0.1", 26379), ("10.0.0.2", 26380), ("::1", 26381)),
        service="adminium",
        db=2,
        username=None,
        password="s3cret",
        sentinel_password="s3cret",  # as limits reads it: the sentinels' too
        sentinel_username=None,
    )
    own = parse_sentinel("redis+sentinel://app:p%40ss@s1:26379/adminium?sentinel_password=watch")
    assert (own.db, own.username, own.password) == (0, "app", "p@ss")
    assert (own.sentinel_username, own.sentinel_password) == (None, "watch")
    none = parse_sentinel("redis+sentinel://:p@s1:26379/adminium?sentinel_password=")
    assert (none.password, none.sentinel_password) == ("p", None)


@pytest.mark.parametrize(
    "url",
    [
        "redis+sentinel:///adminium",  # no sentinel
        "redis+sentinel://s1:26379",  # no service
        "redis+sentinel://s1:26379/adminium/0/extra",
        "redis+sentinel://s1/adminium",  # no port
        "redis+sentinel://s1:26379/adminium/zero",
        "redis://127.0.0.1:6379/0",
    ],
)
def test_a_sentinel_url_without_its_parts_is_refused(url: str) -> None:
    with pytest.raises(ValueError):
        parse_sentinel(url)


def test_the_client_of_a_sentinel_url_asks_the_sentinels_for_the_primary() -> None:
    client = redis_client.connect(URL, socket_timeout=3)
    pool = client.connection_pool
    assert isinstance(pool, SentinelConnectionPool)
    assert pool.service_name == "adminium"
    assert pool.connection_kwargs["db"] == 2
    assert pool.connection_kwargs["password"] == "s3cret"
    assert pool.connection_kwargs["socket_timeout"] == 3
    sentinels = pool.sentinel_manager.sentinels
    assert [s.connection_pool.connection_kwargs["port"] for s in sentinels] == [26379, 26380, 26381]
    # RQ's CLI makes the worker's connection with the same reading.
    worker = redis_client.Client.from_url(URL)
    assert isinstance(worker, redis_client.Client)
    assert isinstance(worker.connection_pool, SentinelConnectionPool)


def test_one_server_and_the_embedded_socket_are_read_as_redis_py_reads_them() -> None:
    one = redis_client.connect("redis://:pw@127.0.0.1:6390/3").connection_pool.connection_kwargs
    assert (one["host"], one["port"], one["db"], one["password"]) == ("127.0.0.1", 6390, 3, "pw")
    socket = redis_client.connect("unix:///tmp/adminium/redis.socket?db=0")
    assert socket.connection_pool.connection_kwargs["path"] == "/tmp/adminium/redis.socket"
    assert type(redis_client.Client.from_url("redis://127.0.0.1:6390/0")) is redis_client.Client
    assert redis_client.connect_optional("") is None


def test_the_throttle_is_told_the_sentinels_its_own_way() -> None:
    assert limiter_storage("") == ("memory://", {})
    assert limiter_storage("redis://127.0.0.1:6379/0") == ("redis://127.0.0.1:6379/0", {})
    assert limiter_storage("unix:///run/r.sock") == ("redis+unix:///run/r.sock", {})
    uri, options = limiter_storage(URL + "?sentinel_password=watch")
    # limits would read /adminium/2 as the service "adminium2": the database goes apart.
    assert uri == "redis+sentinel://:s3cret@10.0.0.1:26379,10.0.0.2:26380,[::1]:26381/adminium"
    assert options["db"] == 2
    assert options["sentinel_kwargs"]["password"] == "watch"


def test_a_sentinel_url_is_shown_with_its_passwords_hidden() -> None:
    shown = hide_password(URL + "?sentinel_password=watch")
    assert shown == (
        "redis+sentinel://:***@10.0.0.1:26379,10.0.0.2:26380,[::1]:26381/adminium/2"
        "?sentinel_password=***"
    )
