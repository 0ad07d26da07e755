"""Sample data on a real database: added through the pipeline, marked, moved, removed whole."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from typing import Any

import pytest
import sqlalchemy as sa

from core.basics.actors import Actor
from core.basics.errors import AdminiumError
from core.samples.data import KeptRow, add_sample, remove_sample, sample_keys, setup_tables
from core.samples.files import SampleRefused, read_sample
from core.store.schema import audit, sample_marks
from core.store.store import Store
from core.writes.pipeline import change_row, create_row, make_timed_move
from core.writes.request import WriteRequest
from tests.integration.pipeline_fixtures import example_sample, example_stores

# Wed 1 Jul 2026 13:00 BST.
NOW = datetime(2026, 7, 1, 12, tzinfo=UTC)

MakeStore = Callable[[str], Store]


@pytest.fixture
def make_store(database_url: str) -> Iterator[MakeStore]:
    """Factory: an example app installed on the test's database, in Europe/London."""
    with example_stores(database_url) as make:
        yield make


example = example_sample


def rows(store: Store, table: str) -> list[dict[str, Any]]:
    with store.engine.connect() as conn:
        return sorted(store.read_rows(conn, table), key=lambda r: r[store.spec(table).key])


def marked(store: Store) -> dict[str, set[str]]:
    with store.engine.connect() as conn:
        return sample_keys(conn, store.app.name)


@pytest.mark.parametrize("name", ["takeaway", "tickets", "hotel"])
def test_every_sample_row_is_marked_and_written_by_sample_data(
    make_store: MakeStore, name: str
) -> None:
    store = make_store(name)
    added = add_sample(store, example(name), now=NOW)
    # The settings row and the opening hours a sample brings are the app's setup: added,
    # never marked (a removal leaves them).
    setup = setup_tables(store)
    expected: dict[str, set[str]] = {}
    for row in added:
        if row.table not in setup:
            expected.setdefault(row.table, set()).add(str(row.key))
    assert marked(store) == expected
    assert len(added) == sum(len(v) for v in example(name).rows.values())
    with store.engine.connect() as conn:
        actors = set(conn.execute(sa.select(audit.c.actor).distinct()).scalars())
    assert actors == {"Sample data"}


def test_takeaway_sample_lands_on_the_clock(make_store: MakeStore) -> None:
    store = make_store("takeaway")
    add_sample(store, example("takeaway"), now=NOW)
    orders = {(r["status"], r["items"]): r["pickup_at"] for r in rows(store, "orders")}
    # Open 08:00-23:00 every day, 15-minute slots. 13:00 BST + 20 min = 13:20 -> 13:30 BST.
    assert orders[("placed", "1 x margherita, 1 x lemonade")] == datetime(
        2026, 7, 1, 12, 30, tzinfo=UTC
    )
    # + 40 min = 13:40 -> 13:45 BST; + 5 min = 13:05 -> 13:15 BST.
    assert orders[("confirmed", "3 x dumplings")] == datetime(2026, 7, 1, 12, 45, tzinfo=UTC)
    assert orders[("ready", "2 x samosa")] == datetime(2026, 7, 1, 12, 15, tzinfo=UTC)
    # The order placed yesterday: Tue 30 Jun 13:00 BST, whose closing (23:00) has passed.
    assert orders[("placed", "2 x falafel wrap")] == datetime(2026, 6, 30, 12, tzinfo=UTC)


def test_offer_lapses_two_minutes_after_the_sample(make_store: MakeStore) -> None:
    store = make_store("tickets")
    add_sample(store, example("tickets"), now=NOW)
    offered = {
        r["holder_name"]: r["offer_until"]
        for r in rows(store, "tickets")
        if r["status"] == "offered"
    }
    # Given by the sample (the move's 48-hour stamp put back): 12:02 and 12:30 UTC.
    assert offered["Dana Wu"] == datetime(2026, 7, 1, 12, 2, tzinfo=UTC)
    assert offered["Farid Aziz"] == datetime(2026, 7, 1, 12, 30, tzinfo=UTC)
    # Not given: the stamp's 48 hours (offer_hours) from the sample's moment.
    assert offered["Ivo Petrov"] == datetime(2026, 7, 3, 12, tzinfo=UTC)


def test_stays_get_the_state_of_the_clock(make_store: MakeStore) -> None:
    store = make_store("hotel")
    add_sample(store, example("hotel"), now=NOW)
    stays = {r["guest_name"]: (r["arrive"], r["status"]) for r in rows(store, "stays")}
    assert stays == {
        # Arrived Mon 29 Jun for 4 nights: in house until Fri 3 Jul 11:00.
        "Lena Vogel": (date(2026, 6, 29), "checked_in"),
        # Arrived Sun 28 Jun for 1 night: left Mon 29 Jun.
        "Marco Bianchi": (date(2026, 6, 28), "checked_out"),
        # Arrives today from 15:00 BST; at 13:00 BST still booked.
        "Nadia Haddad": (date(2026, 7, 1), "booked"),
        "Oscar Lind": (date(2026, 7, 2), "booked"),
        # Written booked: a no-show once 10:00 today has passed.
        "Priya Nair": (date(2026, 6, 30), "booked"),
        "Quinn Adams": (date(2026, 7, 7), "cancelled"),
    }


def test_slot_over_the_autumn_change(make_store: MakeStore) -> None:
    store = make_store("takeaway")
    hours = [{"weekday": d, "opens": "11:00", "closes": "22:00"} for d in ("sat", "sun")]
    sample = read_sample(
        {
            "app": "takeaway",
            "rows": {
                "settings": [{"venue_name": "Night test"}],
                "opening_hours": hours,
                "customers": [{"@as": "c", "name": "C", "email": "c@example.com"}],
                "orders": [
                    {
                        "customer_id": {"@row": "c"},
                        "email": "c@example.com",
                        "pickup_at": {"@in": "PT20M", "@slot": "orders"},
                        "items": "soup",
                    }
                ],
            },
        }
    )
    # Sat 24 Oct 21:50 BST + 20 min is past Saturday's last slot (21:45); Sunday opens at
    # 11:00 GMT = 11:00 UTC, the clocks having gone back in the night.
    add_sample(store, sample, now=datetime(2026, 10, 24, 20, 50, tzinfo=UTC))
    assert rows(store, "orders")[0]["pickup_at"] == datetime(2026, 10, 25, 11, tzinfo=UTC)


def test_sample_is_never_judged_late(make_store: MakeStore) -> None:
    store = make_store("hotel")
    add_sample(store, example("hotel"), now=NOW)
    stay = {
        "room_id": 1,
        "guest_name": "R",
        "guest_email": "r@example.com",
        "arrive": date(2026, 7, 2),
    }
    # Cancelled a day before a 15:00 arrival, inside cancel_hours (48): late for a person...
    person = create_row(
        store, WriteRequest("stays", Actor.person("p@example.com"), NOW, values=stay)
    )
    moved = change_row(
        store,
        WriteRequest(
            "stays",
            Actor.person("p@example.com", {"reception"}),
            NOW,
            key=person.key,
            move_to="cancelled",
        ),
    )
    assert moved.row["late_cancel"] is True
    # ...but not for the sample's cancellation at the same distance.
    sample = read_sample({"app": "hotel", "rows": {"stays": [{**stay, "status": "cancelled"}]}})
    (added,) = add_sample(store, sample, now=NOW)
    assert rows(store, "stays")[added.key - 1]["late_cancel"] is False


def test_a_sample_row_the_clock_moved_is_still_sample_data(make_store: MakeStore) -> None:
    store = make_store("takeaway")
    add_sample(store, example("takeaway"), now=NOW)
    (stale,) = [r for r in rows(store, "orders") if r["items"] == "2 x falafel wrap"]
    rule = store.spec("orders").states.timed[0]  # type: ignore[union-attr]
    # Its closing, Tue 30 Jun 23:00 BST, passed before NOW: the clock cancels it.
    moved = make_timed_move(store, "orders", stale["id"], rule, now=NOW)
    assert (moved.row["status"], moved.row["cancel_code"]) == ("cancelled", "closed")
    assert str(stale["id"]) in marked(store)["orders"]
    remove_sample(store, now=NOW)
    assert rows(store, "orders") == []


def test_removal_takes_exactly_the_sample_rows(make_store: MakeStore) -> None:
    store = make_store("takeaway")
    add_sample(store, example("takeaway"), now=NOW)
    staff = Actor.person("staff@example.com", {"staff"})
    customer = create_row(
        store,
        WriteRequest("customers", staff, NOW, values={"name": "Real", "email": "r@example.com"}),
    )
    order = {
        "customer_id": customer.key,
        "email": "r@example.com",
        "pickup_at": datetime(2026, 7, 1, 17, tzinfo=UTC),
        "items": "real soup",
    }
    real = create_row(store, WriteRequest("orders", staff, NOW, values=order))
    change_row(store, WriteRequest("orders", staff, NOW, key=real.key, move_to="confirmed"))
    real_rows = {
        t: [r for r in rows(store, t) if str(r["id"]) not in marked(store).get(t, set())]
        for t in store.app.tables
    }

    removal = remove_sample(store, now=NOW)

    # The sample's settings row and opening hours stay: every real order keeps its moment.
    assert removal.removed == {"order_lines": 12, "orders": 7, "customers": 3}
    assert removal.kept == ()
    assert {t: rows(store, t) for t in store.app.tables} == real_rows
    assert real_rows["orders"][0]["status"] == "confirmed"
    assert marked(store) == {}
    with store.engine.connect() as conn:
        removals = conn.execute(
            sa.select(sa.func.count()).where(
                audit.c.actor == "Sample data", audit.c.after.is_(None)
            )
        ).scalar()
    assert removals == 22


def real_order(store: Store, customer: Any, items: str = "real") -> Any:
    """A real order (a person's) for a customer; its key."""
    order = {
        "customer_id": customer,
        "email": "a@example.com",
        "pickup_at": datetime(2026, 7, 1, 17, tzinfo=UTC),
        "items": items,
    }
    staff = Actor.person("s@example.com")
    return create_row(store, WriteRequest("orders", staff, NOW, values=order)).key


def test_a_sample_row_a_real_row_refers_to_is_kept_and_named(make_store: MakeStore) -> None:
    # The README's case: a real order for sample customer 1 (Ana). Removing Ana would
    # break the real order, so she stays, still sample data; every other sample row goes.
    store = make_store("takeaway")
    add_sample(store, example("takeaway"), now=NOW)
    real = real_order(store, 1)

    removal = remove_sample(store, now=NOW)

    assert removal.removed == {"order_lines": 12, "orders": 7, "customers": 2}
    assert removal.kept == (KeptRow("customers", "1", (("orders", str(real)),)),)
    assert [r["id"] for r in rows(store, "customers")] == [1]
    assert [r["id"] for r in rows(store, "orders")] == [real]
    assert marked(store) == {"customers": {"1"}}
    # Once nothing refers to her, the next removal takes her.
    with store.engine.begin() as conn:
        conn.execute(store.table("orders").delete())
    again = remove_sample(store, now=NOW)
    assert (again.removed, again.kept) == ({"customers": 1}, ())
    assert rows(store, "customers") == [] and marked(store) == {}


def test_a_kept_sample_row_keeps_the_sample_rows_it_refers_to(make_store: MakeStore) -> None:
    # A real order line on a sample order: the order stays, so its sample customer stays.
    store = make_store("takeaway")
    added = add_sample(store, example("takeaway"), now=NOW)
    order = next(r for r in added if r.table == "orders")
    with store.engine.connect() as conn:
        customer = store.read_row(conn, "orders", order.key)["customer_id"]
    line = {"order_id": order.key, "item": "real tea", "amount": 2}
    staff = Actor.person("s@example.com")
    real = create_row(store, WriteRequest("order_lines", staff, NOW, values=line)).key

    removal = remove_sample(store, now=NOW)

    assert removal.kept == (
        KeptRow("customers", str(customer), (("orders", str(order.key)),)),
        KeptRow("orders", str(order.key), (("order_lines", str(real)),)),
    )
    assert removal.removed == {"order_lines": 12, "orders": 6, "customers": 2}
    assert marked(store) == {"customers": {str(customer)}, "orders": {str(order.key)}}


def test_a_reference_outside_the_manifest_refuses_the_removal_whole(
    make_store: MakeStore,
) -> None:
    # The venue's own table with a foreign key the manifest does not know: the database
    # refuses the delete, and the removal says so with the constraint; nothing goes.
    store = make_store("takeaway")
    add_sample(store, example("takeaway"), now=NOW)
    schema = store.app.schema_name
    with store.engine.begin() as conn:
        conn.exec_driver_sql(
            f'CREATE TABLE "{schema}".payments (id serial PRIMARY KEY, order_id integer'
            f' CONSTRAINT payments_order_fk REFERENCES "{schema}".orders (id))'
        )
        conn.exec_driver_sql(f'INSERT INTO "{schema}".payments (order_id) VALUES (2)')
    before = {t: rows(store, t) for t in store.app.tables}
    with pytest.raises(SampleRefused, match="payments_order_fk"):
        remove_sample(store, now=NOW)
    assert {t: rows(store, t) for t in store.app.tables} == before
    with store.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(sample_marks)).scalar() == 22


def test_a_refused_sample_leaves_nothing(make_store: MakeStore) -> None:
    # docs/sample-data.md's file as it was: a customer, then an order giving `total`, a
    # column Adminium writes. The order is refused; the customer before it must not stay.
    store = make_store("takeaway")
    sample = read_sample(
        {
            "app": "takeaway",
            "rows": {
                "customers": [{"@as": "ana", "name": "Ana Pereira", "email": "ana@example.com"}],
                "orders": [
                    {
                        "customer_id": {"@row": "ana"},
                        "email": "ana@example.com",
                        "pickup_at": {"@in": "PT20M"},
                        "items": "2 x falafel wrap",
                        "total": 13.0,
                        "status": "confirmed",
                    }
                ],
            },
        }
    )
    with pytest.raises(AdminiumError, match="'total'"):
        add_sample(store, sample, now=NOW)
    assert rows(store, "customers") == [] and rows(store, "orders") == []
    assert marked(store) == {}
    with store.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(audit)).scalar() == 0


def test_setup_stays_and_is_not_added_twice(make_store: MakeStore) -> None:
    store = make_store("takeaway")
    add_sample(store, example("takeaway"), now=NOW)
    setup = {t: rows(store, t) for t in ("settings", "opening_hours")}
    remove_sample(store, now=NOW)
    assert {t: rows(store, t) for t in setup} == setup

    added = add_sample(store, example("takeaway"), now=NOW)

    # Setup already there is left as it is: one settings row, one row per weekday.
    assert {t: rows(store, t) for t in setup} == setup
    assert {row.table for row in added} == {"customers", "orders", "order_lines"}
