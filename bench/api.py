"""Benchmark the REST API through the Procfile's web; prints JSON lines (not `make test`).

A control plane and the demo's database made for the run (dropped at the end), a Redis of
the bench's own, and the Procfile's `web` line (gunicorn's gevent worker, one process, as
`adminium run` starts it). Then, turn about in rounds of `--seconds` each, `--clients`
clients at once (threads of this process, each on its own kept-alive HTTP connection)
ask for:

- status: `GET /status` unsigned (the framework's page: no database, no Redis), the
  baseline;
- read: `GET /api/apps/demo/takeaway/tables/orders/rows/<key>` with the demo manager's
  bearer token (each client its own order);
- write: `PATCH` of the same row's `note` (each client its own order, so no two writes
  wait for one row's lock).

Per round and case: requests a second, p50 / p95 ms, answers that were not 2xx; then, over
the rounds, the median rate of each and its cost beside `/status` (status's rate over
its), against the goals of issue 36 (a read <= 2x, a write <= 3x). With `--baseline DIR`
(a checkout of other code, e.g. `git worktree add /tmp/main main`), that code's web is
measured too, on the same databases, turn about with this one's. This process's CPU a
request is printed too: the clients share the machine with the web.

Run: TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/api.py
     [--rounds 3] [--seconds 4] [--clients 8] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import secrets
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import emit  # noqa: E402
from bench.scale import start, stop  # noqa: E402
from bench.scale_setup import free_port, redis_server, server_url, with_database  # noqa: E402

CASES = ("status", "read", "write")
GOALS = {"read": 2.0, "write": 3.0}
"""Issue 36: a row read costs at most 2x `/status`, a write at most 3x."""


@dataclass
class Site:
    """The bench's databases, the demo manager's token, and one order per client."""

    control: str
    token: str
    orders: list[int]


@contextmanager
def demo_databases(server: str, prefix: str) -> Iterator[tuple[str, str, str]]:
    """A fresh control plane with the demo installed on a fresh database (named `prefix`,
    a tag, `_c` and `_demo`): the control plane's URL, the demo database's and the demo
    manager's token; both dropped after."""
    from adminium.demo import DEMO_EMAIL, install_demo
    from services.storage import ENGINES, open_session, upgrade_control_plane
    from services.users import renew_token

    tag = uuid.uuid4().hex[:8]
    names = [f"{prefix}_{tag}_c", f"{prefix}_{tag}_demo"]
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(names[0])))
    control = with_database(server, names[0])
    try:
        upgrade_control_plane(control)
        install_demo(control, now=datetime.now(UTC), database=names[1])
        with open_session(control) as session:
            token = renew_token(session, DEMO_EMAIL)
        ENGINES.clear()
        yield control, with_database(server, names[1]), token
    finally:
        ENGINES.clear()
        with psycopg.connect(server, autocommit=True) as conn:
            for name in names:
                conn.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )


@contextmanager
def site(server: str, clients: int) -> Iterator[Site]:
    """The demo's databases (`demo_databases`) with one open order per client."""
    with demo_databases(server, "adm_api") as (control, venue, token):
        with psycopg.connect(venue, autocommit=True) as conn:
            # Open orders for a pickup next year (no timed move reaches them), one a client.
            rows = conn.execute(
                "INSERT INTO takeaway.orders (customer_id, email, pickup_at, items, total, status)"
                " SELECT customer_id, email, now() + interval '300 days', items, 0, 'placed'"
                " FROM takeaway.orders, generate_series(1, %s) LIMIT %s RETURNING id",
                (clients, clients),
            ).fetchall()
        yield Site(control, token, [r[0] for r in rows])


@contextmanager
def web(control: str, redis_url: str, code: Path = ROOT) -> Iterator[int]:
    """The Procfile's web on a free port, on the code in `code`; its port once it answers."""
    from adminium.supervisor import read_procfile

    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": control,
        "REDIS_URL": redis_url,
        "SECRET_KEY": secrets.token_hex(16),
        "PORT": str(port),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    processes = start([read_procfile(code / "Procfile")["web"]], env, code)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                ask(port, "GET", "/status", {})
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("the web did not answer on /status within 60 s") from None
                time.sleep(0.2)
        yield port
    finally:
        stop(processes)


def ask(port: int, method: str, path: str, headers: dict[str, str], body: str = "") -> int:
    """One request on a connection of its own; the answer's status."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, body=body or None, headers=headers)
        answer = conn.getresponse()
        answer.read()
        return answer.status
    finally:
        conn.close()


def request_of(case: str, site: Site, client: int) -> Callable[[], tuple[str, str, dict, str]]:
    """What a client of a case asks, each time it asks (a write's note changes each time)."""
    auth = {"Authorization": f"Bearer {site.token}"}
    path = f"/api/apps/demo/takeaway/tables/orders/rows/{site.orders[client]}"
    if case == "status":
        return lambda: ("GET", "/status", {}, "")
    if case == "read":
        return lambda: ("GET", path, auth, "")
    count = iter(range(10**9))
    headers = {**auth, "Content-Type": "application/json"}
    return lambda: (
        "PATCH",
        path,
        headers,
        json.dumps({"values": {"note": f"bench {client} {next(count)}"}}),
    )


def hammer(port: int, case: str, site: Site, clients: int, seconds: float) -> dict[str, object]:
    """`clients` threads asking at once for `seconds`: rate, latency, failures."""
    took: list[list[float]] = [[] for _ in range(clients)]
    failed = [0] * clients
    gate = threading.Barrier(clients + 1)
    ends = [0.0]

    def client(index: int) -> None:
        make = request_of(case, site, index)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        gate.wait()
        while time.perf_counter() < ends[0]:
            method, path, headers, body = make()
            began = time.perf_counter()
            conn.request(method, path, body=body or None, headers=headers)
            answer = conn.getresponse()
            answer.read()
            took[index].append(time.perf_counter() - began)
            if not 200 <= answer.status < 300:
                failed[index] += 1
        conn.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    cpu = time.process_time()
    ends[0] = time.perf_counter() + seconds
    began = time.perf_counter()
    gate.wait()
    for thread in threads:
        thread.join()
    span = time.perf_counter() - began
    cpu = time.process_time() - cpu
    times = sorted(t for each in took for t in each)
    count = len(times)
    return {
        "case": case,
        "requests": count,
        "per_s": round(count / span, 1),
        "p50_ms": round(times[count // 2] * 1000, 2) if count else None,
        "p95_ms": round(times[min(count - 1, int(count * 0.95))] * 1000, 2) if count else None,
        "not_2xx": sum(failed),
        "client_cpu_ms_a_request": round(cpu * 1000 / count, 3) if count else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="DIR",
        help="a checkout of other code (git worktree add DIR REV): its web measured too, "
        "turn about with this one's",
    )
    options = parser.parse_args()
    codes = {"this": ROOT}
    if options.baseline:
        codes["baseline"] = options.baseline.resolve()
    rates: dict[tuple[str, str], list[float]] = {}
    failures: dict[str, int] = {}
    """Answers that were not 2xx, by code: a code whose answers failed has no figures (the
    rate of refusals is not the rate of reads)."""
    with site(server_url(), options.clients) as made, redis_server() as redis_url:
        for number in range(1, options.rounds + 1):
            for label, code in codes.items():
                with web(made.control, redis_url, code) as port:
                    for case in CASES:
                        hammer(port, case, made, options.clients, 0.5)  # warm: engines, caches
                    for case in CASES:
                        found = hammer(port, case, made, options.clients, options.seconds)
                        rates.setdefault((label, case), []).append(float(found["per_s"]))  # type: ignore[arg-type]
                        failures[label] = failures.get(label, 0) + int(found["not_2xx"])  # type: ignore[call-overload]
                        emit(
                            bench="api",
                            code=label,
                            round=number,
                            clients=options.clients,
                            **found,
                            load_1m=round(os.getloadavg()[0], 2),
                        )
    for label in codes:
        status = statistics.median(rates[(label, "status")])
        summary: dict[str, object] = {"bench": "api", "code": label, "summary": True}
        for case in CASES:
            rate = statistics.median(rates[(label, case)])
            summary[f"{case}_per_s"] = round(rate, 1)
            if case in GOALS:
                measured = rate and not failures.get(label)
                summary[f"{case}_to_status"] = round(status / rate, 2) if measured else None
                summary[f"goal_{case}_to_status"] = GOALS[case]
        summary["not_2xx"] = failures.get(label, 0)
        summary["load_1m"] = round(os.getloadavg()[0], 2)
        emit(**summary)


if __name__ == "__main__":
    main()
