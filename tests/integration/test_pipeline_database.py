"""The database side: install, racing writers, a restricted role, constraints, events on Redis."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
import redis
import sqlalchemy as sa

from core.basics.actors import Actor
from core.basics.errors import ColumnNotWritable, ValueRefused, WriteConflict
from core.basics.events import RowEvent
from core.manifest.model import load_app
from core.store.install import install_app, timed_indexes
from core.store.store import Store, make_engine
from core.time.clock import venue_zone
from core.writes.pipeline import change_row, create_row
from core.writes.request import WriteRequest
from services.events import Publisher, events_channel
from tests.integration.db_roles import restricted_store
from tests.integration.pipeline_fixtures import MANIFEST, Venue, at

STAFF = Actor.person("sam@venue.test", {"staff"})
NOW = at("2026-03-27 12:00")


def new_order(venue: Venue, status: str = "placed") -> Any:
    return venue.insert("orders", status=status, pickup_at=at("2026-03-27 12:30"))


def test_install_is_idempotent_and_makes_the_timed_indexes(venue: Venue) -> None:
    install_app(venue.engine, venue.store.app)
    with venue.engine.connect() as conn:
        names = set(
            conn.execute(
                sa.text("SELECT indexname FROM pg_indexes WHERE schemaname = 'public'")
            ).scalars()
        )
    assert {"ix_orders_status_pickup_at", "ix_tickets_status_offer_until"} <= names


def test_timed_indexes_name_state_and_moment_columns() -> None:
    app = load_app(MANIFEST)
    assert timed_indexes(app) == [
        'CREATE INDEX IF NOT EXISTS "ix_orders_status_pickup_at"'
        ' ON "public"."orders" ("status", "pickup_at")',
        'CREATE INDEX IF NOT EXISTS "ix_tickets_status_offer_until"'
        ' ON "public"."tickets" ("status", "offer_until")',
    ]


def test_app_in_its_own_schema(make_database: Callable[[], str]) -> None:
    app = load_app({**MANIFEST, "schema": "venue_app"})
    engine = make_engine(make_database())
    try:
        install_app(engine, app)
        store = Store(engine, app, venue_zone("UTC"))
        result = create_row(
            store, WriteRequest("events", STAFF, NOW, values={"doors_at": at("2026-06-12 18:00")})
        )
        with engine.connect() as conn:
            count = conn.execute(sa.text("SELECT count(*) FROM venue_app.events")).scalar()
            audited = conn.execute(sa.text("SELECT app, row_key FROM adminium.audit")).one()
        assert count == 1
        assert tuple(audited) == ("venue", str(result.key))
    finally:
        engine.dispose()


def test_second_writer_on_a_held_row_gets_write_conflict(venue: Venue) -> None:
    key = new_order(venue)
    url = venue.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(url) as other:
        other.execute("SELECT 1 FROM orders WHERE id = %s FOR UPDATE", (key,))
        with venue.unchanged("orders", key), pytest.raises(WriteConflict) as conflict:
            change_row(
                venue.store, WriteRequest("orders", STAFF, NOW, key=key, move_to="confirmed")
            )
        other.rollback()
    assert (conflict.value.code, conflict.value.status) == ("WRITE_CONFLICT", 409)
    assert conflict.value.details == {"table": "orders", "key": key}
    # Once the other writer lets go, the same write passes.
    change_row(venue.store, WriteRequest("orders", STAFF, NOW, key=key, move_to="confirmed"))
    assert venue.row("orders", key)["status"] == "confirmed"


@pytest.fixture
def restricted(venue: Venue) -> Iterator[Store]:
    """The app's store seen through a role that may update only status and note of orders."""
    grants = (
        "GRANT USAGE ON SCHEMA public, adminium TO {}",
        "GRANT SELECT ON ALL TABLES IN SCHEMA public TO {}",
        "GRANT UPDATE (status, note, cancelled_at) ON orders TO {}",
        "GRANT INSERT ON adminium.audit TO {}",
    )
    with restricted_store(venue.store, grants) as store:
        yield store


def test_role_writes_the_columns_it_may(venue: Venue, restricted: Store) -> None:
    key = new_order(venue)
    change_row(restricted, WriteRequest("orders", STAFF, NOW, key=key, move_to="cancelled"))
    row = venue.row("orders", key)
    assert (row["status"], row["cancelled_at"]) == ("cancelled", NOW)


def test_column_the_role_may_not_write_is_refused(venue: Venue, restricted: Store) -> None:
    key = new_order(venue)
    with venue.unchanged("orders", key), pytest.raises(ColumnNotWritable) as refused:
        change_row(
            restricted,
            WriteRequest(
                "orders", STAFF, NOW, key=key, values={"note": "fine", "cancel_code": "nope"}
            ),
        )
    assert (refused.value.code, refused.value.status) == ("COLUMN_NOT_WRITABLE", 403)
    assert refused.value.details == {"table": "orders", "key": key, "columns": ["cancel_code"]}


@pytest.mark.parametrize(
    ("table", "values", "reason", "column"),
    [
        ("orders", {"pickup_at": None}, "not-null", "pickup_at"),
        ("orders", {"channel": "fax"}, "check", None),
        ("orders", {"note": "x" * 41}, "type", None),
        ("tickets", {"event_id": 999_999}, "foreign-key", None),
    ],
    ids=["not-null", "check", "too-long", "foreign-key"],
)
def test_value_the_database_refuses(
    venue: Venue, table: str, values: dict[str, Any], reason: str, column: str | None
) -> None:
    if table == "orders":
        key = new_order(venue)
    else:
        key = venue.insert("tickets", event_id=venue.insert("events"), status="valid")
    with venue.unchanged(table, key), pytest.raises(ValueRefused) as refused:
        change_row(venue.store, WriteRequest(table, STAFF, NOW, key=key, values=values))
    assert (refused.value.code, refused.value.status) == ("VALUE_REFUSED", 422)
    assert refused.value.details["reason"] == reason
    if column is not None:
        assert refused.value.details["column"] == column
    if reason in ("check", "foreign-key"):
        assert refused.value.details["constraint"]


def test_create_refused_by_a_constraint_leaves_no_row_and_no_audit(venue: Venue) -> None:
    with pytest.raises(ValueRefused):
        create_row(venue.store, WriteRequest("orders", STAFF, NOW, values={"note": "no pickup"}))
    with venue.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM orders")).scalar() == 0
    assert venue.audit() == []


def test_events_are_published_as_json_on_the_connections_channel(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    connection = f"conn-{uuid.uuid4().hex[:8]}"
    pubsub = client.pubsub()
    try:
        pubsub.subscribe(events_channel(connection))
        assert pubsub.get_message(timeout=2)["type"] == "subscribe"  # type: ignore[index]
        event = RowEvent(connection, "venue", "orders", 42, "cancelled", "Timed move")
        Publisher(client).rows([event])
        message = pubsub.get_message(timeout=2)
        assert message is not None
        assert json.loads(message["data"]) == {
            "connection": connection,
            "app": "venue",
            "table": "orders",
            "key": 42,
            "state": "cancelled",
            "actor": "Timed move",
        }
    finally:
        pubsub.close()
        client.close()


def test_a_refused_write_returns_no_events(venue: Venue) -> None:
    key = new_order(venue)
    with pytest.raises(ValueRefused):
        change_row(
            venue.store, WriteRequest("orders", STAFF, NOW, key=key, values={"pickup_at": None})
        )
    result = change_row(
        venue.store, WriteRequest("orders", STAFF, NOW, key=key, values={"note": "ok"})
    )
    assert [e.key for e in result.events] == [key]
