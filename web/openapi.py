"""The OpenAPI 3.1 documents of /api and /public: one for every app, served at
/api/openapi.json, whose table paths take `{table}` and any values; and each app's own,
served at /api/apps/{connection}/{app}/openapi.json, with a path per table whose values,
keys and `after` are the JSON Schema of the models the server checks them with
(`web.api_models`, built from the manifest's columns), so the two cannot drift.

A test checks that every route of both blueprints is in it and that real answers fit
it; a schemathesis run (positive data accepted, negative refused) checks the rest.
"""

from __future__ import annotations

import copy
from typing import Any
from urllib.parse import quote

from flask import Blueprint, Response, jsonify
from pydantic import BaseModel

from core.errors import echo
from core.manifest.model import Table
from services.apps import app_store
from web.api import PAGE_MAX, PAGE_SIZE, Move, Update, Values
from web.api_models import Kind, key_schema, values_schema
from web.auth import require_user, roles_in
from web.context import lookup_app
from web.errors import NotFound
from web.public import PublicMove

bp = Blueprint("openapi", __name__)

JSON = "application/json"

_ANY_VALUE: dict[str, Any] = {
    "type": ["string", "number", "integer", "boolean", "null"],
    "description": "A column's value: times in ISO 8601 (instants in UTC), numerics as text.",
}
_KEY: dict[str, Any] = {"type": ["integer", "string"], "description": "The row's key."}
_ROW: dict[str, Any] = {"type": "object", "additionalProperties": _ANY_VALUE}
_VALUES: dict[str, Any] = {
    "type": "object",
    "additionalProperties": _ANY_VALUE,
    "description": "Values by column; timestamptz as ISO 8601 with an offset, dates YYYY-MM-DD. "
    "Each table's columns, as the server checks them, are in its app's own document.",
}
_TIME = {"type": "string", "format": "date-time"}
_MANIFEST: dict[str, Any] = {
    "type": "object",
    "description": "The app's whole new manifest, as `adminium app add CONN FILE --replace "
    "--preview` reads it (its JSON Schema: docs/manifest.schema.json), named as the app of "
    "the path. The manifest check runs first: a refusal is MANIFEST_REFUSED with "
    "`details.refusals`. Only a manager of the app (or an admin) may send one.",
}

SCHEMAS: dict[str, Any] = {
    "Row": _ROW,
    "Error": {
        "type": "object",
        "required": ["error"],
        "additionalProperties": False,
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message", "details"],
                "additionalProperties": False,
                "properties": {
                    "code": {"type": "string"},
                    "message": {"type": "string"},
                    "details": {"type": "object"},
                },
            }
        },
    },
    "PublicError": {
        "type": "object",
        "required": ["error"],
        "additionalProperties": False,
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message", "params"],
                "additionalProperties": False,
                "properties": {
                    "code": {"type": "string"},
                    "message": {"type": "string"},
                    "params": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {"from": _TIME, "at": _TIME},
                    },
                },
            }
        },
    },
    "Apps": {
        "type": "object",
        "required": ["apps"],
        "properties": {
            "apps": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["connection", "app", "roles", "tables"],
                    "properties": {
                        "connection": {"type": "string"},
                        "app": {"type": "string"},
                        "roles": {"type": "array", "items": {"type": "string"}},
                        "tables": {"type": "array", "items": {"type": "string"}},
                    },
                },
            }
        },
    },
    "Page": {
        "type": "object",
        "required": ["rows", "next"],
        "additionalProperties": False,
        "properties": {
            "rows": {"type": "array", "items": {"$ref": "#/components/schemas/Row"}},
            "next": {
                "type": ["integer", "string", "null"],
                "description": "The key to ask `after` for the next page; null on the last.",
            },
        },
    },
    "RowAnswer": {
        "type": "object",
        "required": ["key", "row"],
        "additionalProperties": False,
        "properties": {"key": _KEY, "row": {"$ref": "#/components/schemas/Row"}},
    },
    "WriteAnswer": {
        "type": "object",
        "required": ["key", "row", "late"],
        "additionalProperties": False,
        "properties": {
            "key": _KEY,
            "row": {"$ref": "#/components/schemas/Row"},
            "late": {"type": "boolean", "description": "The move was late (a flag rule)."},
        },
    },
    "PublicRow": {
        "type": "object",
        "required": ["row", "moves"],
        "additionalProperties": False,
        "properties": {
            "row": {"$ref": "#/components/schemas/Row"},
            "moves": {
                "type": "array",
                "items": {"type": "string"},
                "description": "The moves open to the guest now: listed from the row's "
                "state for `public`, inside their time, not turned away by a late rule.",
            },
        },
    },
    "Create": {
        "type": "object",
        "additionalProperties": False,
        "properties": {"values": _VALUES},
    },
    "Update": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "values": _VALUES,
            "from": {"type": ["string", "null"], "description": "The state the writer saw."},
        },
    },
    "Move": {
        "type": "object",
        "required": ["to"],
        "additionalProperties": False,
        "properties": {
            "to": {"type": "string"},
            "from": {
                "type": ["string", "null"],
                "description": "The state the writer saw; required for an undo.",
            },
            "values": _VALUES,
        },
    },
    "PublicMove": {
        "type": "object",
        "required": ["to"],
        "additionalProperties": False,
        "properties": {"to": {"type": "string"}, "values": _VALUES},
    },
    "PreviewRequest": {
        "type": "object",
        "additionalProperties": False,
        "oneOf": [{"required": ["set"]}, {"required": ["manifest"]}],
        "description": "Exactly one of `set` (new values) and `manifest` (a new manifest).",
        "properties": {
            "set": {
                "type": "array",
                "minItems": 1,
                "maxItems": 50,
                "items": {
                    "type": "object",
                    "required": ["table", "column"],
                    "additionalProperties": False,
                    "properties": {
                        "table": {"type": "string", "minLength": 1, "maxLength": 200},
                        "column": {"type": "string", "minLength": 1, "maxLength": 200},
                        "value": {
                            "type": ["string", "number", "integer", "boolean", "null"],
                            "description": "The new value, as the column takes it "
                            "(HH:MM text for a kept time).",
                        },
                        "key": {
                            "type": ["integer", "string", "null"],
                            "description": "The row's key; leave it out for a table's one "
                            "(settings) row.",
                        },
                    },
                },
            },
            "manifest": _MANIFEST,
            "at": {
                **_TIME,
                "description": "The instant to read the change at; the clock's by default.",
            },
        },
    },
    "Preview": {
        "type": "object",
        "required": ["at", "horizon_hours", "summary", "counts", "more", "changes"],
        "additionalProperties": False,
        "properties": {
            "at": _TIME,
            "horizon_hours": {"type": "integer"},
            "summary": {
                "type": "string",
                "description": "`3 rows due at once, 12 moments later, 0 earlier`.",
            },
            "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
            "more": {"type": "boolean", "description": "Some changes were left off the list."},
            "changes": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": [
                        "kind",
                        "app",
                        "table",
                        "key",
                        "what",
                        "effect",
                        "old",
                        "new",
                        "old_read",
                        "new_read",
                    ],
                    "additionalProperties": False,
                    "properties": {
                        "kind": {"enum": ["timed", "hold", "reminder"]},
                        "app": {"type": "string"},
                        "table": {"type": "string"},
                        "key": {"type": "string"},
                        "what": {"type": "string"},
                        "effect": {
                            "enum": [
                                "due-at-once",
                                "set-aside",
                                "no-longer-due",
                                "still-due",
                                "later",
                                "earlier",
                                "no-time",
                                "new-time",
                            ]
                        },
                        "old": {"type": ["string", "null"], "format": "date-time"},
                        "new": {"type": ["string", "null"], "format": "date-time"},
                        "old_read": {"type": "string"},
                        "new_read": {"type": "string"},
                    },
                },
            },
        },
    },
}

_WHEN = {
    400: "The body or a parameter is not in the documented shape (INVALID_REQUEST).",
    401: "No valid API token (UNAUTHORIZED).",
    403: "No role in the app, a move kept for other roles, or a column the database "
    "role may not write.",
    404: "No such app, table or row (NOT_FOUND).",
    405: "The path takes other methods (METHOD_NOT_ALLOWED).",
    409: "A move refused: not listed, outside its time, too late, locked, or a "
    "conflicting writer. See docs/errors.md.",
    413: "The body is over 1 MiB (REQUEST_TOO_LARGE).",
    422: "A value refused: its type, a constraint, or a column only Adminium writes.",
    502: "The database did not answer, or refused the request (DATABASE_REFUSED).",
}


def _path(name: str, about: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "schema": {"type": "string"},
        "description": about,
    }


_APP_PATH = [
    _path("connection", "The connection's name."),
    _path("app", "The app's name."),
    _path("table", "One of the app's tables."),
]
_KEY_PATH = _path("key", "The row's key.")
_CODE_PATH = _path("code", "The row's link code.")


def _answers(ok: int, schema: str, errors: list[int], error: str = "Error") -> dict[str, Any]:
    ref = {"$ref": f"#/components/schemas/{schema}"}
    done = {"description": "Done.", "content": {JSON: {"schema": ref}}}
    answers: dict[str, Any] = {str(ok): done}
    for status in [*errors, 405, 413, 502]:
        answers[str(status)] = {
            "description": _WHEN[status],
            "content": {JSON: {"schema": {"$ref": f"#/components/schemas/{error}"}}},
        }
    return answers


def _body(schema: str) -> dict[str, Any]:
    return {
        "required": True,
        "content": {JSON: {"schema": {"$ref": f"#/components/schemas/{schema}"}}},
    }


def _preview_answers() -> dict[str, Any]:
    """The preview's answers: a manifest's refusals and its manager-only rule besides."""
    answers = _answers(200, "Preview", [400, 401, 403, 404])
    answers["400"]["description"] = (
        _WHEN[400] + " Both or neither of `set` and `manifest` (INVALID_REQUEST); a manifest "
        "the check refuses (MANIFEST_REFUSED, `details.refusals`)."
    )
    answers["403"]["description"] = (
        "No role in the app (FORBIDDEN); a manifest sent by a user who is no manager of it."
    )
    answers["502"]["description"] = (
        _WHEN[502] + " A manifest whose new columns are not made yet cannot be read ahead."
    )
    return answers


_READ = [401, 403, 404]
_WRITE = [400, 401, 403, 404, 409, 422]
_PUBLIC_WRITE = [400, 403, 404, 409, 422]

PATHS: dict[str, Any] = {
    "/api/openapi.json": {
        "get": {
            "operationId": "openapi",
            "summary": "This document.",
            "security": [],
            "responses": {"200": {"description": "The OpenAPI document.", "content": {JSON: {}}}},
        }
    },
    "/api/apps/{connection}/{app}/openapi.json": {
        "parameters": _APP_PATH[:2],
        "get": {
            "operationId": "appOpenapi",
            "summary": "The app's own document: each table's values, keys and `after` as the "
            "server checks them.",
            "responses": {
                "200": {"description": "The app's OpenAPI document.", "content": {JSON: {}}},
                **{
                    str(status): {
                        "description": _WHEN[status],
                        "content": {JSON: {"schema": {"$ref": "#/components/schemas/Error"}}},
                    }
                    for status in (401, 403, 404, 405, 413, 502)
                },
            },
        },
    },
    "/api/apps": {
        "get": {
            "operationId": "listApps",
            "summary": "The apps the user holds a role in.",
            "responses": _answers(200, "Apps", [401]),
        }
    },
    "/api/apps/{connection}/{app}/tables/{table}/rows": {
        "parameters": _APP_PATH,
        "get": {
            "operationId": "listRows",
            "summary": "A page of rows by key.",
            "parameters": [
                {
                    "name": "limit",
                    "in": "query",
                    "schema": {"type": "integer", "minimum": 1, "maximum": 500, "default": 50},
                },
                {
                    "name": "after",
                    "in": "query",
                    "schema": {"type": "string"},
                    "description": "The `next` of the page before: a key of the table "
                    "(its type is in the app's own document).",
                },
            ],
            "responses": _answers(200, "Page", [400, *_READ]),
        },
        "post": {
            "operationId": "createRow",
            "summary": "Create a row; it lands in the table's initial state.",
            "requestBody": _body("Create"),
            "responses": _answers(201, "WriteAnswer", _WRITE),
        },
    },
    "/api/apps/{connection}/{app}/tables/{table}/rows/{key}": {
        "parameters": [*_APP_PATH, _KEY_PATH],
        "get": {
            "operationId": "readRow",
            "summary": "One row.",
            "responses": _answers(200, "RowAnswer", _READ),
        },
        "patch": {
            "operationId": "updateRow",
            "summary": "Change a row's values.",
            "requestBody": _body("Update"),
            "responses": _answers(200, "WriteAnswer", _WRITE),
        },
    },
    "/api/apps/{connection}/{app}/tables/{table}/rows/{key}/moves": {
        "parameters": [*_APP_PATH, _KEY_PATH],
        "post": {
            "operationId": "moveRow",
            "summary": "Make a listed move.",
            "requestBody": _body("Move"),
            "responses": _answers(200, "WriteAnswer", _WRITE),
        },
    },
    "/api/apps/{connection}/{app}/preview": {
        "parameters": _APP_PATH[:2],
        "post": {
            "operationId": "preview",
            "summary": "What the clock would do differently with these values saved (the "
            "settings row, an hours row), or with a new manifest of the app: rows due at "
            "once, moments earlier or later, reminders and holds. Nothing is saved.",
            "requestBody": _body("PreviewRequest"),
            "responses": _preview_answers(),
        },
    },
    "/public/{connection}/{app}/{table}/{code}": {
        "parameters": [*_APP_PATH, _CODE_PATH],
        "get": {
            "operationId": "readPublicRow",
            "summary": "The row's public fields and the moves open to the guest.",
            "security": [],
            "responses": _answers(200, "PublicRow", [404], "PublicError"),
        },
    },
    "/public/{connection}/{app}/{table}/{code}/moves": {
        "parameters": [*_APP_PATH, _CODE_PATH],
        "post": {
            "operationId": "movePublicRow",
            "summary": "Make a move open to the public.",
            "security": [],
            "requestBody": _body("PublicMove"),
            "responses": _answers(200, "PublicRow", _PUBLIC_WRITE, "PublicError"),
        },
    },
}


def document() -> dict[str, Any]:
    """The OpenAPI document of both APIs."""
    return _wrap(
        "Adminium",
        "Staff rows under /api (bearer token); guests by link code under /public. A table's "
        "values, keys and `after` are described exactly in its app's own document, "
        "/api/apps/{connection}/{app}/openapi.json. Errors are listed in docs/errors.md.",
        PATHS,
        SCHEMAS,
    )


def _wrap(title: str, about: str, paths: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": title, "version": "1", "description": about},
        "servers": [{"url": "/"}],
        "security": [{"token": []}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}},
        },
    }


# --- one app's document: generated from the models the server checks with ----------


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


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


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
    limit = {"type": "integer", "minimum": 1, "maximum": PAGE_MAX, "default": PAGE_SIZE}
    paths = {
        rows: {
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
                ],
                "responses": _answers(200, "Page", [400, *_READ]),
            },
            "post": {
                "operationId": f"{table}.createRow",
                "summary": f"Create a row of {table}; it lands in the table's initial state.",
                "requestBody": _body(f"{table}.Create"),
                "responses": _answers(201, "WriteAnswer", _WRITE),
            },
        },
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


@bp.get("/api/openapi.json")
def show() -> Response:
    """Serve the OpenAPI document."""
    return jsonify(document())


@bp.get("/api/apps/<connection>/<app>/openapi.json")
def show_app(connection: str, app: str) -> Response:
    """Serve an app's own document to a user holding a role in it."""
    user = require_user()
    found = lookup_app(connection, app)
    if found is None:
        raise NotFound(f"no app {echo(connection)}/{echo(app)}", {"connection": connection})
    roles_in(user, found)
    return jsonify(app_document(connection, app, app_store(found).app.tables))
