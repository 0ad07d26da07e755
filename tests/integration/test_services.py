"""The suite talks to a real PostgreSQL and a real Redis."""

from __future__ import annotations

import psycopg
import redis


def test_postgres_answers(database_url: str) -> None:
    with psycopg.connect(database_url) as conn:
        row = conn.execute("select current_setting('server_version_num')::int").fetchone()
    assert row is not None and row[0] >= 140000


def test_redis_round_trip(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    client.set("adminium:test:ping", "pong", ex=10)
    assert client.get("adminium:test:ping") == b"pong"
