"""The one table from an error's code to its HTTP status, and the JSON the APIs answer with.

Staff answers are `{"error": {"code", "message", "details"}}`; guest answers carry
`params` instead of `details`, and name only what the spec lets a guest know: a guest's
message is the code's own sentence (or a time refusal's), never the refusal's words,
which may hold a column, a constraint or the database's own text.
"""

from __future__ import annotations

import io
import logging
from typing import Any
from urllib.parse import quote

from flask import Flask, Response, current_app, jsonify, request
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge, RequestURITooLarge

from core.basics.errors import AdminiumError, PublicError, echo
from services.errors import DatabaseRefused, first_line

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
    "LIMIT_REACHED": 409,
    "LIMIT_BUSY": 409,
    "LEDGER_BUSY": 409,
    "LEDGER_CAP": 409,
    # The APIs' own.
    "NOT_FOUND": 404,
    "UNAUTHORIZED": 401,
    "FORBIDDEN": 403,
    "INVALID_REQUEST": 400,
    "METHOD_NOT_ALLOWED": 405,
    "REQUEST_TOO_LARGE": 413,
    "TOO_MANY_REQUESTS": 429,
    "DATABASE_REFUSED": 502,
    "SERVER_ERROR": 500,
    # The control plane's and sample data's (the console prints them; their status is here).
    "CONTROL_PLANE_REFUSED": 400,
    "ALREADY_EXISTS": 409,
    "INVALID_VALUE": 400,
    "MANIFEST_REFUSED": 400,
    "TABLES_DISAGREE": 409,
    "SAMPLE_REFUSED": 422,
    # The console's own finding: `adminium ledger` found an account's balance off its entries.
    "LEDGER_UNBALANCED": 409,
}
"""Every code Adminium answers with, and its status: the one table (docs/errors.md lists it)."""
TOO_MANY = "TOO_MANY_REQUESTS"
"""The code of a guest's request past the public API's rate (web/throttle.py)."""

PUBLIC_NOT_FOUND: dict[str, Any] = {
    "error": {"code": "NOT_FOUND", "message": "Nothing here.", "params": {}}
}
"""The guest's 404: the same body for an unknown code, a renewed one, or no such table."""

PUBLIC_MESSAGES: dict[str, str] = {
    "STATE_MOVE_NOT_LISTED": "This move is not open from here.",
    "STATE_MOVE_FORBIDDEN": "This move is not open to the public.",
    "STATE_MOVE_REFUSED": "This move is not open now.",
    "STATE_UNDO_REFUSED": "This move is not open to the public.",
    "WRITE_CONFLICT": "Someone else is changing this now; try again.",
    "ROW_LOCKED": "This can no longer change.",
    "COLUMN_READ_ONLY": "A guest sends only the fields shown.",
    "COLUMN_NOT_WRITABLE": "This cannot be changed here.",
    "VALUE_REFUSED": "A value was refused.",
    "LIMIT_REACHED": "This is full.",
    "LIMIT_BUSY": "Many are asking at once; try again.",
    "LEDGER_BUSY": "Someone else is changing this now; try again.",
    "LEDGER_CAP": "This payment cannot be made.",
    "INVALID_REQUEST": "The request is not in the documented shape.",
    "METHOD_NOT_ALLOWED": "This address takes another method.",
    "REQUEST_TOO_LARGE": "The request is too large.",
    "TOO_MANY_REQUESTS": "Too many requests from here; try again in a minute.",
    "DATABASE_REFUSED": "This cannot be answered now; try again later.",
    "SERVER_ERROR": "Something went wrong on our side.",
}
"""What a guest is told for each code besides the time refusals' own sentences."""


def status_of(error: AdminiumError) -> int:
    """The HTTP status of a refusal, from the table (the class's own for a code not in it)."""
    return STATUSES.get(error.code, error.status)


def _cut(value: Any) -> Any:
    """Every text inside a refusal's details cut as an echo is (see core.basics.errors.echo)."""
    if isinstance(value, str):
        return echo(value)
    if isinstance(value, dict):
        return {echo(k): _cut(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_cut(v) for v in value]
    return value


def staff_body(error: AdminiumError) -> dict[str, Any]:
    """A refusal as the REST API answers it; no text of its details runs past an echo."""
    details = _cut(error.details)
    return {"error": {"code": error.code, "message": error.message, "details": details}}


def guest_error(code: str, message: str | None = None, params: Any = None) -> dict[str, Any]:
    """A refusal as a guest is told it: the code, our own sentence, `params` or none."""
    sentence = message or PUBLIC_MESSAGES.get(code, "The request was refused.")
    return {"error": {"code": code, "message": sentence, "params": params or {}}}


def public_body(error: AdminiumError) -> dict[str, Any]:
    """A refusal as the public API answers it: `params` only where the spec names them."""
    if error.code == "NOT_FOUND":
        return PUBLIC_NOT_FOUND
    if isinstance(error, PublicError):
        return guest_error(error.code, error.message, error.params)
    return guest_error(error.code)


def _is_public() -> bool:
    return request.path.startswith("/public/") or request.path == "/public"


def answer_error(error: AdminiumError) -> tuple[Response, int]:
    """The JSON answer for a refusal on either API."""
    body = public_body(error) if _is_public() else staff_body(error)
    return jsonify(body), status_of(error)


HTTP_CODES = {
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: "REQUEST_TOO_LARGE",
    414: "REQUEST_TOO_LARGE",
}
"""Werkzeug's own errors by status, as the APIs' codes (any other 4xx: INVALID_REQUEST)."""

URL_MAX = 4096
"""The longest URL (path and query, as sent) answered (config URL_MAX); a longer one is
414 REQUEST_TOO_LARGE. The Procfile's gunicorn lets request lines up to its own cap (8190
bytes) through, so the API answers its own JSON for them; past the cap the Procfile's
worker class (adminium/web_worker.py) answers the same."""


def _url_sent() -> str:
    """The request's target as the client sent it (gunicorn's RAW_URI), else rebuilt."""
    environ = request.environ
    raw = environ.get("RAW_URI") or environ.get("REQUEST_URI")
    if isinstance(raw, str):
        return raw
    query = environ.get("QUERY_STRING", "")
    path = quote(environ.get("PATH_INFO", ""), safe="/:@!$&'()*+,;=-._~%")
    return f"{path}?{query}" if query else path


def within_limits() -> None:
    """Before anything reads the request: a URL over URL_MAX is 414, a body over
    MAX_CONTENT_LENGTH is 413, a chunked one (no Content-Length) too.

    Werkzeug stops a chunked body at the cap without a word, so a body cut short was read
    as bad JSON (400); here it is read up to one byte past the cap and kept, in full, for
    the request, or refused whole.
    """
    longest = current_app.config.get("URL_MAX", URL_MAX)
    if len(_url_sent()) > longest:
        raise RequestURITooLarge(f"the URL is longer than {longest} bytes")
    environ = request.environ
    limit = current_app.config.get("MAX_CONTENT_LENGTH")
    chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
    if limit is None or environ.get("CONTENT_LENGTH") or not chunked:
        return
    stream = environ["wsgi.input"]
    body = bytearray()
    while len(body) <= limit:
        piece = stream.read(limit + 1 - len(body))
        if not piece:
            break
        body += piece
    if len(body) > limit:
        raise RequestEntityTooLarge(f"the body is larger than {limit} bytes")
    environ["wsgi.input"] = io.BytesIO(bytes(body))
    environ["CONTENT_LENGTH"] = str(len(body))


def database_gone(error: DBAPIError) -> tuple[Response, int]:
    """A venue's (or Adminium's own) database that did not answer, as DATABASE_REFUSED."""
    log.warning("%s %s: database error %s", request.method, request.path, first_line(error))
    gone = isinstance(error, OperationalError | InterfaceError)
    what = "did not answer" if gone else "refused the request"
    return answer_error(DatabaseRefused(f"the database {what}: {first_line(error)}"))


def _answer_http(error: HTTPException) -> tuple[Response, int] | HTTPException:
    """Werkzeug's own errors (no route, wrong method, bad JSON) as JSON under /api and /public."""
    if not (_is_public() or request.path.startswith("/api/")):
        return error
    status = error.code or 500
    code = HTTP_CODES.get(status, "INVALID_REQUEST")
    if status >= 500:
        code = "SERVER_ERROR"
    message = error.description or error.name
    if _is_public():
        body = PUBLIC_NOT_FOUND if status == 404 else guest_error(code)
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
    # First of every hook: nothing may read the body before its size is judged.
    app.before_request_funcs.setdefault(None, []).insert(0, within_limits)
