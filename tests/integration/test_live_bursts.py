"""Pushes under a burst: the events of a sweep's burst reach an open board
together, in a few messages carrying every card and the counts as they stand, not one
message per event (real Redis, a real threaded server, a real websocket)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest
import redis
from flask.testing import FlaskClient
from simple_websocket import Client

from core.basics.actors import Actor
from core.basics.events import RowEvent
from services.events import Publisher
from services.models import db
from services.sweeps import sweep
from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import add_order

pytestmark = pytest.mark.integration
BOARD_SOCKET = "/live?screen=board&connection=venue&app=venue&table=orders&q=&state="
BURST = 40


def test_a_burst_of_moves_reaches_an_open_board_in_a_few_messages_with_every_card(
    screens_site: Site,
    signed_in: Callable[[str], FlaskClient],
    base_url: str,
    redis_url: str,
) -> None:
    # Pickups Thu 9 July 12:30 BST: each cancelled at closing, 21:00 BST = 20:00 UTC.
    keys = [add_order(screens_site, at("2026-07-09 11:30")) for _ in range(BURST)]
    cookie = signed_in("staff").get_cookie("session")
    assert cookie is not None
    socket = Client.connect(
        f"ws://{base_url}{BOARD_SOCKET}", headers={"Cookie": f"session={cookie.value}"}
    )
    client = redis.Redis.from_url(redis_url)
    try:
        with screens_site.app.app_context():
            report = sweep(
                db.session, "venue", now=at("2026-07-09 20:01"), publisher=Publisher(None)
            )
        assert sorted(d.key for d in report.moved) == sorted(keys)
        # The sweep's events, published one after another as its moves commit.
        clock = Actor.clock().name
        Publisher(client).rows(
            RowEvent("venue", "venue", "orders", key, "cancelled", clock) for key in keys
        )
        messages: list[str] = []
        arrived: set[int] = set()
        deadline = time.monotonic() + 15.0  # a deadline, not a speed (bench/live.py)
        while arrived != set(keys) and time.monotonic() < deadline:
            message = socket.receive(timeout=1.0) or ""
            found = {
                int(k) for k in re.findall(r'id="row-orders-(\d+)" data-state="cancelled"', message)
            }
            if found:
                messages.append(message)
                arrived |= found
    finally:
        socket.close()
        client.close()
    assert arrived == set(keys)
    assert len(messages) <= 4, f"{len(messages)} messages for {BURST} events"
    # The counts as they stand after the burst, said in the last message.
    assert f'id="count-orders-cancelled" hx-swap-oob="true">{BURST}<' in messages[-1]
