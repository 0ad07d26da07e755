"""The one table from an error's code to its HTTP status, and the JSON the APIs answer with.

Staff answers are `{"error": {"code", "message", "details"}}`; guest answers carry
`params` instead of `details`, and name only what the spec lets a guest know.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException

from core.errors import AdminiumError, PublicError

log = logging.getLogger(__name__)


class Unauthorized(AdminiumError):
    """No valid token (or session): the API does not know who asks."""

    code = "UNAUTHORIZED"
    status = 401


class Forbidden(AdminiumError):
    """The user holds no role in this app."""

    code = "FORBIDDEN"
    status = 403


class NotFound(AdminiumError):
    """No such app, table or row (for guests: no row for this link, and nothing more)."""

    code = "NOT_FOUND"
    status = 404


class InvalidRequest(AdminiumError):
    """The request's body or parameters are not in the shape the API documents."""

    code = "INVALID_REQUEST"
    status = 400


STATUSES: dict[str, int] = {
    # What a writer is told (the spec's tables).
    "STATE_MOVE_REFUSED": 409,
    "STATE_TOO_LATE": 409,
    "WRITE_CONFLICT": 409,
    "PUBLIC_TOO_EARLY": 409,
    "PUBLIC_TOO_LATE": 409,
    # The pipeline's own refusals.
    "STATE_MOVE_NOT_LISTED": 409,
    "STATE_CHANGED": 409,
    "STATE_UNDO_REFUSED": 409,
    "STATE_MOVE_FORBIDDEN": 403,
    "ROW_LOCKED": 409,
    "COLUMN_READ_ONLY": 422,
    "COLUMN_NOT_WRITABLE": 403,
    "VALUE_REFUSED": 422,
    "ROW_NOT_DUE": 409,
    # The APIs' own.
    "NOT_FOUND": 404,
    "UNAUTHORIZED": 401,
    "FORBIDDEN": 403,
    "INVALID_REQUEST": 400,
    "METHOD_NOT_ALLOWED": 405,
    "SERVER_ERROR": 500,
}
"""Every code an API answers with, and its status: the one table (docs/errors.md lists it)."""

PUBLIC_NOT_FOUND: dict[str, Any] = {
    "error": {"code": "NOT_FOUND", "message": "Nothing here.", "params": {}}
}
"""The guest's 404: the same body for an unknown code, a renewed one, or no such table."""


def status_of(error: AdminiumError) -> int:
    """The HTTP status of a refusal, from the table (the class's own for a code not in it)."""
    return STATUSES.get(error.code, error.status)


def staff_body(error: AdminiumError) -> dict[str, Any]:
    """A refusal as the REST API answers it."""
    return {"error": {"code": error.code, "message": error.message, "details": error.details}}


def public_body(error: AdminiumError) -> dict[str, Any]:
    """A refusal as the public API answers it: `params` only where the spec names them."""
    if error.code == "NOT_FOUND":
        return PUBLIC_NOT_FOUND
    params = error.params if isinstance(error, PublicError) else {}
    return {"error": {"code": error.code, "message": error.message, "params": params}}


def _is_public() -> bool:
    return request.path.startswith("/public/") or request.path == "/public"


def answer_error(error: AdminiumError) -> tuple[Response, int]:
    """The JSON answer for a refusal on either API."""
    body = public_body(error) if _is_public() else staff_body(error)
    return jsonify(body), status_of(error)


def _answer_http(error: HTTPException) -> tuple[Response, int] | HTTPException:
    """Werkzeug's own errors (no route, wrong method, bad JSON) as JSON under /api and /public."""
    if not (_is_public() or request.path.startswith("/api/")):
        return error
    status = error.code or 500
    code = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}.get(status, "INVALID_REQUEST")
    if status >= 500:
        code = "SERVER_ERROR"
    message = error.description or error.name
    if _is_public():
        body: dict[str, Any] = {"error": {"code": code, "message": message, "params": {}}}
        if status == 404:
            body = PUBLIC_NOT_FOUND
    else:
        body = {"error": {"code": code, "message": message, "details": {}}}
    response = jsonify(body)
    if status == 405 and error.valid_methods:
        response.headers["Allow"] = ", ".join(error.valid_methods)
    return response, status


def init_app(app: Flask) -> None:
    """Answer every refusal on the APIs as JSON with the status from the table."""
    app.register_error_handler(AdminiumError, answer_error)
    app.register_error_handler(HTTPException, _answer_http)
