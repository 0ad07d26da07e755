"""The issue's changes tried again on tables Adminium made (`app add --create-tables`): each
is applied by `app add --replace --migrate` (or refused with its sentences and plan), a move
into the new state is made, the sweep ends `done`, and the board, the row page and the API
answer 200. The card, /status and `connection list` say when the tables disagree.

The site's clock reads Friday 10 July 2026, 09:00Z; the confirmed orders were for 06:00Z,
so with the new `settings.hold_minutes` (30, its default) they are due from 06:30Z."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from adminium.cli import main
from core.agreement.compare import Renames
from core.sweep.report import SweepOutcome
from services.apps import install_manifest, save_app
from services.errors import TablesDisagree
from services.events import NO_PUBLISHER
from services.models import db
from services.sweeps import sweep
from tests.integration.api_fixtures import Site, api_manifest, rows_path
from tests.integration.screens_fixtures import give_passwords, signed_in_client

pytestmark = pytest.mark.integration

PICKUP = datetime(2026, 7, 10, 6, 0, tzinfo=UTC)


def orders(manifest: dict[str, Any]) -> dict[str, Any]:
    table: dict[str, Any] = manifest["tables"]["orders"]
    return table


def status(manifest: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = next(c for c in orders(manifest)["columns"] if c["ref"] == "status")
    return found


def holding() -> dict[str, Any]:
    """The venue app with a new state `held`, a move into it, a new column `table_no`, and a
    new timed move from `confirmed` into `held` reading a new settings column."""
    manifest = api_manifest()
    status(manifest)["values"].append("held")
    moves = orders(manifest)["states"]["moves"]
    moves["confirmed"].append("held")
    moves["held"] = ["ready", "cancelled"]
    orders(manifest)["columns"].append({"ref": "table_no", "type": "integer", "nullable": True})
    settings = manifest["tables"]["settings"]["columns"]
    settings.append({"ref": "hold_minutes", "type": "integer", "default": 30})
    orders(manifest)["states"]["timed"].append(
        {
            "from": "confirmed",
            "to": "held",
            "at": {
                "column": "pickup_at",
                "plus": {"minutes": {"table": "settings", "column": "hold_minutes"}},
            },
        }
    )
    return manifest


def replace(site: Site, manifest: dict[str, Any], **asked: Any) -> Any:
    with site.app.app_context():
        return install_manifest(db.session, "venue", manifest, replace=True, **asked)


def swept(site: Site) -> Any:
    with site.app.app_context():
        return sweep(db.session, "venue", now=site.clock.now, publisher=NO_PUBLISHER)


def screens_answer(site: Site, key: int) -> list[int]:
    """The board, the row page and the API's list and row, as the manager sees them."""
    client = signed_in_client(site, "manager")
    return [
        client.get("/apps/venue/venue/orders").status_code,
        client.get(f"/apps/venue/venue/orders/{key}").status_code,
        site.client.get(rows_path("orders"), headers=site.headers("manager")).status_code,
        site.client.get(rows_path("orders", key), headers=site.headers("manager")).status_code,
    ]


@pytest.fixture
def venue(fresh_site: Site) -> Site:
    """A site of its own whose users sign in, with five confirmed orders long past pickup."""
    give_passwords(fresh_site)
    for _ in range(5):
        fresh_site.insert("orders", status="confirmed", pickup_at=PICKUP)
    return fresh_site


def test_a_new_state_column_and_timed_move_are_migrated_moved_into_and_shown(
    venue: Site,
) -> None:
    with pytest.raises(TablesDisagree) as refused:
        replace(venue, holding())
    assert {s.split(":")[0] for s in refused.value.details["sentences"]} == {
        "orders.table_no",
        "orders.status",
        "settings.hold_minutes",
    }
    added = replace(venue, holding(), migrate=True)
    assert added.after.agree
    report = swept(venue)
    assert report.outcome is SweepOutcome.done
    assert (len(report.moved), len(report.set_aside)) == (5, 0)
    rows = venue.client.get(rows_path("orders"), headers=venue.headers("manager")).get_json()
    assert [row["status"] for row in rows["rows"]] == ["held"] * 5
    assert all("table_no" in row for row in rows["rows"])
    key = venue.insert("orders", status="confirmed", pickup_at=datetime(2026, 7, 11, tzinfo=UTC))
    moved = venue.client.post(
        rows_path("orders", key) + "/moves",
        json={"to": "held", "values": {"table_no": 7}},
        headers=venue.headers("manager"),
    )
    assert moved.status_code == 200, moved.get_json()
    assert venue.row("orders", key)["status"] == "held"
    assert screens_answer(venue, key) == [200, 200, 200, 200]


def renamed() -> dict[str, Any]:
    """The venue app with `refunded` renamed `returned`."""
    manifest = api_manifest()
    status(manifest)["values"] = ["placed", "confirmed", "ready", "cancelled", "returned"]
    confirmed = orders(manifest)["states"]["moves"]["confirmed"]
    confirmed[-1] = {"to": "returned", "roles": ["manager"]}
    return manifest


def test_a_renamed_state_is_refused_with_its_plan_then_renamed_as_asked(venue: Site) -> None:
    refunded = venue.insert("orders", status="refunded", pickup_at=PICKUP)
    with pytest.raises(TablesDisagree) as refused:
        replace(venue, renamed(), migrate=True, yes=True)
    assert refused.value.details["refusals"] == [
        f"orders: not migrated while 1 row holds 'refunded' (keys {refunded}), which the new "
        "CHECK refuses: ALTER TABLE public.orders ADD CONSTRAINT ck_orders_status CHECK (status "
        "IN ('placed', 'confirmed', 'ready', 'cancelled', 'returned'));"
    ]
    renames = Renames(values={("orders", "status", "refunded"): "returned"})
    replace(venue, renamed(), migrate=True, yes=True, renames=renames)
    assert venue.row("orders", refunded)["status"] == "returned"
    key = venue.insert("orders", status="confirmed", pickup_at=datetime(2026, 7, 11, tzinfo=UTC))
    moved = venue.client.post(
        rows_path("orders", key) + "/moves",
        json={"to": "returned"},
        headers=venue.headers("manager"),
    )
    assert moved.status_code == 200, moved.get_json()
    assert swept(venue).outcome is SweepOutcome.done
    assert screens_answer(venue, refunded) == [200, 200, 200, 200]


def test_a_removed_column_goes_with_yes_and_rows_are_made_again(venue: Site) -> None:
    with_covers = api_manifest()
    orders(with_covers)["columns"].append({"ref": "covers", "type": "integer", "default": 2})
    replace(venue, with_covers, migrate=True)
    with venue.store().engine.begin() as conn:  # the venue's DBA took its default away
        conn.execute(sa.text("ALTER TABLE public.orders ALTER COLUMN covers DROP DEFAULT"))
    with venue.app.app_context():  # the manifest without covers, saved as before this check
        save_app(db.session, "venue", api_manifest(), replace=True)
    create = {"values": {"pickup_at": "2026-07-11T12:00:00+00:00"}}
    refused = venue.client.post(rows_path("orders"), json=create, headers=venue.headers("manager"))
    assert refused.status_code == 422  # the manifest no longer names covers: NOT NULL refuses
    with pytest.raises(TablesDisagree) as destructive:
        replace(venue, api_manifest(), migrate=True)
    assert destructive.value.details["sentences"][0] == (
        "orders.covers: the manifest does not know this column, the database has it integer "
        "NOT NULL with no default, so creates will be refused (5 rows hold a value there, lost "
        "with it); fix: ALTER TABLE public.orders DROP COLUMN covers; or add it to the manifest "
        "with a default"
    )
    replace(venue, api_manifest(), migrate=True, yes=True)
    made = venue.client.post(rows_path("orders"), json=create, headers=venue.headers("manager"))
    assert made.status_code == 201, made.get_json()
    assert swept(venue).outcome is SweepOutcome.done
    assert screens_answer(venue, made.get_json()["key"]) == [200, 200, 200, 200]


def test_the_card_status_and_connection_list_say_the_tables_disagree(venue: Site) -> None:
    with venue.store().engine.begin() as conn:  # the venue's DBA adds a column of its own
        conn.execute(sa.text("ALTER TABLE public.orders ADD COLUMN till text NOT NULL DEFAULT ''"))
        conn.execute(sa.text("ALTER TABLE public.orders ALTER COLUMN till DROP DEFAULT"))
    env = {"DATABASE_URL": venue.app.config["DATABASE_URL"], "REDIS_URL": ""}
    diff = CliRunner().invoke(main, ["app", "diff", "venue", "venue"], env=env)
    assert diff.exit_code == 1
    first = (
        "orders.till: the manifest does not know this column, the database has it text NOT NULL"
        " with no default, so creates will be refused; fix: ALTER TABLE public.orders ALTER"
        " COLUMN till DROP NOT NULL; or add it to the manifest with a default, or give it one in"
        " the database"
    )
    assert diff.output.splitlines()[1] == f"  {first}"
    words = f"tables disagree with the manifest: 1 (app venue: {first})"
    listed = CliRunner().invoke(main, ["connection", "list"], env=env)
    assert f"  {words}" in listed.output.splitlines()
    manager = signed_in_client(venue, "manager")
    card = manager.get("/connections").text
    assert "tables disagree with the manifest: 1</strong> (app venue: orders.till:" in card
    status = manager.get("/status").text
    assert f"venue: {words}".replace("'", "&#39;") in status
    agree = CliRunner().invoke(main, ["app", "diff", "venue", "other"], env=env)
    assert agree.exit_code == 0
    assert agree.output == "app other on connection venue: the tables agree with the manifest\n"
    stranger = venue.app.test_client().get("/status").text
    assert "tables disagree" not in stranger
