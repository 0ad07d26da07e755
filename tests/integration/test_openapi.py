"""The OpenAPI document stays true: valid OpenAPI 3.1, every route in it, real answers fit it."""

from __future__ import annotations

import re
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate as validate_openapi

from tests.integration.api_fixtures import Site, rows_path
from tests.integration.pipeline_fixtures import at
from web import create_app
from web.openapi import document

pytestmark = pytest.mark.integration

METHODS = {"get", "post", "patch", "put", "delete"}


def test_the_document_is_valid_openapi_3_1() -> None:
    validate_openapi(document())


def test_the_document_is_served_at_api_openapi_json() -> None:
    answer = create_app().test_client().get("/api/openapi.json")
    assert (answer.status_code, answer.json) == (200, document())


def routes() -> set[tuple[str, str]]:
    """Every (path, method) the web serves under /api and /public, in OpenAPI's path form."""
    found: set[tuple[str, str]] = set()
    for rule in create_app().url_map.iter_rules():
        if not rule.rule.startswith(("/api/", "/public/")):
            continue
        path = re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", rule.rule)
        found.update((path, m.lower()) for m in rule.methods or () if m.lower() in METHODS)
    return found


def test_every_route_is_documented_and_every_operation_served() -> None:
    documented = {
        (path, method)
        for path, item in document()["paths"].items()
        for method in item
        if method in METHODS
    }
    assert routes() == documented


def fits(path: str, method: str, status: int, body: Any) -> None:
    """Assert an answer's body fits the document's schema for that operation and status."""
    doc = document()
    response = doc["paths"][path][method]["responses"][str(status)]
    schema = {
        **response["content"]["application/json"]["schema"],
        **{"components": doc["components"]},
    }
    errors = sorted(Draft202012Validator(schema).iter_errors(body), key=str)
    assert not errors, [e.message for e in errors]


ROWS = "/api/apps/{connection}/{app}/tables/{table}/rows"


def test_real_answers_fit_the_document(site: Site) -> None:
    staff = site.headers("staff")
    key = site.insert("orders", status="placed", pickup_at=at("2026-07-10 11:30"))
    event = site.insert("events", doors_at=at("2026-07-10 18:00"))
    site.insert("tickets", event_id=event, status="valid", link_token="tk-0123456789abc")
    client = site.client
    cases: list[tuple[str, str, Any]] = [
        ("/api/apps", "get", client.get("/api/apps", headers=staff)),
        ("/api/apps", "get", client.get("/api/apps")),
        (ROWS, "get", client.get(rows_path("orders") + "?limit=1", headers=staff)),
        (ROWS, "get", client.get(rows_path("orders"), headers=site.headers("clerk"))),
        (ROWS, "post", client.post(rows_path("orders"), json={"values": {}}, headers=staff)),
        (
            ROWS,
            "post",
            client.post(
                rows_path("orders"),
                json={"values": {"pickup_at": "2026-07-10T12:00:00Z"}},
                headers=staff,
            ),
        ),
        (ROWS + "/{key}", "get", client.get(rows_path("orders", key), headers=staff)),
        (ROWS + "/{key}", "get", client.get(rows_path("orders", 999), headers=staff)),
        (
            ROWS + "/{key}",
            "patch",
            client.patch(rows_path("orders", key), json={"nope": 1}, headers=staff),
        ),
        (
            ROWS + "/{key}/moves",
            "post",
            client.post(rows_path("orders", key) + "/moves", json={"to": "ready"}, headers=staff),
        ),
        (
            ROWS + "/{key}/moves",
            "post",
            client.post(
                rows_path("orders", key) + "/moves", json={"to": "confirmed"}, headers=staff
            ),
        ),
        (
            "/public/{connection}/{app}/{table}/{code}",
            "get",
            client.get("/public/venue/venue/tickets/tk-0123456789abc"),
        ),
        (
            "/public/{connection}/{app}/{table}/{code}",
            "get",
            client.get("/public/venue/venue/tickets/tk-0000000000000"),
        ),
        (
            "/public/{connection}/{app}/{table}/{code}/moves",
            "post",
            client.post("/public/venue/venue/tickets/tk-0123456789abc/moves", json={"to": "x"}),
        ),
    ]
    statuses = []
    for path, method, answer in cases:
        fits(path, method, answer.status_code, answer.json)
        statuses.append(answer.status_code)
    assert statuses == [200, 401, 200, 403, 422, 201, 200, 404, 400, 409, 200, 200, 404, 409]
