"""The one home of the Redis client: every process (web, live hub, publisher, status,
metrics, limiter, worker, clock, console) gets its client for REDIS_URL here.

REDIS_URL names either one server, as redis-py reads it (`redis://`, `rediss://`, or the
embedded Redis's `unix://` socket path), or a primary watched by Redis Sentinel, in the
form the `limits` library behind the sign-in throttle reads:

    redis+sentinel://[[USER]:PASSWORD@]HOST:PORT[,HOST:PORT...]/SERVICE[/DB][?sentinel_password=P]

HOST:PORT are the sentinels, SERVICE the name they watch the primary under (`sentinel
monitor SERVICE ...`), DB the database number (0). PASSWORD (and USER) are the data nodes'
and, as `limits` reads it, the sentinels' too; `?sentinel_password=` gives the sentinels a
password of their own (empty: the sentinels take none).

A Sentinel client asks the sentinels for the primary whenever it opens a connection, and
drops its connections when the primary changes or answers as a replica (ReadOnlyError): a
process whose call failed with a ConnectionError while the primary was lost finds the new
one at its next try, without a restart (the worker and the clock try every 2 s).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import redis
from redis.sentinel import Sentinel

SENTINEL_SCHEME = "redis+sentinel"
"""The scheme of a REDIS_URL naming sentinels (the one `limits` reads)."""

SENTINEL_TIMEOUT = 1.0
"""Seconds a sentinel has to answer (connect, then each call) before the next is asked: a
lost sentinel must not hold up finding the primary."""


@dataclass(frozen=True)
class SentinelURL:
    """A `redis+sentinel://` REDIS_URL read into its parts."""

    sentinels: tuple[tuple[str, int], ...]
    service: str
    db: int = 0
    username: str | None = None
    password: str | None = None
    sentinel_password: str | None = None
    """The sentinels' password: the data nodes' unless `?sentinel_password=` says."""
    sentinel_username: str | None = None
    """The sentinels' user: the data nodes' unless `?sentinel_password=` says."""


def is_sentinel(url: str) -> bool:
    """Whether a REDIS_URL names sentinels rather than one server."""
    return url.split("://", 1)[0].lower() == SENTINEL_SCHEME


def parse_sentinel(url: str) -> SentinelURL:
    """A `redis+sentinel://` URL's sentinels, service, database and passwords (ValueError
    when it is not one, or lacks a sentinel or the service)."""
    if not is_sentinel(url):
        raise ValueError(f"not a {SENTINEL_SCHEME}:// URL")
    parts = urlsplit(url)
    hosts = parts.netloc.rpartition("@")[2]
    sentinels = []
    for location in filter(None, (h.strip() for h in hosts.split(","))):
        one = urlsplit(f"//{location}")
        if not one.hostname or one.port is None:
            raise ValueError(f"a sentinel needs HOST:PORT, not {location!r}")
        sentinels.append((one.hostname, one.port))
    if not sentinels:
        raise ValueError("a redis+sentinel:// URL names at least one sentinel HOST:PORT")
    path = [p for p in parts.path.split("/") if p]
    if not path or len(path) > 2:
        raise ValueError("a redis+sentinel:// URL's path is /SERVICE or /SERVICE/DB")
    db = int(path[1]) if len(path) == 2 else 0
    username = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    query = parse_qs(parts.query, keep_blank_values=True)
    sentinel_username, sentinel_password = username, password
    if "sentinel_password" in query:
        sentinel_username, sentinel_password = None, query["sentinel_password"][-1] or None
    return SentinelURL(
        tuple(sentinels),
        unquote(path[0]),
        db,
        username,
        password,
        sentinel_password,
        sentinel_username,
    )


_SENTINELS: dict[tuple[SentinelURL, tuple[tuple[str, Any], ...]], Sentinel] = {}
_LOCK = threading.Lock()


def sentinel_for(target: SentinelURL, **options: Any) -> Sentinel:
    """The process's one `Sentinel` for these sentinels and data-node options (a client made
    again, as the live hub does after each failure, reuses its sentinels' connections)."""
    key = (target, tuple(sorted(options.items())))
    with _LOCK:
        found = _SENTINELS.get(key)
        if found is None:
            auth = {"username": target.username, "password": target.password}
            sentinel_auth = {
                "username": target.sentinel_username,
                "password": target.sentinel_password,
            }
            found = Sentinel(  # type: ignore[no-untyped-call]
                list(target.sentinels),
                sentinel_kwargs={
                    **sentinel_auth,
                    "socket_timeout": SENTINEL_TIMEOUT,
                    "socket_connect_timeout": SENTINEL_TIMEOUT,
                },
                db=target.db,
                **auth,
                **options,
            )
            _SENTINELS[key] = found
        return found


def connect(
    url: str, *, redis_class: type[redis.Redis] = redis.Redis, **options: Any
) -> redis.Redis:
    """A client for REDIS_URL: one server's (redis-py's `from_url`), or the primary that the
    sentinels name now and after a failover. `options` go to each data-node connection
    (`socket_timeout=3`...)."""
    if not is_sentinel(url):
        return redis_class.from_url(url, **options)
    target = parse_sentinel(url)
    client: redis.Redis = sentinel_for(target, **options).master_for(  # type: ignore[no-untyped-call]
        target.service, redis_class=redis_class
    )
    return client


def connect_optional(url: str | None, **options: Any) -> redis.Redis | None:
    """A client for REDIS_URL, or None when no Redis is named."""
    return connect(url, **options) if url else None


def primary_address(url: str) -> tuple[str, int] | None:
    """The primary the sentinels name now (None for one server's URL); raises a RedisError
    when no sentinel answers or none knows the service."""
    if not is_sentinel(url):
        return None
    target = parse_sentinel(url)
    host, port = sentinel_for(target).discover_master(target.service)  # type: ignore[no-untyped-call]
    return str(host), int(port)


class Client(redis.Redis):
    """redis-py's client whose `from_url` also reads a `redis+sentinel://` URL: RQ's CLI
    makes its connection with `--connection-class services.redis_client.Client`, so the
    Procfile's worker takes REDIS_URL in either form."""

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> Client:
        if is_sentinel(url):
            client = connect(url, redis_class=cls, **kwargs)
        else:
            client = super().from_url(url, **kwargs)
        assert isinstance(client, Client)
        return client


def limiter_storage(url: str) -> tuple[str, dict[str, Any]]:
    """Flask-Limiter's storage URI and options for REDIS_URL (no Redis: memory). `limits`
    reads `redis+sentinel://` itself; its path is the service alone (it would read
    `/SERVICE/DB` as one name), so the database and the sentinels' own password go as
    options. A socket path is `redis+unix://`."""
    if not url:
        return "memory://", {}
    if url.startswith("unix://"):
        return "redis+unix://" + url.removeprefix("unix://"), {}
    if not is_sentinel(url):
        return url, {}
    target = parse_sentinel(url)
    parts = urlsplit(url)
    auth = parts.netloc.rpartition("@")[0]
    hosts = ",".join(f"[{h}]:{p}" if ":" in h else f"{h}:{p}" for h, p in target.sentinels)
    uri = f"{SENTINEL_SCHEME}://{auth + '@' if auth else ''}{hosts}/{target.service}"
    options: dict[str, Any] = {
        "db": target.db,
        "sentinel_kwargs": {
            "username": target.sentinel_username,
            "password": target.sentinel_password,
            "socket_timeout": SENTINEL_TIMEOUT,
            "socket_connect_timeout": SENTINEL_TIMEOUT,
        },
    }
    return uri, options
