"""One app's fault stops only that app: two apps on one connection, one of them drifted by
hand (a column or table dropped, a trigger of the venue's own refusing), swept by the real
sweep (`services.sweeps.sweep`); the other app's due rows still move that minute, once, and
the drifted app's fault is its own record (the minute's record, the log, the card)."""

from __future__ import annotations

import copy
import logging
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient

from adminium.cli import main
from core.manifest.model import load_app
from core.store.install import install_app
from core.store.store import Store
from core.sweep.report import SweepOutcome, SweepReport
from core.sweep.sweep import sweep_connection
from core.time.clock import venue_zone
from services.apps import add_app
from services.connections import add_connection
from services.events import Publisher
from services.models import db
from services.storage import engine_for, upgrade_control_plane
from services.sweeps import sweep
from services.users import add_user
from tests.conftest import database_url_for
from tests.integration.api_fixtures import Clock
from tests.integration.ledger_fixtures import TILL, till_of
from tests.integration.screens_fixtures import PASSWORD, sign_in
from tests.integration.sweep_fixtures import SHOP, Shop
from web import create_app
from web.live import stop_hub

NOW = datetime(2026, 3, 6, 12, 0, tzinfo=UTC)
CAFE: dict[str, Any] = {**copy.deepcopy(SHOP), "name": "cafe", "schema": "cafe"}
"""The shop again, as a second app of the same connection, in a schema of its own."""


@pytest.fixture(scope="module")
def web(server_database_url: str, redis_url: str) -> Iterator[Flask]:
    """The web app on a control plane of this module's own, with an admin who signs in."""
    name = f"adm_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_database_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    control = database_url_for(server_database_url, name)
    upgrade_control_plane(control)
    app = create_app(
        {"DATABASE_URL": control, "REDIS_URL": redis_url, "CLOCK": Clock(NOW), "TESTING": True}
    )
    with app.app_context():
        add_user(db.session, "admin@venue.test", "admin", None, password=PASSWORD)
    yield app
    stop_hub(app)
    with app.app_context():
        db.engine.dispose()
    engine_for(control).dispose()
    with psycopg.connect(server_database_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@dataclass
class Two:
    """A connection with two apps, shop (schema public) and cafe (schema cafe), each with
    an order due: shop's first, so a sweep that stops at shop's never reaches cafe's."""

    web: Flask
    name: str
    url: str

    def sql(self, *statements: str) -> list[tuple[Any, ...]]:
        """Run statements on the venue's database; the last one's rows."""
        with psycopg.connect(self.url, autocommit=True) as conn:
            rows: list[tuple[Any, ...]] = []
            for statement in statements:
                cursor = conn.execute(statement)  # type: ignore[call-overload]
                rows = cursor.fetchall() if cursor.description else []
            return rows

    def order(self, schema: str, due_at: datetime) -> int:
        found = self.sql(
            f"INSERT INTO {schema}.orders (status, due_at) VALUES ('placed',"
            f" '{due_at.isoformat()}') RETURNING id"
        )
        return int(found[0][0])

    def status(self, schema: str, key: int) -> str:
        return str(self.sql(f"SELECT status FROM {schema}.orders WHERE id = {key}")[0][0])

    def sweep(self, now: datetime = NOW) -> SweepReport:
        with self.web.app_context():
            return sweep(db.session, self.name, now=now, publisher=Publisher(None))

    def records(self) -> list[dict[str, Any]]:
        rows = self.sql("SELECT outcome, moved, faults, error FROM adminium.sweeps ORDER BY id")
        return [dict(zip(("outcome", "moved", "faults", "error"), r, strict=True)) for r in rows]

    def audited(self, app: str, key: int) -> int:
        found = self.sql(
            f"SELECT count(*) FROM adminium.audit WHERE app = '{app}' AND row_key = '{key}'"
        )
        return int(found[0][0])


@pytest.fixture
def two(web: Flask, make_database: Callable[[], str]) -> Two:
    name, url = f"two{uuid.uuid4().hex[:8]}", make_database()
    with web.app_context():
        add_connection(db.session, name, url, "Europe/London")
        add_app(db.session, name, SHOP, create_tables=True)
        add_app(db.session, name, CAFE, create_tables=True)
    found = Two(web, name, url)
    found.sql(
        "INSERT INTO public.settings DEFAULT VALUES", "INSERT INTO cafe.settings DEFAULT VALUES"
    )
    return found


@pytest.fixture
def admin(web: Flask) -> FlaskClient:
    client = web.test_client()
    sign_in(client, "admin@venue.test")
    return client


REFUSING_TRIGGER = (
    "CREATE FUNCTION public.orders_read_only() RETURNS trigger LANGUAGE plpgsql AS"
    " $$ BEGIN RAISE EXCEPTION 'orders are read-only during the stocktake'; END $$",
    "CREATE TRIGGER orders_read_only BEFORE UPDATE ON public.orders"
    " FOR EACH ROW EXECUTE FUNCTION public.orders_read_only()",
)

DRIFTS = {
    # What the move reads (the whole row) lacks a column the manifest names.
    "a column the move reads dropped": (
        ("ALTER TABLE public.orders DROP COLUMN note",),
        "moving its due rows",
        "column orders.note does not exist",
    ),
    # The search's own column: the due rows of shop cannot even be found.
    "the moment's column dropped": (
        ("ALTER TABLE public.orders DROP COLUMN due_at",),
        "finding its due rows",
        "column orders.due_at does not exist",
    ),
    # The move's condition reads the settings row: read once a row is due.
    "a settings column dropped": (
        ("ALTER TABLE public.settings DROP COLUMN sweep_on",),
        "reading its settings",
        "column settings.sweep_on does not exist",
    ),
    "the table dropped": (
        ("DROP TABLE public.orders",),
        "finding its due rows",
        'relation "public.orders" does not exist',
    ),
    # A refusal the pipeline has no code for: the venue's own trigger.
    "a trigger of the venue's own refusing": (
        REFUSING_TRIGGER,
        "moving its due rows",
        "orders are read-only during the stocktake",
    ),
}


@pytest.mark.parametrize(("drift", "during", "words"), DRIFTS.values(), ids=list(DRIFTS))
def test_a_drifted_app_stops_alone_and_the_other_apps_rows_move(
    two: Two,
    caplog: pytest.LogCaptureFixture,
    drift: tuple[str, ...],
    during: str,
    words: str,
) -> None:
    shops = two.order("public", NOW - timedelta(minutes=10))
    cafes = two.order("cafe", NOW - timedelta(minutes=5))
    two.sql(*drift)
    with caplog.at_level(logging.INFO):
        report = two.sweep()
    # Cafe's row moved, once; shop's was not tried past its fault.
    assert two.status("cafe", cafes) == "cancelled"
    assert two.audited("cafe", cafes) == 1
    assert [(d.rule.app, d.key) for d in report.moved] == [("cafe", cafes)]
    assert report.outcome is SweepOutcome.done
    [fault] = report.faults
    assert (fault.app, fault.during) == ("shop", during)
    assert fault.error.startswith(words)
    # The hint for the tick: shop may have rows due, so nothing is promised past now.
    assert report.next_due == NOW
    [record] = two.records()
    assert (record["outcome"], record["moved"], record["error"]) == ("done", 1, None)
    assert record["faults"]["shop"]["error"] == fault.error
    assert record["faults"]["shop"]["during"] == during
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert any(
        f"sweep of connection {two.name}: app shop stopped this minute" in line and words in line
        for line in said
    ), said
    if drift[0].startswith("DROP TABLE") or "due_at" in drift[0]:
        return
    assert two.status("public", shops) == "placed"
    assert two.audited("shop", shops) == 0


def test_a_fault_in_the_move_counts_the_rows_it_left_and_the_fixed_app_moves_next_minute(
    two: Two,
) -> None:
    shops = [two.order("public", NOW - timedelta(minutes=m)) for m in (12, 11, 10)]
    cafes = two.order("cafe", NOW - timedelta(minutes=5))
    two.sql("ALTER TABLE public.orders DROP COLUMN note")
    first = two.sweep()
    assert [fault.left for fault in first.faults] == [3]
    assert two.status("cafe", cafes) == "cancelled"
    # The venue puts the column back: the next minute moves shop's rows, each once.
    two.sql("ALTER TABLE public.orders ADD COLUMN note text")
    second = two.sweep(NOW + timedelta(minutes=1))
    assert (second.outcome, second.faults) == (SweepOutcome.done, ())
    assert sorted(d.key for d in second.moved) == sorted(shops)
    assert [two.audited("shop", key) for key in shops] == [1, 1, 1]
    assert two.audited("cafe", cafes) == 1
    assert [r["faults"] for r in two.records()][1] is None


def test_a_connection_whose_every_app_faulted_stopped_naming_the_first(two: Two) -> None:
    two.order("public", NOW - timedelta(minutes=10))
    two.order("cafe", NOW - timedelta(minutes=5))
    two.sql(
        "ALTER TABLE public.orders DROP COLUMN note", "ALTER TABLE cafe.orders DROP COLUMN note"
    )
    report = two.sweep()
    assert report.outcome is SweepOutcome.stopped
    assert report.error is not None
    assert report.error.startswith("every app stopped this minute; shop: column orders.note")
    assert {fault.app for fault in report.faults} == {"shop", "cafe"}


@pytest.mark.parametrize(
    ("drop", "what"),
    [
        ("DROP SCHEMA adminium CASCADE", 'it has no schema "adminium"'),
        ("DROP TABLE adminium.set_aside", 'relation "adminium.set_aside" does not exist'),
    ],
    ids=["no schema", "a table of it missing"],
)
def test_a_database_without_adminiums_tables_says_what_is_missing_and_what_makes_it(
    two: Two, admin: FlaskClient, caplog: pytest.LogCaptureFixture, drop: str, what: str
) -> None:
    two.order("cafe", NOW - timedelta(minutes=5))
    two.sql(drop)
    with caplog.at_level(logging.ERROR):
        report = two.sweep()
    assert report.outcome is SweepOutcome.stopped
    sentence = (
        f"the database of connection {two.name} lacks Adminium's own tables ({what}),"
        " where the audit, the rows set aside and each minute's sweep are kept:"
        " `adminium run` makes them as it starts"
    )
    assert report.error is not None and report.error.startswith(sentence), report.error
    assert f"sweep of connection {two.name} stopped: {report.error}" in caplog.messages
    # The card says so in the same words, not that the database does not answer.
    card = admin.get(f"/connections/{two.name}")
    assert card.status_code == 200
    assert "lacks Adminium&#39;s own tables" in card.text
    assert "does not answer" not in card.text


def test_the_card_names_the_app_that_faulted_and_the_other_apps_figures(
    two: Two, admin: FlaskClient
) -> None:
    two.order("public", NOW - timedelta(minutes=10))
    later = two.order("cafe", NOW + timedelta(minutes=30))
    two.sql("ALTER TABLE public.orders DROP COLUMN due_at")
    # Before any sweep met it, the card finds shop's table unreadable itself.
    before = admin.get(f"/connections/{two.name}").text
    assert "App shop cannot be read: column orders.due_at does not exist" in before
    two.sweep()
    card = admin.get(f"/connections/{two.name}")
    assert card.status_code == 200, card.text
    text = card.text
    assert "done," in text
    assert "App shop stopped this minute while finding its due rows:" in text
    assert "column orders.due_at does not exist" in text
    assert "does not answer" not in text
    # Cafe's next move is still read (shop's table cannot be).
    assert 'class="next-due"><time datetime="' + (NOW + timedelta(minutes=30)).isoformat() in text
    assert two.status("cafe", later) == "placed"


def test_the_sweep_command_prints_the_apps_fault_and_exits_1(two: Two) -> None:
    two.order("public", NOW - timedelta(minutes=10))
    cafes = two.order("cafe", NOW - timedelta(minutes=5))
    two.sql("ALTER TABLE public.orders DROP COLUMN due_at")
    env = {"DATABASE_URL": two.web.config["DATABASE_URL"], "REDIS_URL": ""}
    swept = CliRunner().invoke(main, ["sweep", two.name, "--now", NOW.isoformat()], env=env)
    assert swept.exit_code == 1, swept.output
    lines = swept.stdout.splitlines()
    # 11:55 UTC on 6 March is 11:55 on London's clock (GMT until 29 March).
    assert f"moved cafe.orders {cafes} rule 1 at 2026-03-06T11:55:00+00:00" in lines
    assert (
        "app shop stopped this minute while finding its due rows: column orders.due_at does not"
        " exist: the app's manifest names what its tables lack, so its timed moves wait until"
        " the two agree"
    ) in lines
    assert lines[-1].startswith(f"sweep of {two.name}: done, moved 1,")
    # The console's one contract (docs/errors.md, "The console"): one Error line, its code.
    assert swept.stderr == (
        f"Error: the sweep of {two.name} stopped for app shop this minute (the lines above say"
        " why); the other apps were swept (DATABASE_REFUSED)\n"
    )


# --- a holding app beside the shop: its give-backs fault alone -------------------------

SLOT = datetime(2026, 6, 12, 11, 0, tzinfo=UTC)  # 12:00 BST on Friday 12 June
HOLD_ENDS = datetime(2026, 6, 12, 20, 0, tzinfo=UTC)  # the hold's 21:00 BST that day


@pytest.mark.parametrize(
    ("drift", "during", "words"),
    [
        (
            "ALTER TABLE public.orders DROP COLUMN card_paid",
            "finding its holds due",
            "column orders.card_paid does not exist",
        ),
        (
            "ALTER TABLE public.gift_cards DROP COLUMN balance",
            "giving back its holds",
            "column gift_cards.balance does not exist",
        ),
    ],
    ids=["the paid column dropped", "the ledger's balance dropped"],
)
def test_a_holding_apps_fault_leaves_the_other_apps_moves(
    make_shop: Callable[..., Shop], drift: str, during: str, words: str
) -> None:
    till = till_of(make_shop(TILL))
    card = till.card("50")
    till.place(SLOT, SLOT - timedelta(hours=1), gift_card_id=card, card_paid=Decimal("20"))
    install_app(till.engine, load_app(CAFE))
    cafe = Store(till.engine, load_app(CAFE), venue_zone("Europe/London"), connection="shop")
    till.sql("INSERT INTO cafe.settings DEFAULT VALUES")
    till.sql(
        "INSERT INTO cafe.orders (status, due_at) VALUES ('placed', :at)",
        at=HOLD_ENDS - timedelta(minutes=5),
    )
    till.sql(drift)
    report = sweep_connection([till.store, cafe], connection="shop", now=HOLD_ENDS)
    assert [(d.rule.app, d.key) for d in report.moved] == [("cafe", 1)]
    assert report.given_back == ()
    [fault] = report.faults
    assert (fault.app, fault.during) == ("till", during)
    assert fault.error.startswith(words)
    assert till.posting(1)["status"] == "held"  # type: ignore[index]
