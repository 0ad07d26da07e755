"""A Redis that fails over. Three redis-servers (a primary, two replicas) and three
sentinels of the test's own; the Procfile's web, worker and clock on
REDIS_URL=redis+sentinel://…; rows fall due at a minute boundary and the primary is
SIGKILLed a second before it. A new primary is elected, the rows due move within 30 s of
the kill (bench/failover.py measures the delay), each once, the minute's sweep is not
dropped, an open screen's socket opens again and receives the next move, and the old
primary comes back as a replica of the new one; nothing was restarted."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
import redis
import requests
from rq import Worker
from rq.cron import CronScheduler
from simple_websocket import Client, ConnectionClosed

from services import redis_client, sweep_ledger
from services.apps import add_app
from services.connections import add_connection
from services.storage import engine_for, open_session, upgrade_control_plane
from services.users import add_user
from tests.integration.launching import UP_SECONDS
from tests.integration.procfile_web import procfile_web
from tests.integration.recovery_fixtures import (
    cancelled_orders,
    next_boundary,
    orders_due_across,
    sleep_until,
    start_procfile_process,
    stop_process,
    unique_name,
)
from tests.integration.screens_fixtures import PASSWORD, csrf_of
from tests.integration.sentinel_fixtures import failover_redis
from tests.integration.sweep_fixtures import SHOP

pytestmark = pytest.mark.integration

ROWS = 12
"""Orders due a second before the minute boundary the primary dies across."""
SECRET = "sentinel-test-secret-key-0123456789abcdef"
DOWN_AFTER_MS = 5000
"""The sentinels' `down-after-milliseconds` here: long enough that a loaded machine holding
a node or a sentinel off the CPU for a second or two does not have them fail over a live
primary (with bench/failover.py's 1000, a second failover, of the new primary, leaves the
old one a replica of a node that is primary no more, and the rejoin below is waited for in
vain), short enough that the rows still move well within 30 s of the kill."""


def until(what: str, check: Callable[[], object], seconds: float) -> float:
    """Wait (bounded, 50 ms steps) until `check` holds; the monotonic time it first did."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {seconds} s: {what}")
        time.sleep(0.05)
    return time.monotonic()


def sign_in_form(port: int, email: str, password: str) -> requests.Response:
    """Post the web's sign-in form (its CSRF token read first) in a session of its own."""
    browser = requests.Session()
    page = browser.get(f"http://127.0.0.1:{port}/signin", timeout=10)
    return browser.post(
        f"http://127.0.0.1:{port}/signin",
        data={"email": email, "password": password, "csrf_token": csrf_of(page.text)},
        allow_redirects=False,
        timeout=10,
    )


def signed_in_cookie(port: int, email: str) -> str:
    """Sign in through the web's form: the session cookie an open screen sends."""
    answer = sign_in_form(port, email, PASSWORD)
    assert answer.status_code == 302, answer.text
    return f"session={answer.cookies['session']}"


def refusals_counted(client: redis.Redis, email: str) -> int:
    """The sign-in throttle's count of an account's refused sign-ins, in Redis."""
    keys = list(client.scan_iter(match=f"*account:{email}*"))
    return sum(count_of(client, key) for key in keys)


def count_of(client: redis.Redis, key: bytes) -> int:
    """One `limits` count: a moving window keeps a list of its hits, a fixed one a number."""
    kind = client.type(key)
    if kind == b"list":
        return int(client.llen(key))
    return int(client.get(key) or 0)


def open_socket(port: int, path: str, cookie: str) -> Client | None:
    """A live socket the web keeps open (it refuses one while it is not subscribed)."""
    try:
        socket = Client.connect(f"ws://127.0.0.1:{port}{path}", headers={"Cookie": cookie})
    except (ConnectionError, OSError, ConnectionClosed):
        return None
    try:
        socket.receive(timeout=0.3)
    except ConnectionClosed:
        return None
    return socket if socket.connected else None


def test_a_primary_killed_across_a_minute_boundary_fails_over_and_rows_move_once(
    tmp_path: Path, make_database: Callable[[], str]
) -> None:
    began = time.monotonic()
    control, venue = make_database(), make_database()
    upgrade_control_plane(control)
    name = unique_name()
    with open_session(control) as session:
        add_connection(session, name, venue, "Europe/London")
        add_app(session, name, SHOP, create_tables=True)
        admin = add_user(session, "admin@failover.test", "admin", None, password=PASSWORD)
    token = admin.token
    board = f"/live?screen=board&connection={name}&app=shop&table=orders&q=&state="

    # The sentinels learn one another (through the primary, every 2 s) while web, worker
    # and clock start.
    with failover_redis(tmp_path, ready=False, down_after_ms=DOWN_AFTER_MS) as redis_set:
        url = redis_set.url
        env = {"DATABASE_URL": control, "REDIS_URL": url}
        logs = {p: tmp_path / f"{p}.log" for p in ("worker", "clock")}
        processes = {p: start_procfile_process(p, env, log) for p, log in logs.items()}
        config = {"DATABASE_URL": control, "REDIS_URL": url, "SECRET_KEY": SECRET}
        try:
            with procfile_web(config, tmp_path / "web.log") as port:
                cookie = signed_in_cookie(port, "admin@failover.test")
                assert sign_in_form(port, "admin@failover.test", "wrong").status_code == 401
                client = redis_client.connect(url)
                # Deadlines of processes starting (tens of seconds on a loaded machine).
                until(
                    "the worker registered",
                    lambda: len(Worker.all(connection=client)) == 1,
                    UP_SECONDS,
                )
                until(
                    "the clock registered", lambda: CronScheduler.all(connection=client), UP_SECONDS
                )
                redis_set.wait_ready()
                set_up = time.monotonic() - began
                boundary = next_boundary(3)
                later = orders_due_across(venue, boundary, ROWS)
                socket = open_socket(port, board, cookie)
                assert socket is not None, "the screen's socket did not open"

                old = redis_set.primary()
                assert old == redis_set.data_ports[0]
                sleep_until(boundary - timedelta(seconds=1))
                killed = redis_set.kill(old)
                # Two sentinels said +switch-master (on their pub/sub): the failover is over.
                elected = redis_set.wait(
                    "a new primary elected", lambda: redis_set.switched(killed) is not None, 60
                )
                new = redis_set.switched(killed)
                assert redis_set.primary() == new
                assert new in redis_set.data_ports[1:]
                assert redis_set.role(new) == "master"
                # Brought back as a replica of the new primary (started as it was, a primary,
                # the sentinels make it one 7-16 s later: bench/failover.py measures that).
                redis_set.start_data_node(old, new)

                def moved() -> int:
                    return cancelled_orders(venue)

                first = until("a row due across the failover moved", lambda: moved() > 0, 60)
                until("every row due moved", lambda: moved() == ROWS, 60)

                # The hub lost its subscription with the primary (1011: the screen reopens
                # its socket and refetches); a reopened socket receives the next move.
                with pytest.raises(ConnectionClosed):
                    while True:
                        socket.receive(timeout=5)
                        assert time.monotonic() < killed + 30, "the socket stayed open"
                reopened: list[Client] = []
                until(
                    "the screen's socket opened again",
                    lambda: (
                        reopened.append(s) or True
                        if (s := open_socket(port, board, cookie))
                        else False
                    ),
                    30,
                )
                answer = requests.post(
                    f"http://127.0.0.1:{port}/api/apps/{name}/shop/tables/orders/rows/{later}/moves",
                    json={"to": "done"},
                    headers={"Authorization": f"Bearer {token}"},
                    timeout=10,
                )
                assert answer.status_code == 200, answer.text
                pushed: list[str] = []

                def received_the_move() -> bool:
                    try:
                        message = reopened[0].receive(timeout=0.5)
                    except ConnectionClosed:
                        return False
                    if message is not None:
                        pushed.append(str(message))
                    # The move's push takes the card from its placed column (and puts it
                    # in done only when its time is on the venue's day: an order due an
                    # hour after a boundary past 23:00 is tomorrow's, so that part is
                    # not in the push then).
                    card = f'id="row-orders-{later}"'
                    return any(card in message for message in pushed)

                until("the reopened socket received the next move", received_the_move, 15)
                reopened[0].close()

                # The old primary holds the new primary's data, and the new primary lists it
                # (it may say it is in sync a moment before the new primary lists it). The
                # sentinels' own timing, not ours: 7-16 s on a quiet machine, past 30 s seen
                # beside the full suite.
                rejoined = redis_set.wait(
                    "the old primary is a replica in sync, listed by the new primary",
                    lambda: (
                        redis_set.role(old) == "slave"
                        and redis_set.in_sync(old)
                        and old in redis_set.replicas(new)
                    ),
                    60,
                )
                # The throttle's storage follows the primary too: a refused sign-in after
                # the failover is counted beside the one before, on the new primary.
                assert sign_in_form(port, "admin@failover.test", "wrong").status_code == 401
                refusals = refusals_counted(client, "admin@failover.test")
                for process, log in logs.items():
                    assert processes[process].poll() is None, log.read_text()
                # The minute's sweep ran (not dropped): no waiting mark left, no drop counted.
                dropped = sweep_ledger.missed(client, name)
                waiting = client.hget(sweep_ledger.WAITING, name)
                client.close()
        finally:
            for process in processes.values():
                stop_process(process)

    assert redis_set.events is not None
    print(redis_set.events.told())
    # One failover: every sentinel switched once, to the new primary (none called it down).
    switches = redis_set.events.of("+switch-master", killed)
    assert sorted(p for p, _ in switches) == sorted(redis_set.sentinel_ports), switches
    assert {int(m.split()[-1]) for _, m in switches} == {new}, redis_set.events.told()
    print(
        f"set up in {set_up:.1f} s; new primary {elected - killed:.1f} s after the kill;"
        f" first move {first - killed:.1f} s after it; old primary a replica"
        f" {rejoined - killed:.1f} s after it"
    )
    assert first - killed <= 30
    assert (dropped, waiting) == (None, None)
    assert refusals == 2
    with psycopg.connect(venue) as conn:
        audited = conn.execute(
            "SELECT row_key, count(*) FROM adminium.audit"
            " WHERE actor_kind = 'clock' AND move_to = 'cancelled' GROUP BY row_key"
        ).fetchall()
        left = conn.execute("SELECT status FROM orders WHERE id = %s", (later,)).fetchone()
        sweeps = conn.execute(
            "SELECT outcome, moved FROM adminium.sweeps WHERE at >= %s AND at < %s",
            (boundary, boundary + timedelta(minutes=1)),
        ).fetchall()
    assert sorted(count for _, count in audited) == [1] * ROWS  # 0 double, 0 lost
    assert left == ("done",)  # moved by hand after the failover, not by the clock
    assert sweeps == [("done", ROWS)]  # the boundary's minute was swept, once
    engine_for(control).dispose()
    engine_for(venue).dispose()
