"""`adminium sample add|remove CONNECTION APP` through click's CliRunner."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
import sqlalchemy as sa
from click.testing import CliRunner, Result

from adminium.cli import main
from core.store.schema import sample_marks
from services.events import events_channel
from services.storage import engine_for

ROOT = Path(__file__).resolve().parents[2]
Invoke = Callable[..., Result]


@pytest.fixture
def setup(make_database: Callable[[], str]) -> Iterator[tuple[Invoke, str]]:
    """A control plane with the takeaway app on a connection `venue` in Europe/London."""
    control_url, venue_url = make_database(), make_database()
    env = {"DATABASE_URL": control_url, "REDIS_URL": ""}

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(main, list(args), env=env)

    assert (
        invoke(
            "connection", "add", "venue", "--url", venue_url, "--zone", "Europe/London"
        ).exit_code
        == 0
    )
    manifest = ROOT / "examples" / "takeaway.json"
    assert invoke("app", "add", "venue", str(manifest), "--create-tables").exit_code == 0
    yield invoke, venue_url
    engine_for(venue_url).dispose()
    engine_for(control_url).dispose()


def counts(url: str) -> tuple[int, int]:
    """(orders, sample marks) in the venue's database."""
    engine = engine_for(url)
    with engine.connect() as conn:
        orders = conn.execute(sa.text("SELECT count(*) FROM takeaway.orders")).scalar_one()
        marks = conn.execute(sa.select(sa.func.count()).select_from(sample_marks)).scalar_one()
    return orders, marks


def test_add_then_remove_sample_data(setup: tuple[Invoke, str]) -> None:
    invoke, url = setup
    added = invoke("sample", "add", "venue", "takeaway", "--now", "2026-07-01T13:00:00+01:00")
    assert added.exit_code == 0, added.output
    assert "added 30 sample rows to venue/takeaway" in added.output
    # 30 rows, of which the settings row and 7 opening hours are setup, never marked.
    assert counts(url) == (7, 22)
    removed = invoke("sample", "remove", "venue", "takeaway")
    assert removed.exit_code == 0, removed.output
    assert "7 from orders" in removed.output
    assert counts(url) == (0, 0)


def test_remove_keeps_a_sample_customer_a_real_order_is_for_and_says_so(
    setup: tuple[Invoke, str], tmp_path: Path
) -> None:
    # The README's steps: a real order for sample customer 1, then `sample remove`. It
    # answered `Error: the database refused: … orders_customer_id_fkey`.
    invoke, url = setup
    assert invoke("sample", "add", "venue", "takeaway").exit_code == 0
    order = {"customer_id": 1, "email": "you@example.com", "pickup_at": "2026-01-05T12:00:00Z"}
    real = tmp_path / "orders.json"
    real.write_text(json.dumps([{**order, "items": "1 x soup"}]))
    assert invoke("import", "venue", "orders", str(real)).exit_code == 0
    removed = invoke("sample", "remove", "venue", "takeaway")
    assert removed.exit_code == 0, removed.output
    assert removed.stdout == (
        "removed sample rows of venue/takeaway: 12 from order_lines, 7 from orders,"
        " 2 from customers; kept 1 sample row that rows staying refer to: customers 1"
        " (orders 8)\n"
    )
    assert counts(url) == (1, 1)


def test_add_refuses_a_sample_of_another_app(setup: tuple[Invoke, str], tmp_path: Path) -> None:
    invoke, url = setup
    other = tmp_path / "hotel.sample.json"
    other.write_text(json.dumps({"app": "hotel", "rows": {}}))
    result = invoke("sample", "add", "venue", "takeaway", "--file", str(other))
    assert result.exit_code == 1
    assert "the sample belongs to app 'hotel', not 'takeaway'" in result.output
    assert counts(url) == (0, 0)


def test_remove_tells_open_screens_each_row_removed(
    make_database: Callable[[], str], redis_url: str
) -> None:
    control_url, venue_url = make_database(), make_database()
    name = f"venue-{uuid.uuid4().hex[:8]}"
    env = {"DATABASE_URL": control_url, "REDIS_URL": redis_url}

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(main, list(args), env=env)

    assert invoke("connection", "add", name, "--url", venue_url).exit_code == 0
    manifest = ROOT / "examples" / "takeaway.json"
    assert invoke("app", "add", name, str(manifest), "--create-tables").exit_code == 0
    now = "2026-07-01T13:00:00+01:00"
    assert invoke("sample", "add", name, "takeaway", "--now", now).exit_code == 0
    client = redis.Redis.from_url(redis_url)
    listener = client.pubsub(ignore_subscribe_messages=True)
    try:
        listener.subscribe(events_channel(name))
        removed = invoke("sample", "remove", name, "takeaway")
        assert removed.exit_code == 0, removed.output
        heard = []
        deadline = time.monotonic() + 5
        # get_message answers None for the ignored subscribe reply too: read until quiet.
        while len(heard) < 22 and time.monotonic() < deadline:
            message = listener.get_message(timeout=0.5)
            if message is not None:
                heard.append(json.loads(message["data"]))
    finally:
        listener.close()
        client.close()
        engine_for(venue_url).dispose()
        engine_for(control_url).dispose()
    # the sample holds 22 rows besides its setup (7 orders and their 12 lines among them):
    # each is heard once, as removed; its settings row and opening hours stay.
    assert len(heard) == 22
    assert all(e["removed"] is True and e["actor"] == "Sample data" for e in heard)
    assert sum(e["table"] == "orders" for e in heard) == 7
