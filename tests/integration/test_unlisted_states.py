"""A state the manifest does not list never makes a screen or the API answer 5xx.

The venue's own software writes states Adminium's manifest does not know: `voided` in
the orders table Adminium made (a varchar state column whose CHECK the venue dropped), and
in a tabs table the venue made itself with a PostgreSQL ENUM state. The board and the wall
show such a row in a column of its own, "Not in the manifest: voided"; the row page shows
the state and offers no move; the REST API returns the row with its raw state, in the list
and alone, and refuses a move from it with a code, not a 500.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from flask.testing import FlaskClient

from core.manifest.model import load_app
from core.store.store import Store
from services.apps import add_app
from services.models import db
from tests.integration.api_fixtures import Site, api_manifest, rows_path
from tests.integration.sweep_fixtures import SHOP, Shop
from web.screens.reading import read_board, read_row_view

TABS = {
    "key": "id",
    "columns": [
        {"ref": "id", "type": "serial"},
        {"ref": "status", "type": "enum", "values": ["open", "paid"]},
        {"ref": "total", "type": "numeric", "nullable": True},
    ],
    "states": {"column": "status", "initial": "open", "moves": {"open": ["paid"]}},
}
"""The venue's own tabs table, as the manifest describes it: it knows open and paid."""
NOW = datetime(2026, 3, 6, 12, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Rows:
    order: int
    """An order the venue's software set to `voided`: a varchar state."""
    tab: int
    """A tab it set to `voided`: a PostgreSQL ENUM state."""
    open_tab: int
    """A tab in a state the manifest lists."""


@pytest.fixture(scope="module")
def rows(screens_site: Site) -> Rows:
    store = screens_site.store()
    with store.engine.begin() as conn:
        conn.execute(sa.text("ALTER TABLE public.orders DROP CONSTRAINT ck_orders_status"))
        conn.execute(sa.text("CREATE TYPE public.tab_state AS ENUM ('open', 'paid', 'voided')"))
        conn.execute(
            sa.text(
                "CREATE TABLE public.tabs (id serial PRIMARY KEY,"
                " status public.tab_state NOT NULL DEFAULT 'open', total numeric)"
            )
        )
        tab, open_tab = (
            conn.execute(
                sa.text(f"INSERT INTO public.tabs (status) VALUES ('{state}') RETURNING id")
            ).scalar_one()
            for state in ("voided", "open")
        )
    manifest = copy.deepcopy(api_manifest())
    manifest["tables"]["tabs"] = TABS
    with screens_site.app.app_context():
        add_app(db.session, "venue", manifest, replace=True)
    pickup = screens_site.clock.now + timedelta(hours=2)
    order = screens_site.insert("orders", status="voided", pickup_at=pickup)
    return Rows(int(order), int(tab), int(open_tab))


@pytest.fixture
def manager(signed_in: Callable[[str], FlaskClient]) -> FlaskClient:
    return signed_in("manager")


def cases(found: Rows) -> list[tuple[str, int]]:
    """(table, key) of each row in an unlisted state: varchar, then PostgreSQL ENUM."""
    return [("orders", found.order), ("tabs", found.tab)]


@pytest.mark.parametrize("screen", ["", "/wall", "/columns"], ids=["board", "wall", "columns"])
def test_the_board_and_the_wall_show_an_unlisted_state_in_a_column_of_its_own(
    rows: Rows, manager: FlaskClient, screen: str
) -> None:
    for table, key in cases(rows):
        page = manager.get(f"/apps/venue/venue/{table}{screen}")
        assert page.status_code == 200, (table, page.text[:300])
        column = page.text.split('data-state="voided"', 1)
        assert len(column) == 2, f"{table}: no column for voided"
        assert "Not in the manifest: voided" in column[1]
        assert f'id="row-{table}-{key}"' in column[1]
        assert f'id="column-{table}-voided"' in column[1]
    # The listed states keep their columns: the open tab is in open's.
    board = manager.get(f"/apps/venue/venue/tabs{screen}").text
    open_column = board.split('data-state="open"', 1)[1].split('data-state="', 1)[0]
    assert f'id="row-tabs-{rows.open_tab}"' in open_column


def test_the_row_page_shows_an_unlisted_state_and_offers_no_move(
    rows: Rows, manager: FlaskClient
) -> None:
    for table, key in cases(rows):
        page = manager.get(f"/apps/venue/venue/{table}/{key}")
        assert page.status_code == 200, (table, page.text[:300])
        assert '<span class="badge state-voided">voided</span>' in page.text
        assert '<span class="badge unlisted">not in the manifest</span>' in page.text
        assert "The manifest does not list the state voided, so no move leaves it here" in page.text
        assert "/move" not in page.text
    listed = manager.get(f"/apps/venue/venue/tabs/{rows.open_tab}").text
    assert "not in the manifest" not in listed
    assert "Move to Paid" in listed


def test_the_api_returns_a_row_in_an_unlisted_state_with_its_raw_state(
    screens_site: Site, rows: Rows
) -> None:
    headers = screens_site.headers("manager")
    for table, key in cases(rows):
        listed = screens_site.client.get(rows_path(table), headers=headers)
        assert listed.status_code == 200, listed.text
        states = {row["id"]: row["status"] for row in listed.get_json()["rows"]}
        assert states[key] == "voided"
        one = screens_site.client.get(rows_path(table, key), headers=headers)
        assert one.status_code == 200, one.text
        assert one.get_json()["row"]["status"] == "voided"


def test_a_move_from_an_unlisted_state_is_refused_with_a_code(
    screens_site: Site, rows: Rows
) -> None:
    headers = screens_site.headers("manager")
    for table, key in cases(rows):
        to = "cancelled" if table == "orders" else "paid"
        answer = screens_site.client.post(
            rows_path(table, key) + "/moves", headers=headers, json={"to": to}
        )
        assert answer.status_code == 409, answer.text
        assert answer.get_json()["error"]["code"] == "STATE_MOVE_NOT_LISTED"
        assert (
            screens_site.client.get(rows_path(table, key), headers=headers).get_json()["row"][
                "status"
            ]
            == "voided"
        )


def test_a_value_a_replace_renamed_is_shown_as_unlisted_and_the_sweep_goes_on(shop: Shop) -> None:
    done = shop.insert("orders", status="done", due_at=None)
    due = shop.order(NOW - timedelta(minutes=5))
    # A replace renamed done to collected; the table (and the row) still say done.
    renamed = copy.deepcopy(SHOP)
    orders = renamed["tables"]["orders"]
    orders["columns"][1]["values"] = ["placed", "cancelled", "collected"]
    orders["states"]["moves"]["placed"][0] = "collected"
    store = Store(shop.engine, load_app(renamed), shop.store.zone, connection="shop")
    board = read_board(store, "orders")
    assert board.others == ("done",)
    assert not board.listed("done") and board.listed("collected")
    assert [card.key for card in board.columns["done"]] == [done]
    view = read_row_view(store, "orders", done, frozenset({"manager"}))
    assert view is not None
    assert (view.card.state, view.listed, view.moves) == ("done", False, ())
    report = shop.sweep(NOW, store)
    assert [d.key for d in report.moved] == [due]
    assert shop.status(done) == "done"
