"""The OpenAPI 3.1 document of /api and /public, built here and served at /api/openapi.json.

A test checks that every route of both blueprints is in it and that real answers fit
it; a schemathesis run checks the rest.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify

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
    "description": "Values by column; timestamptz as ISO 8601 with an offset, dates YYYY-MM-DD.",
}
_TIME = {"type": "string", "format": "date-time"}

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
                    "description": "The `next` of the page before.",
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
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Adminium",
            "version": "1",
            "description": "Staff rows under /api (bearer token); guests by link code under "
            "/public. Errors are listed in docs/errors.md.",
        },
        "servers": [{"url": "/"}],
        "security": [{"token": []}],
        "paths": PATHS,
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}},
        },
    }


@bp.get("/api/openapi.json")
def show() -> Response:
    """Serve the OpenAPI document."""
    return jsonify(document())
