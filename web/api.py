"""The REST API for staff under /api: read an app's rows, create, update and move them.

Every write is `services.writes.write_by_person` as `Actor.person(email, roles)`, on the
clock this adapter reads; the operation publishes its events after the commit.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from flask import Blueprint, Response, jsonify, request
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import select
from sqlalchemy.exc import DBAPIError

from core.basics.actors import Actor
from core.basics.errors import AdminiumError, echo
from core.basics.json_rows import jsonable, row_json
from core.basics.values import checked_value, text_fault
from core.manifest.lookup import state_names
from core.manifest.model import Table
from core.preview.preview import Preview
from core.store.search import search_clause
from core.store.store import Store, uuid_text
from core.writes.pipeline import WriteResult
from services.models import ADMIN, App, Connection, User, db
from services.preview import (
    ValueChange,
    connection_zone,
    preview_json,
    preview_manifest,
    preview_values,
)
from services.storage import autocommit
from services.writes import write_by_person
from web import api_models
from web.api_models import INT_RANGE, Kind
from web.auth import require_user, roles_in
from web.context import cached_app, clock, lookup_app, publisher
from web.errors import Forbidden, InvalidRequest, NotFound, database_gone

log = logging.getLogger(__name__)

bp = Blueprint("api", __name__, url_prefix="/api")
bp.register_error_handler(DBAPIError, database_gone)

PAGE_SIZE = 50
PAGE_MAX = 500


# --- what the REST and public APIs share ----------------------------------------


def values_in(table: str, spec: Table, kind: Kind, raw: Mapping[str, Any]) -> dict[str, Any]:
    """A writer's JSON values checked by the table's model (`web.api_models`), which the
    OpenAPI document describes; names no field holds pass to the pipeline."""
    return api_models.values_in(table, spec, kind, dict(raw))


def parse_key(spec: Table, raw: str) -> Any:
    """A key from a URL as its column's type; None when no row could have it."""
    column = next(c for c in spec.columns if c.ref == spec.key)
    if column.type in ("serial", "integer"):
        digits = raw.removeprefix("-")
        if not digits.isascii() or not digits.isdigit() or len(digits) > 10:
            return None
        number = int(raw)
        return number if INT_RANGE[0] <= number <= INT_RANGE[1] else None
    if column.type == "numeric":
        return _numeric_key(raw)
    if column.type in ("text", "enum"):
        return raw if text_fault(raw) is None else None
    if column.type == "uuid":
        return uuid_text(raw)
    if column.type == "boolean":
        return {"true": True, "false": False}.get(raw)
    # A date or a time, read as a value of its column is (core.basics.values), else no row's.
    try:
        return checked_value(column.ref, column.type, raw)
    except AdminiumError:
        return None


def _numeric_key(raw: str) -> Decimal | None:
    try:
        number = Decimal(raw)
    except ArithmeticError:
        return None
    return number if number.is_finite() else None


def body_of(model: type[BaseModel]) -> Any:
    """The request's JSON body read into a pydantic model, or INVALID_REQUEST."""
    try:
        data = request.get_json(silent=True)
    except RecursionError:
        # Python's JSON reader gives up on nesting deeper than its recursion limit.
        raise InvalidRequest("the body nests too deep", {"errors": []}) from None
    if not isinstance(data, dict):
        raise InvalidRequest("send a JSON object", {"errors": []})
    try:
        return model.model_validate(data)
    except ValidationError as error:
        errors = [
            {"at": ".".join(str(p) for p in e["loc"]), "message": e["msg"]}
            for e in error.errors(include_url=False, include_context=False, include_input=False)
        ]
        message = "the body is not in the documented shape"
        raise InvalidRequest(message, {"errors": errors}) from None


def write_answer(result: WriteResult, status: int = 200) -> tuple[Response, int]:
    """A committed write's answer: the key, the row as written, and whether it was late."""
    body = {"key": jsonable(result.key), "row": row_json(result.row), "late": result.late}
    return jsonify(body), status


# --- staff requests ---------------------------------------------------------------


class Values(BaseModel):
    """A create: the new row's values."""

    model_config = ConfigDict(extra="forbid", strict=True)

    values: dict[str, Any] = Field(default_factory=dict)


class Update(BaseModel):
    """An update: the values, and optionally the state the writer saw."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    values: dict[str, Any] = Field(default_factory=dict)
    from_: str | None = Field(default=None, alias="from")


class Move(BaseModel):
    """A move: where to, the state the writer saw (needed for an undo), and values."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    to: str
    from_: str | None = Field(default=None, alias="from")
    values: dict[str, Any] = Field(default_factory=dict)


def _staff_table(connection: str, app_name: str, table: str) -> tuple[Store, Table, Actor]:
    """The app's store and table for the signed-in user, with the actor they write as (the
    user, the app and its store as the process's cache of the control plane holds them)."""
    user = require_user()
    app = cached_app(connection, app_name)
    if app is None:
        raise NotFound(f"no app {echo(connection)}/{echo(app_name)}", {"connection": connection})
    roles = roles_in(user, app)
    store = app.store
    if table not in store.app.tables:
        raise NotFound(f"the app has no table {echo(table)!r}", {"table": table})
    return store, store.spec(table), Actor.person(user.email, roles)


def _row_key(spec: Table, table: str, key: str) -> Any:
    parsed = parse_key(spec, key)
    if parsed is None:
        raise NotFound(f"no row {echo(key)!r} in {table}", {"table": table, "key": key})
    return parsed


@bp.get("/apps")
def list_apps() -> Response:
    """The apps the signed-in user holds a role in, with their tables."""
    user = require_user()
    apps = db.session.scalars(select(App).join(App.connection).order_by(Connection.name, App.name))
    listed = [
        {
            "connection": app.connection.name,
            "app": app.name,
            "roles": sorted(user.roles_in(app)),
            "tables": sorted(app.model.tables),
        }
        for app in apps
        if user.roles_in(app)
    ]
    return jsonify({"apps": listed})


ROWS = "/apps/<connection>/<app>/tables/<table>/rows"


LIST_PARAMETERS = ("limit", "after", "state", "q")
"""The query parameters the row list takes; any other is INVALID_REQUEST."""


def list_filters(table: str, t: sa.Table, spec: Table) -> list[sa.ColumnElement[bool]]:
    """The row list's `state` (repeatable: a row in any of them) and `q` (the board's
    search) as conditions; an unknown parameter, or a filter no row could match, is
    INVALID_REQUEST naming it."""
    for name in request.args:
        if name not in LIST_PARAMETERS:
            raise InvalidRequest(
                f"unknown query parameter {echo(name)!r}: the list takes"
                f" {', '.join(LIST_PARAMETERS)}",
                {"parameter": echo(name), "takes": list(LIST_PARAMETERS)},
            )
    found: list[sa.ColumnElement[bool]] = []
    states = request.args.getlist("state")
    if states:
        if spec.states is None:
            raise InvalidRequest(
                f"{table!r} keeps no states: leave out state", {"state": echo(states[0])}
            )
        known = state_names(spec)
        for state in states:
            if state not in known:
                listed = ", ".join(known)
                raise InvalidRequest(
                    f"the table has no state {echo(state)!r}: its states are {listed}",
                    {"state": echo(state)},
                )
        found.append(t.c[spec.states.column].in_(states))
    q = request.args.get("q", "").strip()
    if q:
        fault = text_fault(q)
        if fault is not None:
            raise InvalidRequest(f"the search holds {fault}", {"q": echo(q)})
        found.append(search_clause(t, spec, q))
    return found


@bp.get(ROWS)
def list_rows(connection: str, app: str, table: str) -> Response:
    """A page of the table's rows by key: `limit` rows after the key `after`, those in
    one of the `state`s and holding `q` when given."""
    store, spec, _ = _staff_table(connection, app, table)
    filters = list_filters(table, store.table(table), spec)
    limit = request.args.get("limit", str(PAGE_SIZE))
    # Digits only, and few of them: Python will not read a number of over 4,300 digits.
    readable = limit.isascii() and limit.isdigit() and len(limit) <= len(str(PAGE_MAX))
    if not readable or not 1 <= int(limit) <= PAGE_MAX:
        raise InvalidRequest(f"limit is a whole number from 1 to {PAGE_MAX}", {"limit": limit})
    t = store.table(table)
    key_column = t.c[spec.key]
    query = sa.select(t).where(*filters).order_by(key_column).limit(int(limit) + 1)
    after = request.args.get("after")
    if after is not None:
        after_key = parse_key(spec, after)
        if after_key is None:
            raise InvalidRequest("after is the key of a row", {"after": after})
        query = query.where(key_column > after_key)
    with store.engine.connect() as conn:
        rows = [dict(r) for r in conn.execute(query).mappings()]
    more = len(rows) > int(limit)
    rows = rows[: int(limit)]
    following = jsonable(rows[-1][spec.key]) if more else None
    return jsonify({"rows": [row_json(r) for r in rows], "next": following})


@bp.get(ROWS + "/<key>")
def read_row(connection: str, app: str, table: str, key: str) -> Response:
    """One row by its key."""
    store, spec, _ = _staff_table(connection, app, table)
    parsed = _row_key(spec, table, key)
    # One statement, autocommitted: no BEGIN and ROLLBACK round trips around it.
    with autocommit(store.engine).connect() as conn:
        row = store.read_row(conn, table, parsed)
    if row is None:
        raise NotFound(f"no row {echo(key)!r} in {table}", {"table": table, "key": key})
    return jsonify({"key": jsonable(row[spec.key]), "row": row_json(row)})


@bp.post(ROWS)
def create_row(connection: str, app: str, table: str) -> tuple[Response, int]:
    """Create a row; it lands in the table's initial state."""
    store, spec, actor = _staff_table(connection, app, table)
    body: Values = body_of(Values)
    result = write_by_person(
        store,
        table,
        actor=actor,
        clock=clock,
        publisher=publisher(),
        values=values_in(table, spec, "create", body.values),
    )
    return write_answer(result, 201)


@bp.patch(ROWS + "/<key>")
def update_row(connection: str, app: str, table: str, key: str) -> tuple[Response, int]:
    """Change a row's values (never its state: that takes a move)."""
    staff = _staff_table(connection, app, table)
    body: Update = body_of(Update)
    return _write_as_staff(staff, table, key, body.values, seen_state=body.from_)


@bp.post(ROWS + "/<key>/moves")
def move_row(connection: str, app: str, table: str, key: str) -> tuple[Response, int]:
    """Make a listed move; an undo names the state the writer saw in `from`."""
    staff = _staff_table(connection, app, table)
    body: Move = body_of(Move)
    return _write_as_staff(staff, table, key, body.values, move_to=body.to, seen_state=body.from_)


def _write_as_staff(
    staff: tuple[Store, Table, Actor],
    table: str,
    key: str,
    values: Mapping[str, Any],
    *,
    move_to: str | None = None,
    seen_state: str | None = None,
) -> tuple[Response, int]:
    """One staff write of an existing row through the pipeline, answered as JSON."""
    store, spec, actor = staff
    result = write_by_person(
        store,
        table,
        _row_key(spec, table, key),
        actor=actor,
        clock=clock,
        publisher=publisher(),
        values=values_in(table, spec, "update", values),
        move_to=move_to,
        seen_state=seen_state,
    )
    return write_answer(result)


# --- preview ----------------------------------------------------------------------


class PreviewSet(BaseModel):
    """One new value for a column of a row of the app's tables (`key` None: its one row)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    table: str = Field(min_length=1, max_length=200)
    column: str = Field(min_length=1, max_length=200)
    value: str | int | float | bool | None = None
    key: str | int | None = None


class PreviewRequest(BaseModel):
    """A preview: the new values (`set`) or the app's whole new manifest (`manifest`), one
    of the two, and the instant to read them at (the clock's by default)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    set: list[PreviewSet] | None = Field(default=None, min_length=1, max_length=50)
    manifest: dict[str, Any] | None = None
    at: str | None = None


MANIFEST_PREVIEWERS = frozenset({"manager", ADMIN})
"""The roles in an app that may preview a new manifest of it (it shows the rules)."""


@bp.post("/apps/<connection>/<app>/preview")
def preview_change(connection: str, app: str) -> Response:
    """What the clock would do differently with these values, or this manifest of the app,
    saved (nothing is saved)."""
    user = require_user()
    found = lookup_app(connection, app)
    if found is None:
        raise NotFound(f"no app {echo(connection)}/{echo(app)}", {"connection": connection})
    roles_in(user, found)
    body: PreviewRequest = body_of(PreviewRequest)
    given = sorted({"set", "manifest"} & body.model_fields_set)
    if len(given) != 1:
        raise InvalidRequest(
            "send `set` (new values) or `manifest` (the app's new manifest), exactly one "
            + ("of the two, not both" if given else "of the two"),
            {"errors": [{"at": name, "message": "one of set and manifest"} for name in given]},
        )
    now = clock()
    if body.at is not None:
        try:
            now = datetime.fromisoformat(body.at.upper())
        except ValueError:
            raise InvalidRequest("`at` is no ISO 8601 time", {"errors": []}) from None
        if now.utcoffset() is None:
            raise InvalidRequest("`at` carries its offset", {"errors": []})
    if body.manifest is not None:
        preview = _preview_manifest(user, found, body.manifest, now)
    elif body.set is not None:
        changes = [
            ValueChange(f"{app}.{item.table}", item.column, item.value, item.key)
            for item in body.set
        ]
        preview = preview_values(db.session, connection, changes, now=now)
    else:
        raise InvalidRequest(f"`{given[0]}` takes a value, not null", {"errors": []})
    answer = preview_json(preview, connection_zone(db.session, connection))
    db.session.rollback()
    return jsonify(answer)


def _preview_manifest(user: User, app: App, manifest: dict[str, Any], now: datetime) -> Preview:
    """A new manifest of the app previewed, for a manager of it (it shows the rules)."""
    if not MANIFEST_PREVIEWERS & user.roles_in(app):
        raise Forbidden(
            f"previewing a manifest of the app {app.name!r} takes the manager role",
            {"connection": app.connection.name, "app": app.name},
        )
    named = manifest.get("name")
    if isinstance(named, str) and named != app.name:
        raise InvalidRequest(
            f"the manifest is of the app {echo(named)!r}; this path previews {app.name!r}",
            {"errors": [{"at": "manifest.name", "message": f"the app's name, {app.name}"}]},
        )
    return preview_manifest(db.session, app.connection.name, manifest, now=now)
