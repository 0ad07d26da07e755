"""The document of every app: the paths of /api and /public, with `{table}` and any values.

Each path's answers are listed with the statuses it gives and what each means; one app's
own document (`web.openapi.tables`) builds its per-table paths from the same answers.
"""

from __future__ import annotations

from typing import Any

from web.openapi.schemas import SCHEMAS

JSON = "application/json"
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
    429: "Too many requests from this address (TOO_MANY_REQUESTS); `Retry-After` says "
    "when to try again.",
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
        "No role in the app (FORBIDDEN); a manifest sent by a user who is no manager of it, "
        "or one naming another schema than the app's or a table another app keeps."
    )
    answers["502"]["description"] = (
        _WHEN[502] + " A manifest whose new columns are not made yet cannot be read ahead."
    )
    return answers


_READ = [401, 403, 404]
_WRITE = [400, 401, 403, 404, 409, 422]
_PUBLIC_WRITE = [400, 403, 404, 409, 422, 429]

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
                {
                    "name": "state",
                    "in": "query",
                    "style": "form",
                    "explode": True,
                    "schema": {"type": "array", "items": {"type": "string"}},
                    "description": "Only rows in this state (one the table has); repeat it"
                    " for any of several (`?state=placed&state=ready`).",
                },
                {
                    "name": "q",
                    "in": "query",
                    "schema": {"type": "string"},
                    "description": "Only rows whose key or a text or enum column holds this"
                    " text (case-insensitive), as the board's search.",
                },
            ],
            "description": "Another query parameter than these is refused, `400"
            " INVALID_REQUEST` naming it (`details.parameter`); so is a state the table does"
            " not have, or a search holding a NUL.",
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
            "responses": _answers(200, "PublicRow", [404, 429], "PublicError"),
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
