"""The OpenAPI 3.1 documents of /api and /public: one for every app, served at
/api/openapi.json, whose table paths take `{table}` and any values; and each app's own,
served at /api/apps/{connection}/{app}/openapi.json, with a path per table whose values,
keys and `after` are the JSON Schema of the models the server checks them with
(`web.api_models`, built from the manifest's columns), so the two cannot drift.

A test checks that every route of both blueprints is in it and that real answers fit
it; a schemathesis run (positive data accepted, negative refused) checks the rest.

Here the two views; `schemas` holds the shapes both documents share, `paths` the document of
every app, `tables` one app's own, path by table.
"""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from core.basics.errors import echo
from services.apps import app_store
from web.auth import require_user, roles_in
from web.context import lookup_app
from web.errors import NotFound
from web.openapi.paths import document
from web.openapi.tables import app_document

bp = Blueprint("openapi", __name__)


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
