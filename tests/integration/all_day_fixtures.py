"""The venue's orders with lines (`order_lines`: an item, a quantity, voided or not) and an
`all_day` on the orders board, for the all-day strip's tests."""

from __future__ import annotations

from typing import Any

from services.apps import add_app
from services.models import App, db
from tests.integration.api_fixtures import Site

LINES_TABLE = (
    "CREATE TABLE public.order_lines (id serial PRIMARY KEY,"
    " order_id integer NOT NULL REFERENCES public.orders (id),"
    " item text NOT NULL, qty integer NOT NULL DEFAULT 1, voided boolean NOT NULL DEFAULT false)"
)
LINES: dict[str, Any] = {
    "key": "id",
    "columns": [
        {"ref": "id", "type": "serial"},
        {"ref": "order_id", "type": "integer", "references": "orders"},
        {"ref": "item", "type": "text"},
        {"ref": "qty", "type": "integer", "default": 1},
        {"ref": "voided", "type": "boolean", "default": False},
    ],
}
ALL_DAY: dict[str, Any] = {
    "table": "order_lines",
    "via": "order_id",
    "count": "item",
    "quantity": "qty",
    "where": {"column": "voided", "values": [False]},
}


def add_lines(site: Site, all_day: dict[str, Any] | None = ALL_DAY) -> None:
    """The lines table in the venue's database and its manifest, the orders board adding
    them up (`all_day`)."""
    with site.store().engine.begin() as conn:
        conn.exec_driver_sql(LINES_TABLE)
    save_all_day(site, all_day, lines=True)


def save_all_day(site: Site, all_day: dict[str, Any] | None, lines: bool = False) -> None:
    """The venue app saved again with the orders board's `all_day` (None: none)."""
    with site.app.app_context():
        app = db.session.execute(db.select(App).filter_by(name="venue")).scalar_one()
        manifest = dict(app.manifest)
        tables = dict(manifest["tables"])
        if lines:
            tables["order_lines"] = LINES
        board = {k: v for k, v in (tables["orders"].get("board") or {}).items() if k != "all_day"}
        if all_day is not None:
            board["all_day"] = all_day
        tables["orders"] = {**tables["orders"], "board": board}
        add_app(db.session, "venue", {**manifest, "tables": tables}, replace=True)


def line(site: Site, order: int, item: str, qty: int = 1, voided: bool = False) -> int:
    """A line of an order, straight into the venue's database."""
    return int(site.insert("order_lines", order_id=order, item=item, qty=qty, voided=voided))
