"""`app add --replace --migrate` on the tables Adminium made: each step of the plan applied
in one transaction (a column added with its default backfilled, a varchar widened, a state
CHECK made anew, a timed rule's index made), the destructive ones only with `--yes` and
refused while rows would break them (how many, and which), the venue's own tables never
altered, and a migration the database refuses part-way leaving nothing changed."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session

from core.agreement.compare import Renames
from core.store.made import MadeItem, MadeKind, read_made
from services.apps import add_app, install_manifest
from services.connections import add_connection, get_connection
from services.errors import DatabaseRefused, TablesDisagree
from services.storage import connection_engine, engine_for, open_session, upgrade_control_plane

pytestmark = pytest.mark.integration

KITCHEN: dict[str, Any] = {
    "name": "kitchen",
    "schema": "kitchen",
    "tables": {
        "orders": {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "pickup_at", "type": "timestamptz"},
                {"ref": "items", "type": "text", "maxLength": 200},
                {"ref": "note", "type": "text", "maxLength": 20, "nullable": True},
                {
                    "ref": "status",
                    "type": "enum",
                    "values": ["placed", "ready", "picked_up", "cancelled"],
                },
            ],
            "states": {
                "column": "status",
                "initial": "placed",
                "moves": {"placed": ["ready", "cancelled"], "ready": ["picked_up"]},
            },
        }
    },
}


@pytest.fixture
def session(make_database: Callable[[], str]) -> Iterator[Session]:
    """A control plane with the connection `venue`, the kitchen's tables made by Adminium
    and three orders in them."""
    control = make_database()
    upgrade_control_plane(control)
    with open_session(control) as opened:
        add_connection(opened, "venue", make_database(), "Europe/London")
        add_app(opened, "venue", KITCHEN, create_tables=True)
        with engine(opened).begin() as conn:
            conn.execute(
                sa.text(
                    "INSERT INTO kitchen.orders (pickup_at, items, status) VALUES"
                    " (now(), 'soup', 'placed'), (now(), 'bread', 'ready'),"
                    " (now(), 'pie', 'picked_up')"
                )
            )
        yield opened
        engine(opened).dispose()
    engine_for(control).dispose()


def engine(session: Session) -> sa.Engine:
    """The venue's database."""
    return connection_engine(get_connection(session, "venue"))


def changed(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """The kitchen manifest with a change made to a copy."""
    manifest = copy.deepcopy(KITCHEN)
    change(manifest)
    return manifest


def orders(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest's orders table."""
    table: dict[str, Any] = manifest["tables"]["orders"]
    return table


def column(manifest: dict[str, Any], ref: str) -> dict[str, Any]:
    """One column of the orders table."""
    found: dict[str, Any] = next(c for c in orders(manifest)["columns"] if c["ref"] == ref)
    return found


def query(session: Session, statement: str) -> list[Any]:
    """What a statement reads on the venue's database, row by row."""
    with engine(session).connect() as conn:
        return list(conn.execute(sa.text(statement)))


def columns(session: Session) -> dict[str, str]:
    """The orders table's columns and their types, as the catalogue says."""
    rows = query(
        session,
        "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute"
        " WHERE attrelid = 'kitchen.orders'::regclass AND attnum > 0 AND NOT attisdropped",
    )
    return {name: kind for name, kind in rows}


def checks(session: Session) -> list[str]:
    """The orders table's CHECKs, as the catalogue says."""
    rows = query(
        session,
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint"
        " WHERE conrelid = 'kitchen.orders'::regclass AND contype = 'c'",
    )
    return [row[0] for row in rows]


def made(session: Session) -> set[MadeItem]:
    """What the record says Adminium made in the kitchen's schema."""
    with engine(session).connect() as conn:
        return set(read_made(conn, ["kitchen"]).items)


def test_a_new_column_is_added_with_its_default_filling_the_rows_there(session: Session) -> None:
    def add(manifest: dict[str, Any]) -> None:
        orders(manifest)["columns"].append({"ref": "table_no", "type": "integer", "default": 0})

    with pytest.raises(TablesDisagree):
        add_app(session, "venue", changed(add), replace=True)  # not without --migrate
    assert "table_no" not in columns(session)
    added = install_manifest(session, "venue", changed(add), replace=True, migrate=True)
    assert [step.sql for step in added.ran] == [
        "ALTER TABLE kitchen.orders ADD COLUMN table_no INTEGER DEFAULT 0 NOT NULL;"
    ]
    assert added.after.agree
    assert query(session, "SELECT table_no FROM kitchen.orders ORDER BY id") == [(0,), (0,), (0,)]
    assert MadeItem("kitchen", "orders", MadeKind.column, "table_no") in made(session)
    assert get_connection(session, "venue").apps[0].agreement.disagreements == []  # type: ignore[union-attr]


def test_a_longer_max_length_widens_the_varchar(session: Session) -> None:
    def longer(manifest: dict[str, Any]) -> None:
        column(manifest, "note")["maxLength"] = 80

    install_manifest(session, "venue", changed(longer), replace=True, migrate=True)
    assert columns(session)["note"] == "character varying(80)"


def test_a_new_state_widens_the_column_and_makes_its_check_anew(session: Session) -> None:
    def held(manifest: dict[str, Any]) -> None:
        column(manifest, "status")["values"].append("held_for_pickup")
        orders(manifest)["states"]["moves"]["placed"].append("held_for_pickup")

    before = checks(session)
    assert "held_for_pickup" not in before[0]
    added = install_manifest(session, "venue", changed(held), replace=True, migrate=True)
    assert [step.order.name for step in added.ran] == [
        "drop_constraint",
        "alter_type",
        "add_constraint",
    ]
    assert columns(session)["status"] == "character varying(15)"
    [check] = checks(session)
    assert "'held_for_pickup'" in check and "'picked_up'" in check
    with engine(session).begin() as conn:  # the move the database refused before
        conn.execute(sa.text("UPDATE kitchen.orders SET status = 'held_for_pickup' WHERE id = 1"))
    assert MadeItem("kitchen", "orders", MadeKind.constraint, "ck_orders_status") in made(session)


def test_a_new_timed_rule_gets_its_index(session: Session) -> None:
    def timed(manifest: dict[str, Any]) -> None:
        orders(manifest)["states"]["timed"] = [
            {"from": "placed", "to": "cancelled", "at": {"column": "pickup_at"}}
        ]

    install_manifest(session, "venue", changed(timed), replace=True, migrate=True)
    assert query(session, "SELECT to_regclass('kitchen.ix_orders_status_pickup_at') IS NOT NULL")
    assert MadeItem("kitchen", "orders", MadeKind.index, "ix_orders_status_pickup_at") in made(
        session
    )


def test_a_column_of_adminiums_the_manifest_drops_goes_only_with_yes(session: Session) -> None:
    def without_items(manifest: dict[str, Any]) -> None:
        orders(manifest)["columns"] = [
            c for c in orders(manifest)["columns"] if c["ref"] != "items"
        ]

    with pytest.raises(TablesDisagree) as refused:
        add_app(session, "venue", changed(without_items), replace=True, migrate=True)
    assert refused.value.details["refusals"] == [
        "orders: destructive, run again with --yes: ALTER TABLE kitchen.orders DROP COLUMN items;"
    ]
    [sentence] = refused.value.details["sentences"]
    assert sentence.endswith(
        "(3 rows hold a value there, lost with it); fix: ALTER TABLE kitchen.orders DROP "
        "COLUMN items; or add it to the manifest with a default"
    )
    assert "items" in columns(session)
    add_app(session, "venue", changed(without_items), replace=True, migrate=True, yes=True)
    assert "items" not in columns(session)
    assert MadeItem("kitchen", "orders", MadeKind.column, "items") not in made(session)


def test_a_column_renamed_as_asked_keeps_its_values(session: Session) -> None:
    def renamed(manifest: dict[str, Any]) -> None:
        column(manifest, "items")["ref"] = "dishes"

    renames = Renames(columns={("orders", "items"): "dishes"})
    with pytest.raises(TablesDisagree) as refused:
        add_app(session, "venue", changed(renamed), replace=True, migrate=True, renames=renames)
    assert "destructive, run again with --yes" in refused.value.details["refusals"][0]
    add_app(
        session, "venue", changed(renamed), replace=True, migrate=True, yes=True, renames=renames
    )
    assert query(session, "SELECT dishes FROM kitchen.orders ORDER BY id") == [
        ("soup",),
        ("bread",),
        ("pie",),
    ]


def test_a_type_narrowed_is_refused_while_rows_would_not_cast(session: Session) -> None:
    def whole(manifest: dict[str, Any]) -> None:
        column(manifest, "items").update(type="integer")
        column(manifest, "items").pop("maxLength")

    with pytest.raises(TablesDisagree) as refused:
        add_app(session, "venue", changed(whole), replace=True, migrate=True, yes=True)
    assert refused.value.details["refusals"] == [
        "orders: not migrated while 3 rows hold a value that is no integer (keys 1, 2, 3): "
        "ALTER TABLE kitchen.orders ALTER COLUMN items TYPE INTEGER USING items::INTEGER;"
    ]
    with engine(session).begin() as conn:
        conn.execute(sa.text("UPDATE kitchen.orders SET items = id::text"))
    with pytest.raises(TablesDisagree) as refused:  # castable now, but destructive
        add_app(session, "venue", changed(whole), replace=True, migrate=True)
    assert "destructive, run again with --yes" in refused.value.details["refusals"][0]
    add_app(session, "venue", changed(whole), replace=True, migrate=True, yes=True)
    assert columns(session)["items"] == "integer"


def test_a_state_rows_still_hold_is_never_dropped(session: Session) -> None:
    def renamed(manifest: dict[str, Any]) -> None:
        column(manifest, "status")["values"] = ["placed", "ready", "collected", "cancelled"]
        orders(manifest)["states"]["moves"]["ready"] = ["collected"]

    for yes in (False, True):
        with pytest.raises(TablesDisagree) as refused:
            add_app(session, "venue", changed(renamed), replace=True, migrate=True, yes=yes)
        assert refused.value.details["refusals"] == [
            "orders: not migrated while 1 row holds 'picked_up' (keys 3), which the new CHECK "
            "refuses: ALTER TABLE kitchen.orders ADD CONSTRAINT ck_orders_status CHECK (status "
            "IN ('placed', 'ready', 'collected', 'cancelled'));"
        ]
    assert "'picked_up'" in checks(session)[0]


def test_a_state_renamed_as_asked_moves_the_rows_holding_it(session: Session) -> None:
    def renamed(manifest: dict[str, Any]) -> None:
        column(manifest, "status")["values"] = ["placed", "ready", "collected", "cancelled"]
        orders(manifest)["states"]["moves"]["ready"] = ["collected"]

    renames = Renames(values={("orders", "status", "picked_up"): "collected"})
    added = install_manifest(
        session, "venue", changed(renamed), replace=True, migrate=True, yes=True, renames=renames
    )
    # 'collected' is no longer than 'picked_up': the column keeps its length.
    assert [step.order.name for step in added.ran] == [
        "drop_constraint",
        "update",
        "add_constraint",
    ]
    assert query(session, "SELECT status FROM kitchen.orders ORDER BY id") == [
        ("placed",),
        ("ready",),
        ("collected",),
    ]
    assert added.after.agree


def test_a_new_column_no_row_can_fill_is_refused_on_a_table_with_rows(session: Session) -> None:
    def required(manifest: dict[str, Any]) -> None:
        orders(manifest)["columns"].append({"ref": "table_no", "type": "integer"})

    with pytest.raises(TablesDisagree) as refused:
        add_app(session, "venue", changed(required), replace=True, migrate=True, yes=True)
    assert refused.value.details["refusals"] == [
        "orders: not migrated while orders holds 3 rows and the manifest gives table_no no "
        'default (give it a "default", or "nullable": true): ALTER TABLE kitchen.orders ADD '
        "COLUMN table_no INTEGER NOT NULL;"
    ]


def test_a_migration_the_database_refuses_part_way_changes_nothing(session: Session) -> None:
    def both(manifest: dict[str, Any]) -> None:
        orders(manifest)["columns"].append({"ref": "table_no", "type": "integer", "default": 0})
        column(manifest, "items").update(type="date")  # 'soup' is no date: no pattern says so
        column(manifest, "items").pop("maxLength")

    before = (columns(session), checks(session), made(session))
    with pytest.raises(DatabaseRefused) as refused:
        add_app(session, "venue", changed(both), replace=True, migrate=True, yes=True)
    assert "invalid input syntax for type date" in refused.value.message
    assert (columns(session), checks(session), made(session)) == before
    assert get_connection(session, "venue").apps[0].manifest == KITCHEN


def test_the_venues_own_table_is_never_altered(session: Session) -> None:
    with engine(session).begin() as conn:
        conn.execute(sa.text("CREATE TABLE kitchen.tills (id serial PRIMARY KEY, name text)"))

    def tills(manifest: dict[str, Any]) -> None:
        manifest["tables"]["tills"] = {
            "key": "id",
            "columns": [
                {"ref": "id", "type": "serial"},
                {"ref": "name", "type": "text", "nullable": True},
                {"ref": "float", "type": "numeric", "default": 0},
            ],
        }

    with pytest.raises(TablesDisagree) as refused:
        add_app(session, "venue", changed(tills), replace=True, migrate=True, yes=True)
    assert refused.value.details["refusals"] == [
        "tills.float: Adminium did not make it, so it never alters it; its DBA runs: ALTER TABLE "
        "kitchen.tills ADD COLUMN float NUMERIC DEFAULT 0 NOT NULL;"
    ]
    assert query(
        session,
        "SELECT count(*) FROM pg_attribute WHERE attrelid = 'kitchen.tills'::regclass"
        " AND attname = 'float'",
    ) == [(0,)]
