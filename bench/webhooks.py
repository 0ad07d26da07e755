"""Commit -> webhook receiver latency: 200 events through the Procfile's worker.

The venue's orders carry an automation (confirmed orders -> webhook `bench`), whose URL is
a receiver in this process (http.server on a free loopback port). A real `rq worker` of
the Procfile's class (jobs.worker.SweepWorker) serves the queue, on a Redis database of
the bench's own so no test's jobs meet it. Each of 200 orders is moved placed ->
confirmed through the write pipeline; the clock starts when `change_row` returns (the
commit), then the commit's follow-up enqueues the delivery drain as the operations layer
does, and the clock stops when the receiver has the POST whose `webhook-id` names that
delivery. Two runs: one event at a time (each waits for the last), and a burst (200
commits back to back, each timed to its own arrival). Baseline in the same run: the same
signed POST made straight from this process, no database, queue or worker.

Run: TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \
     TEST_REDIS_URL=redis://127.0.0.1:6379/0 .venv/bin/python bench/webhooks.py
(the bench uses Redis database 13 of that server; without the URLs, the embedded servers).
Prints one JSON object per line.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import redis
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from adminium.embedded import Embedded, start_postgres, start_redis  # noqa: E402
from bench.common import arguments  # noqa: E402
from bench.live import databases  # noqa: E402
from core.basics.actors import Actor  # noqa: E402
from core.writes.pipeline import change_row  # noqa: E402
from core.writes.request import WriteRequest  # noqa: E402
from services.deliveries import deliveries_queued, event_body, signed_headers  # noqa: E402
from services.events import Publisher  # noqa: E402
from services.models import App, db  # noqa: E402
from services.storage import engine_for  # noqa: E402
from services.webhook_http import post  # noqa: E402
from services.webhooks import ALLOW_PRIVATE, Endpoint, add_webhook  # noqa: E402
from tests.integration.api_fixtures import build_site  # noqa: E402
from tests.integration.pipeline_fixtures import at  # noqa: E402

EVENTS = 200
BENCH_REDIS_DB = 13
AUTOMATION = {
    "name": "confirmed_orders",
    "table": "orders",
    "on": {"column": "status", "values": ["confirmed"]},
    "webhook": "bench",
}


class Arrivals:
    """When each webhook-id reached the receiver (perf_counter), and a way to wait for one."""

    def __init__(self) -> None:
        self.at: dict[str, float] = {}
        self.changed = threading.Condition()

    def wait(self, ids: list[str], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with self.changed:
            while not all(i in self.at for i in ids):
                left = deadline - time.monotonic()
                if left <= 0:
                    missing = [i for i in ids if i not in self.at]
                    raise RuntimeError(f"{len(missing)} events never arrived, e.g. {missing[0]}")
                self.changed.wait(left)


def serve(arrivals: Arrivals) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            arrived = time.perf_counter()
            with arrivals.changed:
                arrivals.at.setdefault(self.headers["webhook-id"], arrived)
                arrivals.changed.notify_all()
            self.send_response(204)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def figures(name: str, took: list[float], **extra: Any) -> dict[str, Any]:
    took = sorted(took)
    return {
        "bench": "webhooks",
        "run": name,
        "events": len(took),
        "p50_ms": round(statistics.median(took), 1),
        "p95_ms": round(took[max(0, int(0.95 * len(took)) - 1)], 1),
        "max_ms": round(took[-1], 1),
        **extra,
    }


def measure(server: str, redis_url: str) -> list[dict[str, Any]]:
    """The baseline and both runs' latencies, in milliseconds."""
    arrivals = Arrivals()
    receiver = serve(arrivals)
    url = f"http://127.0.0.1:{receiver.server_address[1]}/hooks"
    client = redis.Redis.from_url(redis_url)
    client.flushdb()  # the bench's own database: its queue starts empty
    with databases(server, 2) as (control_url, venue_url):
        site = build_site(control_url, venue_url, redis_url)
        with site.app.app_context():
            app = db.session.execute(db.select(App).filter_by(name="venue")).scalar_one()
            app.manifest = {**app.manifest, "automations": [AUTOMATION]}
            db.session.commit()
            secret = add_webhook(db.session, "venue", "bench", url, allow_private=True).secret
        store = site.store()
        orders = store.table("orders")
        with store.engine.begin() as conn:
            keys = list(
                conn.execute(
                    sa.insert(orders)
                    .values(
                        [{"status": "placed", "pickup_at": at("2026-07-10 11:30")}] * 2 * EVENTS
                    )
                    .returning(orders.c.id)
                ).scalars()
            )
        # The receiver is on the loopback: the worker may post there.
        env = {
            **os.environ,
            "DATABASE_URL": control_url,
            "REDIS_URL": redis_url,
            ALLOW_PRIVATE: "1",
        }
        worker = subprocess.Popen(
            [str(ROOT / ".venv/bin/rq"), "worker", "--url", redis_url,
             "--worker-class", "jobs.worker.SweepWorker", "adminium"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        publisher = Publisher(client)
        actor = Actor.person("manager@venue.test", frozenset({"manager"}))
        results: list[dict[str, Any]] = []
        try:
            # Baseline: the same signed POST straight from here.
            endpoint = Endpoint("bench", url, secret)
            took = []
            for number in range(EVENTS):
                row = {"id": f"base{number}", "app": "venue", "event": {"n": number}}
                body = event_body(row)
                started = time.perf_counter()
                post(
                    url,
                    body,
                    signed_headers(endpoint, f"base-{number}", body, datetime.now(UTC)),
                    10,
                    allow_private=True,
                )
                took.append((time.perf_counter() - started) * 1000)
            results.append(figures("baseline: signed POST from this process", took))
            for name, batch in (("one at a time", 1), ("burst of 200", EVENTS)):
                chunk, keys = keys[:EVENTS], keys[EVENTS:]
                took = []
                for start in range(0, EVENTS, batch):
                    committed: dict[str, float] = {}
                    for key in chunk[start : start + batch]:
                        moved = WriteRequest(
                            "orders", actor, datetime.now(UTC), key=key, move_to="confirmed"
                        )
                        result = change_row(store, moved)
                        at_commit = time.perf_counter()
                        deliveries_queued(publisher, result)
                        committed[str(key)] = at_commit
                    ids = delivery_ids(store.engine, list(committed))
                    arrivals.wait(list(ids.values()), timeout=60)
                    took += [(arrivals.at[ids[k]] - committed[k]) * 1000 for k in committed]
                results.append(figures(name, took, worker="1 SweepWorker"))
        finally:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(15)
            receiver.shutdown()
            client.close()
            with site.app.app_context():
                db.engine.dispose()
            for database in (control_url, venue_url):
                engine_for(database).dispose()
    return results


def delivery_ids(engine: sa.Engine, keys: list[str]) -> dict[str, str]:
    """The webhook-id of each order's delivery, by order key."""
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text("SELECT id, row_key FROM adminium.deliveries WHERE row_key = ANY(:keys)"),
            {"keys": keys},
        ).all()
    return {key: f"delivery-{delivery}.venue.venue" for delivery, key in rows}


def bench_redis(url: str) -> str:
    """The same Redis server, the bench's own database."""
    base = url.rsplit("/", 1)[0] if url.startswith("redis") and url.count("/") > 2 else url
    return f"{base}/{BENCH_REDIS_DB}" if url.startswith("redis") else url


def main() -> None:
    """Print the figures, one JSON line each."""
    arguments(__doc__)
    servers = Embedded()
    try:
        server = os.environ.get("TEST_DATABASE_URL") or start_postgres(
            ROOT / "instance" / "bench-pg", servers
        )
        redis_url = os.environ.get("TEST_REDIS_URL") or start_redis(
            ROOT / "instance" / "bench-redis.db", servers
        )
        for line in measure(server, bench_redis(redis_url)):
            print(json.dumps(line), flush=True)
    finally:
        servers.stop()


if __name__ == "__main__":
    main()
