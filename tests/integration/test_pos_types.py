"""An app over a POS's own tables, made by hand: a uuid key swept, set aside and fixed, read
and patched through the API and shown on the screens; a wall-time pickup read on the
venue's clock; numeric(10,2) refusing what it would round; a manifest default sent on
insert; and the column types a manifest cannot read, refused at `app add` or counted on
the pending screen."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from decimal import Decimal
from typing import Any

import psycopg
import pytest

from services.apps import add_app, install_adminium_tables, lookup_app
from services.connections import add_connection
from services.errors import ManifestRefused
from services.events import NO_PUBLISHER
from services.models import db
from services.users import add_user
from services.writes import import_rows
from tests.integration.pipeline_fixtures import at
from tests.integration.pos_fixtures import PosSite, pos_site
from tests.integration.screens_fixtures import PASSWORD, csrf_of, sign_in

ROWS = "/api/apps/pos/pos/tables/orders/rows"


@pytest.fixture(scope="module")
def pos_once(server_database_url: str, redis_url: str) -> Iterator[PosSite]:
    """The POS site for the module's tests."""
    with pos_site(server_database_url, redis_url) as site:
        yield site


@pytest.fixture
def pos(pos_once: PosSite) -> Iterator[PosSite]:
    """The POS site; afterwards its orders, lines, records and audit gone."""
    pos_once.clock.now = at("2026-07-10 09:00")
    yield pos_once
    pos_once.sql(
        "DELETE FROM public.order_lines; DELETE FROM public.orders;"
        " DELETE FROM adminium.set_aside; DELETE FROM adminium.audit"
    )


# --- a timed move of a uuid-keyed order at a wall-time pickup -------------------------


@pytest.mark.parametrize(
    ("wall", "before", "due", "stamped"),
    [
        # 25 Oct 2026 London: at 02:00 BST the clocks go back to 01:00 GMT, so 01:30 is
        # shown twice; read as the first, 01:30 BST = 00:30 UTC; 30 minutes on, 01:00 UTC,
        # the moment the clocks went back: 01:00 GMT on the wall.
        ("2026-10-25 01:30", "2026-10-25 00:59", "2026-10-25 01:00", "2026-10-25 01:00"),
        # 10 Jul 2026 London is BST (UTC+1): 12:30 is 11:30 UTC; 30 minutes on, 12:00 UTC,
        # 13:00 on the wall.
        ("2026-07-10 12:30", "2026-07-10 11:59", "2026-07-10 12:00", "2026-07-10 13:00"),
    ],
    ids=["autumn_fold_reads_the_first", "summer"],
)
def test_a_uuid_order_is_cancelled_at_its_wall_time_on_the_venue_clock(
    pos: PosSite, wall: str, before: str, due: str, stamped: str
) -> None:
    key = pos.order(wall)
    line = pos.line(key, "soup")
    pos.sweep(at(before))
    assert pos.row("orders", key)["status"] == "placed"
    pos.sweep(at(due))
    row = pos.row("orders", key)
    assert (row["status"], row["cancel_code"]) == ("cancelled", "not_collected")
    assert row["pickup_at"] == datetime.fromisoformat(wall)  # the wall time left as stored
    assert row["cancelled_at"] == datetime.fromisoformat(stamped)  # the stamp: wall time too
    # The effect found the line by its uuid link and voided it.
    assert pos.row("order_lines", line)["status"] == "void"
    audit = pos.sql("SELECT actor, table_name, row_key, move_to FROM adminium.audit ORDER BY id")
    assert audit == [
        {"actor": "Timed move", "table_name": "orders", "row_key": key, "move_to": "cancelled"},
        {"actor": "Timed move", "table_name": "order_lines", "row_key": line, "move_to": "void"},
    ]


def test_a_set_aside_uuid_order_is_fixed_on_the_set_aside_screen(pos: PosSite) -> None:
    # 12:30 BST = 11:30 UTC, due 30 minutes on at 12:00 UTC; the note keeps it (the POS's CHECK).
    key = pos.order("2026-07-10 12:30", note="call me first")
    pos.sweep(at("2026-07-10 12:01"))
    assert pos.sql("SELECT row_key, rule, code FROM adminium.set_aside") == [
        {"row_key": key, "rule": 1, "code": "VALUE_REFUSED"}
    ]
    page = pos.client.get("/connections/pos/set-aside").text
    assert f'id="aside-orders-{key}"' in page
    assert "an order with a note is kept for the manager" in page
    pos.clock.now = at("2026-07-10 12:05")
    headers = {"X-CSRFToken": csrf_of(page), "HX-Request": "true"}
    item = f"/connections/pos/set-aside/pos/orders/{key}"
    saved = pos.client.post(f"{item}/edit", data={"column": "note", "value": ""}, headers=headers)
    assert saved.status_code == 200, saved.text
    retried = pos.client.post(f"{item}/retry", data={}, headers=headers)
    assert retried.status_code == 200, retried.text
    assert "moved to Cancelled by its timed move" in retried.text
    assert pos.row("orders", key)["status"] == "cancelled"
    assert pos.sql("SELECT * FROM adminium.set_aside") == []


# --- the API and the screens ----------------------------------------------------------


def test_the_api_reads_and_patches_a_uuid_row(pos: PosSite) -> None:
    key = pos.order("2026-07-10 12:30")
    read = pos.client.get(f"{ROWS}/{key}", headers=pos.headers)
    assert read.status_code == 200, read.text
    body = read.get_json()
    assert body["key"] == key
    # 12:30 stored, on the venue's clock in July (BST): 11:30 UTC.
    assert body["row"]["pickup_at"] == "2026-07-10T11:30:00+00:00"
    assert body["row"]["total"] == "0.00"
    # The key as any hand writes a uuid; and a key no uuid has is no row, never a 5xx.
    assert pos.client.get(f"{ROWS}/{key.upper()}", headers=pos.headers).status_code == 200
    missing = pos.client.get(f"{ROWS}/order-42", headers=pos.headers)
    assert (missing.status_code, missing.get_json()["error"]["code"]) == (404, "NOT_FOUND")
    # An instant is stored as the wall time it shows: 00:30 UTC on 25 Oct is 01:30 BST.
    values = {"note": "by the door", "pickup_at": "2026-10-25T00:30:00+00:00"}
    patched = pos.client.patch(f"{ROWS}/{key}", json={"values": values}, headers=pos.headers)
    assert patched.status_code == 200, patched.text
    stored = pos.row("orders", key)
    assert (stored["note"], stored["pickup_at"]) == ("by the door", datetime(2026, 10, 25, 1, 30))
    page = pos.client.get(f"{ROWS}?limit=1", headers=pos.headers).get_json()
    assert [r["id"] for r in page["rows"]] == [key]


def test_the_board_and_the_row_page_show_a_uuid_order_at_its_wall_time(pos: PosSite) -> None:
    key = pos.order("2026-07-10 12:30")
    board = pos.client.get("/apps/pos/pos/orders")
    assert board.status_code == 200, board.text
    assert f'id="row-orders-{key}"' in board.text
    page = pos.client.get(f"/apps/pos/pos/orders/{key}")
    assert page.status_code == 200, page.text
    assert key in page.text
    assert "Fri 10 Jul 2026 12:30" in page.text  # the wall time as stored, the venue's clock


# --- writes: defaults, numeric scale -----------------------------------------------------


def test_a_create_that_leaves_out_a_column_with_a_manifest_default_is_given_it(
    pos: PosSite,
) -> None:
    # terminal_id is NOT NULL with no default in the POS's table: the manifest's "WEB" is sent.
    made = pos.client.post(
        ROWS, json={"values": {"pickup_at": "2026-07-10T12:30"}}, headers=pos.headers
    )
    assert made.status_code == 201, made.text
    key = made.get_json()["key"]
    row = pos.row("orders", key)
    assert (row["terminal_id"], row["pickup_at"], row["status"]) == (
        "WEB",
        datetime(2026, 7, 10, 12, 30),
        "placed",
    )
    # An import leaves out the line's key (a uuid the POS makes itself): the server makes one.
    with pos.app.app_context():
        report = import_rows(
            pos.store(),
            "order_lines",
            [{"order_id": key, "item": "tea"}],
            now=at("2026-07-10 09:00"),
            publisher=NO_PUBLISHER,
        )
    assert (report.imported, report.refused) == (1, [])
    [line] = pos.sql("SELECT id::text AS id, item FROM public.order_lines")
    assert line["item"] == "tea" and len(line["id"]) == 36


def test_a_total_with_more_decimals_than_the_column_keeps_is_refused(pos: PosSite) -> None:
    refused = pos.client.post(ROWS, json={"values": {"total": 12.345}}, headers=pos.headers)
    assert refused.status_code == 422, refused.text
    error = refused.get_json()["error"]
    assert error["code"] == "VALUE_REFUSED"
    assert error["details"] == {"column": "total", "reason": "type", "scale": 2, "precision": 10}
    assert "keeps at most 2 decimals (the column is numeric(10,2)), not 12.345" in error["message"]
    assert pos.sql("SELECT count(*) AS n FROM public.orders") == [{"n": 0}]
    made = pos.client.post(ROWS, json={"values": {"total": 12.34}}, headers=pos.headers)
    assert made.status_code == 201, made.text
    key = made.get_json()["key"]
    again = pos.client.patch(
        f"{ROWS}/{key}", json={"values": {"total": 0.125}}, headers=pos.headers
    )
    assert again.status_code == 422, again.text
    assert pos.row("orders", key)["total"] == Decimal("12.34")


def test_the_openapi_document_says_what_the_server_fills_in(pos: PosSite) -> None:
    answer = pos.client.get("/api/apps/pos/pos/openapi.json", headers=pos.headers)
    assert answer.status_code == 200, answer.text
    schemas = answer.get_json()["components"]["schemas"]
    create = schemas["orders.Create"]["properties"]["values"]
    fields = create["properties"]
    assert "terminal_id" not in create.get("required", [])
    assert fields["terminal_id"]["default"] == "WEB"
    assert 'Left out, the server writes its default, "WEB".' in fields["terminal_id"]["description"]
    assert "id" not in create.get("required", [])
    assert fields["id"]["format"] == "uuid"
    assert fields["id"]["description"] == "Left out, the server makes a random UUID."
    assert "At most 2 decimals" in fields["total"]["description"]
    update = schemas["orders.Update"]["properties"]["values"]["properties"]
    assert "default" not in update["terminal_id"]  # an update leaves a column as it is


# --- column types the manifest cannot read -------------------------------------------------

LEGACY_TABLE = """
CREATE TABLE public.orders (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    status varchar(20) NOT NULL DEFAULT 'placed',
    pickup_at timestamp without time zone,
    total numeric(10,2),
    receipt text
)
"""


def legacy_manifest(pickup: str = "timestamptz", key: str = "text") -> dict[str, Any]:
    """The orders of the legacy till, as a newcomer first types them."""
    return {
        "name": "legacy",
        "tables": {
            "orders": {
                "key": "id",
                "columns": [
                    {"ref": "id", "type": key},
                    {"ref": "status", "type": "text"},
                    {"ref": "pickup_at", "type": pickup, "nullable": True},
                    {"ref": "total", "type": "numeric", "nullable": True},
                    {"ref": "receipt", "type": "uuid", "nullable": True},
                ],
                "states": {
                    "column": "status",
                    "initial": "placed",
                    "moves": {"placed": ["cancelled"]},
                    "timed": [{"from": "placed", "to": "cancelled", "at": {"column": "pickup_at"}}],
                },
            }
        },
    }


def test_app_add_names_each_column_the_manifest_cannot_read(
    pos: PosSite, make_database: Callable[[], str]
) -> None:
    url = make_database()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(LEGACY_TABLE)  # type: ignore[arg-type]
    with pos.app.app_context():
        add_connection(db.session, "legacy", url, "Europe/London")
        with pytest.raises(ManifestRefused) as refused:
            add_app(db.session, "legacy", legacy_manifest())
        assert lookup_app(db.session, "legacy", "legacy") is None  # nothing saved
    assert [(r["where"], r["sentence"]) for r in refused.value.details["refusals"]] == [
        (
            "tables.orders.columns[0]",
            '"orders.id" is uuid in the database, which a text column cannot read:'
            ' write "type": "uuid"',
        ),
        (
            "tables.orders.columns[2]",
            '"orders.pickup_at" is timestamp without time zone in the database: it keeps a'
            " wall time with no zone, which a timestamptz cannot read (its rows would never"
            ' move); write "type": "timestamp", "zone": "venue" to read it on the'
            " connection's clock (Europe/London), or make the column timestamp with time zone",
        ),
        (
            "tables.orders.columns[3]",
            '"orders.total" is numeric(10,2) in the database, which rounds a value to 2'
            ' decimals: write "precision": 10, "scale": 2, so a value with more decimals is'
            " refused rather than rounded",
        ),
        (
            "tables.orders.columns[4]",
            '"orders.receipt" is text in the database, which a uuid column cannot read:'
            ' write "type": "text"',
        ),
    ]


def test_the_pending_screen_counts_rows_whose_moment_cannot_be_read(
    pos: PosSite, make_database: Callable[[], str]
) -> None:
    url = make_database()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(LEGACY_TABLE.replace("without time zone", "with time zone"))  # type: ignore[arg-type]
    manifest = legacy_manifest(key="uuid")
    manifest["tables"]["orders"]["columns"][3].update(precision=10, scale=2)
    manifest["tables"]["orders"]["columns"][4]["type"] = "text"
    with pos.app.app_context():
        add_connection(db.session, "till", url, "Europe/London")
        add_app(db.session, "till", manifest)
        install_adminium_tables(db.session)
        add_user(db.session, "admin@pos.test", "admin", None, password=PASSWORD)
    # Saved over a timestamptz; then the POS's vendor changes the column under it.
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE public.orders ALTER pickup_at TYPE timestamp without time zone")
        for wall in ("2026-07-09 12:30", "2026-07-09 13:00", "2026-07-10 08:00", None):
            conn.execute("INSERT INTO public.orders (pickup_at) VALUES (%s)", (wall,))
    client = pos.app.test_client()
    sign_in(client, "admin@pos.test")
    page = client.get("/connections/till/pending")
    assert page.status_code == 200, page.text
    assert (
        "3 rows in placed have no readable moment: orders.pickup_at holds a date-time with no"
        " offset (a timestamp without time zone, which a timestamptz cannot read): type it"
        ' "timestamp", "zone": "venue" in the manifest to read it on the venue\'s clock.'
    ) in page.text.replace("&#34;", '"').replace("&#39;", "'")
    assert "Every row in a timed move's state has a moment" not in page.text
    # The same to a German browser (the user and the connection have no language of their own).
    german = client.get("/connections/till/pending", headers={"Accept-Language": "de"}).text
    assert (
        "3 Zeilen in placed haben keinen lesbaren Zeitpunkt: orders.pickup_at enthält eine"
        " Datums- und Uhrzeitangabe ohne Zeitzonenversatz (ein timestamp without time zone, den"
        ' ein timestamptz nicht lesen kann): geben Sie im Manifest "timestamp", "zone": "venue"'
        " an, um ihn auf der Uhr des Betriebs zu lesen."
    ) in german.replace("&#34;", '"').replace("&#39;", "'")
