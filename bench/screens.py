"""Open screens one web process holds: a real gunicorn, N websockets, pages and pushes meanwhile.

For each web command (the old gthread line with 64 threads as the baseline, then the
Procfile's own web line) a gunicorn process is started on a fresh site (control plane,
venue, Redis), and:

1. BOARDS signed-in board sockets open (one user each, so each push is rendered for each
   board: the costliest case), then idle row screens open, 16 handshakes at a time, until
   `--sockets` are held or a handshake has no answer within HANDSHAKE_SECONDS;
2. while they are held, a plain page (/status) and a signed-in board page are fetched
   PAGES times each: their latency, or how many did not answer within PAGE_SECONDS;
3. MOVES orders are moved through the write pipeline here; each move's event is published on
   Redis after its commit and the clock runs until each board's socket has the card
   (commit -> screen, per board): p50 / p95 / max.

Prints one JSON object per web command. Each run stops by itself within about two minutes.

With --burst: pushes under a burst, today's line against this tree's in the same run. The
Procfile's web line is started from the tree of `--against` (default: the last commit
whose web/live.py pushed each event on its own, extracted with git archive) and then from
this tree; each time BURST_BOARDS board sockets of as many signed-in users open, then a
sweep-like burst of BURST_MOVES moves is committed through the write pipeline, each event
published after its commit. Per web: the burst's commit time, how long after the last
commit the last push reached the last board, commit -> screen p50 / p95 / max over every
(board, row), and how many of the boards x moves pushes never came (within 60 s). Goal:
last push <= 2 s after the last commit.

Run: TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \
     .venv/bin/python bench/screens.py [--sockets 1000] [--only baseline|procfile]
     .venv/bin/python bench/screens.py --burst [--against REV]
(each run starts a redis-server of its own)
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import redis
import sqlalchemy as sa
from simple_websocket import Client, ConnectionClosed
from simple_websocket.errors import ConnectionError as Refused

sys.path.insert(0, str(Path(__file__).resolve().parent))

from live import ROOT, databases
from scale_setup import redis_server

from adminium.embedded import Embedded, start_postgres
from adminium.supervisor import read_procfile
from core.basics.actors import Actor
from core.writes.pipeline import change_row
from core.writes.request import WriteRequest
from services.events import Publisher
from services.models import db
from services.storage import engine_for
from services.users import add_user
from tests.integration.api_fixtures import build_site
from tests.integration.launching import free_port
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import PASSWORD, sign_in

BASELINE = (
    "exec gunicorn --worker-class gthread --threads 64 --graceful-timeout 3 "
    '--no-control-socket --bind 127.0.0.1:${PORT:-5000} --access-logfile - "web:create_app()"'
)
"""The Procfile's web line before open screens were sized (each socket held a thread)."""
BOARDS = 50
MOVES = 20
PAGES = 20
ROWS = 200
HANDSHAKE_SECONDS = 5.0
PAGE_SECONDS = 5.0
PUSH_SECONDS = 5.0
CARD = re.compile(r'id="row-orders-(\d+)" data-state="confirmed"')


def percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 1)


def handshake(port: int, path: str, cookie: str) -> socket.socket | str:
    """A websocket opened by hand (cheap to hold by the thousand); the socket, or why not."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=HANDSHAKE_SECONDS)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            f"Sec-WebSocket-Version: 13\r\nCookie: session={cookie}\r\n\r\n"
        ).encode()
    )
    answer = b""
    try:
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                sock.close()
                return "closed before answering"
            answer += chunk
    except TimeoutError:
        sock.close()
        return f"no answer within {HANDSHAKE_SECONDS:.0f} s"
    status = answer.split(b"\r\n", 1)[0].decode()
    if " 101 " not in status + " ":
        sock.close()
        return status
    return sock


def fetch(port: int, path: str, cookie: str = "") -> float | None:
    """Milliseconds to a 200 of a GET, or None (no answer in PAGE_SECONDS, or not 200)."""
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=PAGE_SECONDS)
    try:
        conn.request("GET", path, headers={"Cookie": f"session={cookie}"} if cookie else {})
        reply = conn.getresponse()
        reply.read()
        return (time.perf_counter() - started) * 1000 if reply.status == 200 else None
    except OSError:
        return None
    finally:
        conn.close()


def pages(port: int, path: str, cookie: str = "") -> list[float | None]:
    """PAGES fetches of a page, given up after three that did not answer (a starved web)."""
    found: list[float | None] = []
    while len(found) < PAGES and found[-3:] != [None, None, None]:
        found.append(fetch(port, path, cookie))
    return found


class Board:
    """A board socket whose reader notes when each confirmed card first arrived."""

    def __init__(self, port: int, cookie: str) -> None:
        query = urlencode(
            {"screen": "board", "connection": "venue", "app": "venue", "table": "orders"}
        )
        self.ws = Client.connect(
            f"ws://127.0.0.1:{port}/live?{query}&q=&state=",
            headers={"Cookie": f"session={cookie}"},
        )
        self.arrived: dict[int, float] = {}
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self) -> None:
        while True:
            try:
                message = self.ws.receive(timeout=60)
            except ConnectionClosed:
                return
            now = time.perf_counter()
            for key in CARD.findall(message or ""):
                self.arrived.setdefault(int(key), now)


def start_web(command: str, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            ["/bin/sh", "-c", command],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def stop_web(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(5)


def orders_and_boards(
    site: Any, store: Any, orders: sa.Table, rows: int, boards: int
) -> tuple[list[int], list[str]]:
    """`rows` placed orders, and `boards` managers signed in: the keys and session cookies."""
    with store.engine.begin() as conn:
        keys = list(
            conn.execute(
                sa.insert(orders)
                .values([{"status": "placed", "pickup_at": at("2026-07-10 11:30")}] * rows)
                .returning(orders.c.id)
            ).scalars()
        )
    with site.app.app_context():
        for number in range(boards):
            add_user(
                db.session, f"board{number}@venue.test", "manager", "venue/venue", password=PASSWORD
            )
    cookies: list[str] = []
    for number in range(boards):
        client = site.app.test_client()
        sign_in(client, f"board{number}@venue.test")
        cookie = client.get_cookie("session")
        assert cookie is not None
        cookies.append(cookie.value)
    return keys, cookies


def measure(server: str, redis_url: str, name: str, command: str, target: int) -> dict[str, object]:
    with databases(server, 2) as (control_url, venue_url):
        site = build_site(control_url, venue_url, redis_url)
        store = site.store()
        orders = store.table("orders")
        keys, cookies = orders_and_boards(site, store, orders, ROWS, BOARDS)
        port = free_port()
        env = {
            **os.environ,
            "DATABASE_URL": control_url,
            "REDIS_URL": redis_url,
            "PORT": str(port),
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        }
        log = Path(tempfile.mkstemp(prefix="adm-screens-", suffix=".log")[1])
        web = start_web(command, env, log)
        boards: list[Board] = []
        idle: list[socket.socket] = []
        publisher = redis.Redis.from_url(redis_url)
        try:
            deadline = time.monotonic() + 30
            while fetch(port, "/status") is None:
                if time.monotonic() > deadline or web.poll() is not None:
                    raise RuntimeError(f"the web never answered:\n{log.read_text()[-2000:]}")
                time.sleep(0.2)
            refused = ""
            for cookie in cookies:
                started = time.monotonic()
                try:
                    boards.append(Board(port, cookie))
                except (OSError, Refused) as error:
                    refused = f"board: {error} after {time.monotonic() - started:.1f} s"
                    break
            row = f"/live?screen=row&connection=venue&app=venue&table=orders&key={keys[-1]}"
            with ThreadPoolExecutor(16) as pool:
                while len(boards) + len(idle) < target and not refused:
                    batch = min(16, target - len(boards) - len(idle))
                    for found in pool.map(lambda _: handshake(port, row, cookies[0]), range(batch)):
                        if isinstance(found, str):
                            refused = refused or found
                        else:
                            idle.append(found)
            held = len(boards) + len(idle)
            plain = pages(port, "/status")
            board_page = pages(port, "/apps/venue/venue/orders", cookies[0])
            took = push(store, publisher, boards, keys[:MOVES])
        finally:
            publisher.close()
            for board in boards:
                with contextlib.suppress(ConnectionClosed):
                    board.ws.close()
            for sock in idle:
                sock.close()
            stop_web(web)
            with site.app.app_context():
                db.engine.dispose()
            for url in (control_url, venue_url):
                engine_for(url).dispose()
    answered = [ms for ms in plain if ms is not None]
    board_answered = [ms for ms in board_page if ms is not None]
    log.unlink()
    return {
        "bench": "screens",
        "web": name,
        "target": target,
        "held": held,
        "next_socket": refused or "not tried (target held)",
        "status_page_answered": f"{len(answered)}/{len(plain)}",
        "status_page_ms_p50": percentile(answered, 0.5),
        "status_page_ms_max": round(max(answered), 1) if answered else None,
        "board_page_answered": f"{len(board_answered)}/{len(board_page)}",
        "board_page_ms_p50": percentile(board_answered, 0.5),
        "board_page_ms_max": round(max(board_answered), 1) if board_answered else None,
        "boards": len(boards),
        "pushes": len(took),
        "push_missing": MOVES * len(boards) - len(took),
        "commit_to_screen_ms_p50": percentile(took, 0.5),
        "commit_to_screen_ms_p95": percentile(took, 0.95),
        "commit_to_screen_ms_max": round(max(took), 1) if took else None,
    }


def push(
    store: object, publisher: redis.Redis, boards: list[Board], keys: list[int]
) -> list[float]:
    """Move each order; per board, milliseconds from the commit to its card on the socket."""
    actor = Actor.person("board0@venue.test", frozenset({"manager"}))
    took: list[float] = []
    for key in keys:
        moved = WriteRequest("orders", actor, at("2026-07-10 09:00"), key=key, move_to="confirmed")
        result = change_row(store, moved)  # type: ignore[arg-type]
        committed = time.perf_counter()
        Publisher(publisher).rows(result.events)
        deadline = time.monotonic() + PUSH_SECONDS
        while time.monotonic() < deadline and not all(key in b.arrived for b in boards):
            time.sleep(0.002)
        took += [(b.arrived[key] - committed) * 1000 for b in boards if key in b.arrived]
        time.sleep(0.1)
    return took


BURST_BOARDS = 200
BURST_MOVES = 500
BURST_WAIT = 60.0


def before_coalescing() -> str:
    """The last commit whose web/live.py pushed each event on its own (today's line)."""
    commits = subprocess.run(
        ["git", "log", "--format=%H", "--", "web/live.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for commit in commits:
        shown = subprocess.run(
            ["git", "show", f"{commit}:web/live.py"], cwd=ROOT, capture_output=True, text=True
        )
        # The commit that made web/live.py the package web/live/ has no web/live.py.
        if shown.returncode == 0 and "COALESCE_SECONDS" not in shown.stdout:
            return commit
    raise RuntimeError("no commit of web/live.py before coalescing")


@contextlib.contextmanager
def tree_of(commit: str) -> Iterator[Path]:
    """The repository's files at a commit, in a folder of their own (removed afterwards)."""
    folder = Path(tempfile.mkdtemp(prefix="adm-screens-tree-"))
    try:
        archive = subprocess.run(
            ["git", "archive", commit], cwd=ROOT, capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
        yield folder
    finally:
        subprocess.run(["rm", "-rf", str(folder)], check=False)


def burst(server: str, redis_url: str, name: str, tree: Path) -> dict[str, object]:
    """BURST_BOARDS boards of as many users on the web of `tree`, then BURST_MOVES moves
    committed one after another as a sweep makes them; when each push reached each board."""
    command = read_procfile(ROOT / "Procfile")["web"]
    with databases(server, 2) as (control_url, venue_url):
        site = build_site(control_url, venue_url, redis_url)
        store = site.store()
        orders = store.table("orders")
        keys, cookies = orders_and_boards(site, store, orders, BURST_MOVES, BURST_BOARDS)
        port = free_port()
        env = {
            **os.environ,
            "DATABASE_URL": control_url,
            "REDIS_URL": redis_url,
            "PORT": str(port),
            "PYTHONPATH": str(tree),
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        }
        log = Path(tempfile.mkstemp(prefix="adm-screens-", suffix=".log")[1])
        with log.open("wb") as out:
            web = subprocess.Popen(
                ["/bin/sh", "-c", command],
                cwd=tree,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        boards: list[Board] = []
        publisher = redis.Redis.from_url(redis_url)
        try:
            deadline = time.monotonic() + 30
            while fetch(port, "/status") is None:
                if time.monotonic() > deadline or web.poll() is not None:
                    raise RuntimeError(f"the web never answered:\n{log.read_text()[-2000:]}")
                time.sleep(0.2)
            with ThreadPoolExecutor(16) as pool:
                boards = list(pool.map(lambda cookie: Board(port, cookie), cookies))
            time.sleep(1.0)
            actor = Actor.person("board0@venue.test", frozenset({"manager"}))
            committed: dict[int, float] = {}
            began = time.perf_counter()
            for key in keys:
                moved = WriteRequest(
                    "orders", actor, at("2026-07-10 09:00"), key=key, move_to="confirmed"
                )
                result = change_row(store, moved)
                committed[key] = time.perf_counter()
                Publisher(publisher).rows(result.events)
            last = max(committed.values())
            wait = time.monotonic() + BURST_WAIT
            while time.monotonic() < wait and not all(len(b.arrived) >= len(keys) for b in boards):
                time.sleep(0.05)
        finally:
            publisher.close()
            for board in boards:
                with contextlib.suppress(ConnectionClosed):
                    board.ws.close()
            stop_web(web)
            with site.app.app_context():
                db.engine.dispose()
            for url in (control_url, venue_url):
                engine_for(url).dispose()
    log.unlink()
    took = [(b.arrived[k] - committed[k]) * 1000 for b in boards for k in keys if k in b.arrived]
    arrivals = [t for b in boards for t in b.arrived.values()]
    return {
        "bench": "screens-burst",
        "web": name,
        "boards": len(boards),
        "moves": len(keys),
        "burst_commit_s": round(last - began, 2),
        "last_push_after_last_commit_s": round(max(arrivals) - last, 2) if arrivals else None,
        "commit_to_screen_ms_p50": percentile(took, 0.5),
        "commit_to_screen_ms_p95": percentile(took, 0.95),
        "commit_to_screen_ms_max": round(max(took), 1) if took else None,
        "pushes": len(took),
        "lost": len(boards) * len(keys) - len(took),
        "goal_last_push_s": 2.0,
    }


def burst_runs(server: str, against: str, rounds: int) -> None:
    """Today's line and this tree, turn about, `rounds` times."""
    with tree_of(against) as old:
        for _ in range(rounds):
            for name, tree in ((f"today {against[:10]}", old), ("this tree", ROOT)):
                with redis_server() as redis_url:
                    print(json.dumps(burst(server, redis_url, name, tree)), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sockets", type=int, default=1000)
    parser.add_argument("--only", choices=["baseline", "procfile"])
    parser.add_argument("--burst", action="store_true")
    parser.add_argument("--against", default="")
    parser.add_argument("--rounds", type=int, default=1)
    options = parser.parse_args()
    if options.burst:
        server = os.environ.get(
            "TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
        )
        os.environ.setdefault("SECRET_KEY", "bench-screens-" + os.urandom(8).hex())
        burst_runs(server, options.against or before_coalescing(), options.rounds)
        return
    runs = [
        ("gthread-64 (baseline)", BASELINE),
        ("procfile", read_procfile(ROOT / "Procfile")["web"]),
    ]
    if options.only:
        runs = [runs[0] if options.only == "baseline" else runs[1]]
    servers = Embedded()
    try:
        server = os.environ.get("TEST_DATABASE_URL") or start_postgres(
            ROOT / "instance" / "bench-pg", servers
        )
        os.environ.setdefault("SECRET_KEY", "bench-screens-" + os.urandom(8).hex())
        for name, command in runs:
            # A Redis of the run's own: events of other control planes sharing a Redis (a
            # sign-out of their user 3) would reach this web's hub too.
            with redis_server() as redis_url:
                figures = measure(server, redis_url, name, command, options.sockets)
            print(json.dumps(figures), flush=True)
    finally:
        servers.stop()


if __name__ == "__main__":
    main()
