"""Commit -> websocket message latency: 200 moves on a board of 1,000 rows.

A signed-in board socket is open on the venue's `orders` board (1,000 rows). Each of 200
orders is moved placed -> confirmed through the write pipeline; the clock starts when
`change_row` returns (the commit), its event is published on Redis, and stops when the
board's socket receives the push naming that card. Prints one JSON line: median, p95.

Run: TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \
     TEST_REDIS_URL=redis://127.0.0.1:6379/0 .venv/bin/python bench/live.py
(without the URLs, the embedded servers are started under instance/).
"""

from __future__ import annotations

import json
import logging
import os
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import redis
import sqlalchemy as sa
from psycopg import sql
from simple_websocket import Client
from werkzeug.serving import make_server

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from adminium.embedded import Embedded, start_postgres, start_redis  # noqa: E402
from bench.common import arguments  # noqa: E402
from core.basics.actors import Actor  # noqa: E402
from core.writes.pipeline import change_row  # noqa: E402
from core.writes.request import WriteRequest  # noqa: E402
from services.events import Publisher  # noqa: E402
from services.models import db  # noqa: E402
from services.storage import engine_for  # noqa: E402
from tests.conftest import database_url_for  # noqa: E402
from tests.integration.api_fixtures import build_site  # noqa: E402
from tests.integration.pipeline_fixtures import at  # noqa: E402
from tests.integration.screens_fixtures import give_passwords, sign_in  # noqa: E402

ROWS = 1_000
MOVES = 200
SOCKET = "/live?screen=board&connection=venue&app=venue&table=orders&q=&state="


@contextmanager
def databases(server: str, count: int) -> Iterator[list[str]]:
    """Fresh databases on the server, dropped afterwards."""
    names = [f"adm_bench_{uuid.uuid4().hex[:12]}" for _ in range(count)]
    with psycopg.connect(server, autocommit=True) as conn:
        for name in names:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield [database_url_for(server, name) for name in names]
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            for name in names:
                conn.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )


def measure(server: str, redis_url: str) -> dict[str, object]:
    """The latencies of MOVES moves on a board of ROWS rows, in milliseconds."""
    with databases(server, 2) as (control_url, venue_url):
        site = build_site(control_url, venue_url, redis_url)
        give_passwords(site)
        store = site.store()
        orders = store.table("orders")
        with store.engine.begin() as conn:
            keys = list(
                conn.execute(
                    sa.insert(orders)
                    .values([{"status": "placed", "pickup_at": at("2026-07-10 11:30")}] * ROWS)
                    .returning(orders.c.id)
                ).scalars()
            )
        http = make_server("127.0.0.1", 0, site.app, threaded=True)
        threading.Thread(target=http.serve_forever, daemon=True).start()
        client = site.app.test_client()
        sign_in(client, "manager@venue.test")
        cookie = client.get_cookie("session")
        assert cookie is not None
        socket = Client.connect(
            f"ws://127.0.0.1:{http.server_port}{SOCKET}",
            headers={"Cookie": f"session={cookie.value}"},
        )
        publisher = redis.Redis.from_url(redis_url)
        actor = Actor.person("manager@venue.test", frozenset({"manager"}))
        took: list[float] = []
        try:
            for key in keys[:MOVES]:
                moved = WriteRequest(
                    "orders", actor, at("2026-07-10 09:00"), key=key, move_to="confirmed"
                )
                result = change_row(store, moved)
                committed = time.perf_counter()
                Publisher(publisher).rows(result.events)
                message = ""
                while f'id="row-orders-{key}" data-state="confirmed"' not in message:
                    message = socket.receive(timeout=5) or ""
                    if not message:
                        raise RuntimeError(f"no push for order {key} within 5 s")
                took.append((time.perf_counter() - committed) * 1000)
        finally:
            # The socket's handler may still be finishing when the database is dropped below;
            # its error then says nothing about the figures, so the server stops logging.
            logging.getLogger("werkzeug").setLevel(logging.CRITICAL)
            socket.close()
            publisher.close()
            http.shutdown()
            http.server_close()
            with site.app.app_context():
                db.engine.dispose()
            for url in (control_url, venue_url):
                engine_for(url).dispose()
    took.sort()
    return {
        "bench": "live",
        "board_rows": ROWS,
        "moves": MOVES,
        "median_ms": round(statistics.median(took), 1),
        "p95_ms": round(took[int(0.95 * len(took)) - 1], 1),
        "max_ms": round(took[-1], 1),
    }


def main() -> None:
    """Print the figures as one JSON line."""
    arguments(__doc__)
    servers = Embedded()
    try:
        server = os.environ.get("TEST_DATABASE_URL") or start_postgres(
            ROOT / "instance" / "bench-pg", servers
        )
        redis_url = os.environ.get("TEST_REDIS_URL") or start_redis(
            ROOT / "instance" / "bench-redis.db", servers
        )
        print(json.dumps(measure(server, redis_url)), flush=True)
    finally:
        servers.stop()


if __name__ == "__main__":
    main()
