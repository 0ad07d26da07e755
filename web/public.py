"""The public API under /public: a guest reaches one row by its link code, and nothing else.

A guest reads the row's public fields (columns marked `public: true`) and makes the moves
open to the public (moves whose `roles` list `public`), as `Actor.public()`. The moves a
guest is shown are those open now, judged as the write would judge them
(`core.rules.open_moves`). An unknown code and a renewed one get the same 404, which says
nothing more.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Blueprint, Response, jsonify
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.exc import DBAPIError

from core.basics.actors import Actor
from core.basics.errors import ColumnReadOnly
from core.basics.values import text_fault
from core.manifest.model import Table
from core.rules.open_moves import moves_open
from core.store.store import Row, Store
from services.apps import app_store
from services.writes import write_by_guest
from web.api import body_of, row_json, values_in
from web.context import clock, lookup_app, publisher
from web.errors import NotFound, database_gone

log = logging.getLogger(__name__)

bp = Blueprint("public", __name__, url_prefix="/public")
bp.register_error_handler(DBAPIError, database_gone)

ROW = "/<connection>/<app>/<table>/<code>"


class PublicMove(BaseModel):
    """A guest's move: where to, and values of the row's public fields."""

    model_config = ConfigDict(extra="forbid", strict=True)

    to: str
    values: dict[str, Any] = Field(default_factory=dict)


def public_columns(spec: Table) -> set[str]:
    """The columns a guest may read and send: those marked `public: true`."""
    return {c.ref for c in spec.columns if c.public}


def _find(connection: str, app_name: str, table: str, code: str) -> tuple[Store, Table, Row, str]:
    """The row this link code opens now; NOT_FOUND, saying nothing more, otherwise."""
    app = lookup_app(connection, app_name)
    store = app_store(app) if app is not None else None
    spec = store.app.tables.get(table) if store is not None else None
    if store is None or spec is None or text_fault(code) is not None:
        raise NotFound("nothing here")
    for column in spec.columns:
        rule = column.rules.code if column.rules is not None else None
        if rule is None or len(code) != rule.length:
            continue
        row = store.find_by_code(table, column.ref, code)
        if row is not None:
            return store, spec, row, column.ref
    raise NotFound("nothing here")


def _answer(store: Store, table: str, row: Row) -> Response:
    """The row's public fields and the moves a guest could make now."""
    moves = moves_open(store, table, row, Actor.public(), clock())
    return jsonify({"row": row_json(row, public_columns(store.spec(table))), "moves": moves})


@bp.get(ROW)
def read_row(connection: str, app: str, table: str, code: str) -> Response:
    """The row's public fields and the moves open to the guest now."""
    store, _, row, _ = _find(connection, app, table, code)
    return _answer(store, table, row)


@bp.post(ROW + "/moves")
def move_row(connection: str, app: str, table: str, code: str) -> Response:
    """Make a move open to the public, as the guest."""
    store, spec, row, code_column = _find(connection, app, table, code)
    body: PublicMove = body_of(PublicMove)
    hidden = sorted(set(body.values) - public_columns(spec))
    if hidden:
        raise ColumnReadOnly(
            "a guest sends only the row's public fields", {"columns": hidden, "reason": "public"}
        )
    result = write_by_guest(
        store,
        table,
        row[spec.key],
        code=(code_column, code),
        to=body.to,
        values=values_in(table, spec, "guest", body.values),
        clock=clock,
        publisher=publisher(),
    )
    return _answer(store, table, result.row)
