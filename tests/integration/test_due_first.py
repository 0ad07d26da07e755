"""Due rows first, on real Redis and PostgreSQL: each sweep and each write
through the pipeline leaves the connection's next due moment, and the minute's real tick
enqueues the connections with something due in its minute first, then the rest; every
connection is still enqueued, and a row written in plain SQL (no hint) still moves."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
import redis
from rq import Queue

from core.basics.actors import Actor
from core.store.store import Store
from core.writes.pipeline import WriteResult
from jobs.sweep import minute_of, sweep_job_id
from jobs.tick import enqueue_minute
from jobs.worker import SweepWorker
from services.apps import add_app, app_store, lookup_app
from services.connections import add_connection
from services.due_hints import HINTS
from services.events import Publisher
from services.storage import ENGINES, open_session
from services.writes import write_by_person
from tests.integration.sweep_fixtures import SHOP


def status(url: str, key: int) -> str:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT status FROM orders WHERE id = %s", (key,)).fetchone()
    assert row is not None
    return str(row[0])


def plain_sql_order(url: str, due: datetime) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "INSERT INTO orders (status, due_at) VALUES ('placed', %s) RETURNING id", (due,)
        ).fetchone()
    assert row is not None
    return int(row[0])


def staff_writes_order(store: Store, client: redis.Redis, due: datetime) -> WriteResult:
    """A manager creates an order due at `due` through the pipeline, publishing on `client`."""
    return write_by_person(
        store,
        "orders",
        actor=Actor.person("staff@example.com", {"manager"}),
        clock=lambda: datetime.now(UTC),
        publisher=Publisher(client),
        values={"due_at": due},
    )


def test_the_tick_enqueues_the_connections_with_something_due_first(
    client: redis.Redis,
    queue: Queue,
    control: str,
    make_database: Callable[[], str],
) -> None:
    tag = uuid.uuid4().hex[:8]
    # By name a, b, c: the fair order of three connections served in the same minute.
    a, b, c = (f"{letter}{tag}" for letter in "abc")
    urls = {name: make_database() for name in (a, b, c)}
    with open_session(control) as session:
        for name, url in urls.items():
            add_connection(session, name, url, "Europe/London")
            add_app(session, name, SHOP, create_tables=True)
    for url in urls.values():
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("INSERT INTO settings DEFAULT VALUES")
    start = datetime.now(UTC)
    first = minute_of(start)
    # c holds a row (plain SQL) due a few seconds from now: its sweep leaves that moment.
    in_c = plain_sql_order(urls[c], start + timedelta(seconds=3))
    try:
        assert enqueue_minute(queue, [a, b, c], first, start) == 3
        SweepWorker([queue], connection=client).work(burst=True)
        assert client.zscore(HINTS, c) == pytest.approx((start + timedelta(seconds=3)).timestamp())
        assert client.zscore(HINTS, a) is None  # nothing waits in a
        # b gets a row due soon through the pipeline: the write leaves its hint.
        with open_session(control) as session:
            app = lookup_app(session, b, "shop")
            assert app is not None
            store = app_store(app)
        written = staff_writes_order(store, client, start + timedelta(seconds=4))
        assert client.zscore(HINTS, b) == pytest.approx((start + timedelta(seconds=4)).timestamp())
        # a gets a row in plain SQL after its sweep: no hint, swept in its turn all the same.
        in_a = plain_sql_order(urls[a], start + timedelta(seconds=2))

        following = first + timedelta(minutes=1)
        assert enqueue_minute(queue, [a, b, c], following, following) == 3
        assert queue.get_job_ids() == [sweep_job_id(n, following) for n in (b, c, a)]

        time.sleep(max(0.0, (start + timedelta(seconds=4.5) - datetime.now(UTC)).total_seconds()))
        SweepWorker([queue], connection=client).work(burst=True)
        assert status(urls[c], in_c) == "cancelled"
        assert status(urls[b], int(written.key)) == "cancelled"
        assert status(urls[a], in_a) == "cancelled"
        # Nothing waits any more: no hint is left.
        assert client.zmscore(HINTS, [a, b, c]) == [None, None, None]
    finally:
        client.zrem(HINTS, a, b, c)
        ENGINES.clear()


def test_a_persons_write_sends_its_events_and_its_hint_in_one_round_trip(
    client: redis.Redis,
    control: str,
    make_database: Callable[[], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The write's row event reaches a subscriber and its due hint is left, and the two
    took one connection from the client's pool: one round trip to Redis, not two."""
    name = f"h{uuid.uuid4().hex[:8]}"
    url = make_database()
    with open_session(control) as session:
        add_connection(session, name, url, "Europe/London")
        add_app(session, name, SHOP, create_tables=True)
        app = lookup_app(session, name, "shop")
        assert app is not None
        store = app_store(app)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO settings DEFAULT VALUES")
    listener = client.pubsub()
    listener.subscribe(f"adminium:rows:{name}")
    assert listener.get_message(timeout=5)["type"] == "subscribe"  # type: ignore[index]
    taken: list[object] = []
    pool = client.connection_pool
    real_get = pool.get_connection

    def counted(*args: object, **kwargs: object) -> object:
        taken.append(args)
        return real_get(*args, **kwargs)

    due = datetime.now(UTC) + timedelta(minutes=30)
    try:
        monkeypatch.setattr(pool, "get_connection", counted)
        written = staff_writes_order(store, client, due)
        monkeypatch.undo()
        assert len(taken) == 1
        assert client.zscore(HINTS, name) == pytest.approx(due.timestamp())
        message = listener.get_message(timeout=5)
        assert message is not None and message["type"] == "message"
        assert f'"key": {written.key}' in message["data"].decode()
    finally:
        listener.close()
        client.zrem(HINTS, name)
        ENGINES.clear()
