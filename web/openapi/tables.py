"""One app's own document: a path per table, generated from the models the server checks
with (`web.api_models`, built from the manifest's columns), so the two cannot drift.
"""

from __future__ import annotations

import copy
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel

from core.manifest.lookup import state_names
from core.manifest.model import Table
from web.api import PAGE_MAX, PAGE_SIZE, Move, Update, Values
from web.api_models import NO_NUL, Kind, key_schema, values_schema
from web.openapi.paths import _PUBLIC_WRITE, _READ, _WRITE, PATHS, _answers, _body, _wrap
from web.openapi.schemas import _MANIFEST, SCHEMAS
from web.public import PublicMove


def _body_of(model: type[BaseModel], values: dict[str, Any]) -> dict[str, Any]:
    """A request body's schema: the server's body model, its `values` the table's model."""
    schema = model.model_json_schema(by_alias=True)
    schema.pop("title", None)
    properties = schema["properties"]
    for name, field in properties.items():
        field.pop("title", None)
        if name == "values":
            properties[name] = values
    if values.get("required"):
        schema["required"] = sorted({*schema.get("required", []), "values"})
    return schema


def _key_param(spec: Table) -> dict[str, Any]:
    return {
        "name": "key",
        "in": "path",
        "required": True,
        "schema": key_schema(spec),
        "description": f"The row's key ({spec.key}).",
    }


def _table_paths(base: str, table: str, spec: Table) -> tuple[dict[str, Any], dict[str, Any]]:
    """One table's staff paths and the schemas they name."""

    def values(kind: Kind) -> dict[str, Any]:
        return values_schema(table, spec, kind)

    schemas = {
        f"{table}.Create": _body_of(Values, values("create")),
        f"{table}.Update": _body_of(Update, values("update")),
        f"{table}.Move": _body_of(Move, values("update")),
    }
    rows = f"{base}/tables/{table}/rows"
    paths = {
        rows: _rows_operations(table, spec),
        rows + "/{key}": {
            "parameters": [_key_param(spec)],
            "get": {
                "operationId": f"{table}.readRow",
                "summary": f"One row of {table}.",
                "responses": _answers(200, "RowAnswer", _READ),
            },
            "patch": {
                "operationId": f"{table}.updateRow",
                "summary": f"Change a row of {table}.",
                "requestBody": _body(f"{table}.Update"),
                "responses": _answers(200, "WriteAnswer", _WRITE),
            },
        },
    }
    if spec.states is not None:
        paths[rows + "/{key}/moves"] = {
            "parameters": [_key_param(spec)],
            "post": {
                "operationId": f"{table}.moveRow",
                "summary": f"Make a listed move of {table}.",
                "requestBody": _body(f"{table}.Move"),
                "responses": _answers(200, "WriteAnswer", _WRITE),
            },
        }
    return paths, schemas


LIST_WORDS = (
    "Another query parameter than these is refused, `400 INVALID_REQUEST` naming it"
    " (`details.parameter`); so is a state the table does not have, or a search holding"
    " a NUL."
)
SEARCH = {
    "name": "q",
    "in": "query",
    "schema": {"type": "string", "pattern": NO_NUL},
    "description": "Only rows whose key or a text or enum column holds this text"
    " (case-insensitive), as the board's search.",
}


def _filters(spec: Table) -> list[dict[str, Any]]:
    """The list's filters: `state` (repeatable) on a table with states, and `q`."""
    if spec.states is None:
        return [SEARCH]
    state = {
        "name": "state",
        "in": "query",
        "style": "form",
        "explode": True,
        "schema": {"type": "array", "items": {"enum": state_names(spec)}},
        "description": "Only rows in this state; repeat it for any of several"
        " (`?state=placed&state=ready`).",
    }
    return [state, SEARCH]


def _rows_operations(table: str, spec: Table) -> dict[str, Any]:
    """A table's rows path: a page of them by key, and a create."""
    limit = {"type": "integer", "minimum": 1, "maximum": PAGE_MAX, "default": PAGE_SIZE}
    return {
        "get": {
            "operationId": f"{table}.listRows",
            "summary": f"A page of {table} by key.",
            "parameters": [
                {"name": "limit", "in": "query", "schema": limit},
                {
                    "name": "after",
                    "in": "query",
                    "schema": key_schema(spec),
                    "description": "The `next` of the page before: a key of the table.",
                },
                *_filters(spec),
            ],
            "description": LIST_WORDS,
            "responses": _answers(200, "Page", [400, *_READ]),
        },
        "post": {
            "operationId": f"{table}.createRow",
            "summary": f"Create a row of {table}; it lands in the table's initial state.",
            "requestBody": _body(f"{table}.Create"),
            "responses": _answers(201, "WriteAnswer", _WRITE),
        },
    }


def _public_paths(base: str, table: str, spec: Table) -> tuple[dict[str, Any], dict[str, Any]]:
    """A table's guest paths (when a code column opens its rows) and their schemas."""
    lengths = sorted(
        {c.rules.code.length for c in spec.columns if c.rules is not None and c.rules.code}
    )
    if not lengths:
        return {}, {}
    code = {
        "name": "code",
        "in": "path",
        "required": True,
        "schema": {"type": "string"},
        "description": "The row's link code ("
        + " or ".join(f"{n} characters" for n in lengths)
        + ").",
    }
    row = f"{base}/{table}/{{code}}"
    paths: dict[str, Any] = {
        row: {
            "parameters": [code],
            "get": {
                "operationId": f"{table}.readPublicRow",
                "summary": f"The {table} row's public fields and the moves open to the guest.",
                "security": [],
                "responses": _answers(200, "PublicRow", [404], "PublicError"),
            },
        }
    }
    schemas: dict[str, Any] = {}
    if spec.states is not None:
        schemas[f"{table}.PublicMove"] = _body_of(PublicMove, values_schema(table, spec, "guest"))
        paths[row + "/moves"] = {
            "parameters": [code],
            "post": {
                "operationId": f"{table}.movePublicRow",
                "summary": f"Make a move of {table} open to the public.",
                "security": [],
                "requestBody": _body(f"{table}.PublicMove"),
                "responses": _answers(200, "PublicRow", _PUBLIC_WRITE, "PublicError"),
            },
        }
    return paths, schemas


def _preview_request(app: str) -> dict[str, Any]:
    """The preview's body in one app's document: a manifest named as the app."""
    request: dict[str, Any] = copy.deepcopy(SCHEMAS["PreviewRequest"])
    request["properties"]["manifest"] = {
        **_MANIFEST,
        "required": ["name"],
        "properties": {"name": {"const": app}},
    }
    return request


def app_document(connection: str, app: str, tables: dict[str, Table]) -> dict[str, Any]:
    """One app's document: a path per table, its values and keys as the server checks them."""
    staff = f"/api/apps/{quote(connection, safe='')}/{quote(app, safe='')}"
    public = f"/public/{quote(connection, safe='')}/{quote(app, safe='')}"
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {
        name: SCHEMAS[name]
        for name in (
            "Row",
            "Error",
            "PublicError",
            "Page",
            "RowAnswer",
            "WriteAnswer",
            "PublicRow",
            "PreviewRequest",
            "Preview",
        )
    }
    paths[f"{staff}/preview"] = {"post": PATHS["/api/apps/{connection}/{app}/preview"]["post"]}
    schemas["PreviewRequest"] = _preview_request(app)
    for table, spec in sorted(tables.items()):
        for found_paths, found_schemas in (
            _table_paths(staff, table, spec),
            _public_paths(public, table, spec),
        ):
            paths.update(found_paths)
            schemas.update(found_schemas)
    about = (
        f"The tables of the app {app} on the connection {connection}: each table's values, "
        "keys and `after` as the server checks them, generated from the manifest's columns. "
        "A column that references another table takes the key of a row that exists "
        "(VALUE_REFUSED foreign-key otherwise). Errors are listed in docs/errors.md."
    )
    return _wrap(f"Adminium: {connection}/{app}", about, paths, schemas)
