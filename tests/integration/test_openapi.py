"""The OpenAPI documents stay true: valid OpenAPI 3.1, every route in it, real answers fit
it; each app's own document is served to its staff only and, for values of every column
type, its schema and the server give the same verdict (the schema is the JSON Schema of
the models the server checks with)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate as validate_openapi

from core.manifest.model import Table
from tests.integration.api_fixtures import Site, rows_path
from tests.integration.pipeline_fixtures import at
from web import create_app
from web.api import parse_key
from web.api_models import key_schema
from web.openapi import app_document, document

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


# --- each app's own document ---------------------------------------------------

DOCUMENT = "/api/apps/venue/venue/openapi.json"


def test_the_apps_document_is_served_to_its_staff_and_valid(site: Site) -> None:
    answer = site.client.get(DOCUMENT, headers=site.headers("staff"))
    assert answer.status_code == 200
    validate_openapi(answer.json)
    assert answer.json == app_document("venue", "venue", site.store().app.tables)
    assert "/api/apps/venue/venue/tables/orders/rows/{key}/moves" in answer.json["paths"]


@pytest.mark.parametrize(
    ("path", "who", "status"),
    [
        (DOCUMENT, None, 401),
        (DOCUMENT, "clerk", 403),
        ("/api/apps/venue/nowhere/openapi.json", "admin", 404),
    ],
)
def test_the_apps_document_is_only_for_its_staff(
    site: Site, path: str, who: str | None, status: int
) -> None:
    headers = site.headers(who) if who else {}
    assert site.client.get(path, headers=headers).status_code == status


def body_schema(site: Site, name: str) -> Draft202012Validator:
    """A request body's schema in the served document, with its format checks on."""
    document = site.client.get(DOCUMENT, headers=site.headers("staff")).json
    schema = {**document["components"]["schemas"][name]}
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


CANDIDATES: dict[str, list[Any]] = {
    "pickup_at": [
        "2026-07-10T12:00:00Z",
        "2026-07-10T12:00:00.5+05:30",
        "2026-07-10T12:00:00",
        "2026-07-10",
        "0001-01-01T10:00:00+05:00",
        "9999-12-31T00:00:00Z",
        1783000000,
        None,
    ],
    "note": ["x", "x" * 40, "x" * 41, "a\x00b", "", 3, True, None, ["a"]],
    "channel": ["web", "phone", "fax", None, 1],
    "cancel_code": ["abc", None, 5],
    "status": ["ready"],
    "cancelled_at": ["2026-07-10T12:00:00Z"],
    "id": [7],
    "no_such_column": [1],
}
"""Values for every column of orders, good and bad; the state, a stamp, the key, no column."""


@pytest.mark.parametrize(
    ("column", "value"),
    [(c, v) for c, values in CANDIDATES.items() for v in values],
    ids=lambda v: repr(v)[:30],
)
def test_the_document_and_the_server_agree_on_an_orders_value(
    site: Site, column: str, value: Any
) -> None:
    key = site.insert("orders", status="placed", pickup_at=at("2026-07-10 11:30"))
    allowed = body_schema(site, "orders.Update").is_valid({"values": {column: value}})
    answer = site.client.patch(
        rows_path("orders", key), json={"values": {column: value}}, headers=site.headers("staff")
    )
    assert answer.status_code in (200, 400, 422), answer.json
    assert (answer.status_code == 200) == allowed, answer.json


WHOLE_NUMBERS: dict[str, tuple[Callable[[int], Any], bool]] = {
    "the_key": (lambda key: key, True),
    "the_key_written_3.0": (float, True),
    "a_fraction": (lambda key: key + 0.5, False),
    "true": (lambda key: True, False),
    "text": (str, False),
    "past_32_bits": (lambda key: 2**31, False),
}


@pytest.mark.parametrize("sent", sorted(WHOLE_NUMBERS))
def test_the_document_and_the_server_agree_on_a_whole_number(site: Site, sent: str) -> None:
    # A reference names a row that exists (data, not shape): the event is made first.
    event = site.insert("events", doors_at=at("2026-07-10 18:00"))
    value, kept = WHOLE_NUMBERS[sent]
    body = {"values": {"event_id": value(event)}}
    assert body_schema(site, "tickets.Create").is_valid(body) is kept
    answer = site.client.post(rows_path("tickets"), json=body, headers=site.headers("staff"))
    assert (answer.status_code == 201) is kept, answer.json


def test_a_create_needs_what_the_document_requires(site: Site) -> None:
    schema = body_schema(site, "orders.Create")
    assert not schema.is_valid({"values": {"note": "x"}})
    assert schema.is_valid({"values": {"pickup_at": "2026-07-10T12:00:00Z"}})
    refused = site.client.post(
        rows_path("orders"), json={"values": {"note": "x"}}, headers=site.headers("staff")
    )
    assert refused.status_code == 422
    made = site.client.post(
        rows_path("orders"),
        json={"values": {"pickup_at": "2026-07-10T12:00:00Z"}},
        headers=site.headers("staff"),
    )
    assert made.status_code == 201


@pytest.mark.parametrize(
    ("after", "kept"),
    [("1", True), ("-5", True), (str(2**31 - 1), True), (str(2**31), False), ("abc", False)],
)
def test_the_document_and_the_server_agree_on_after(site: Site, after: str, kept: bool) -> None:
    document = site.client.get(DOCUMENT, headers=site.headers("staff")).json
    operation = document["paths"]["/api/apps/venue/venue/tables/orders/rows"]["get"]
    schema = next(p["schema"] for p in operation["parameters"] if p["name"] == "after")
    value: Any = int(after) if after.lstrip("-").isdigit() else after
    assert Draft202012Validator(schema).is_valid(value) is kept
    answer = site.client.get(rows_path("orders") + f"?after={after}", headers=site.headers("staff"))
    assert (answer.status_code == 200) is kept, answer.json


KEYS: dict[str, list[tuple[str, bool]]] = {
    "integer": [("7", True), ("-7", True), (str(2**31), False), ("7.5", False), ("x", False)],
    "text": [("tk-1", True), ("a\x00b", False)],
    "date": [("2026-07-10", True), ("2026-07-10T12:00:00Z", False), ("10/07/2026", False)],
    "timestamptz": [("2026-07-10T12:00:00Z", True), ("2026-07-10T12:00:00", False)],
    "boolean": [("true", True), ("false", True), ("1", False)],
}
"""Keys as a URL carries them, for a table keyed by each type; whether a row could have it."""


@pytest.mark.parametrize(
    ("kind", "raw", "kept"), [(k, raw, kept) for k, found in KEYS.items() for raw, kept in found]
)
def test_the_document_and_the_server_agree_on_a_key(kind: str, raw: str, kept: bool) -> None:
    spec = Table.model_validate({"key": "k", "columns": [{"ref": "k", "type": kind}]})
    schema = Draft202012Validator(
        key_schema(spec), format_checker=Draft202012Validator.FORMAT_CHECKER
    )
    # A URL carries a whole number or true/false as its JSON text, anything else as text.
    try:
        value: Any = json.loads(raw) if kind in ("integer", "boolean") else raw
    except ValueError:
        value = raw
    assert schema.is_valid(value) is kept
    assert (parse_key(spec, raw) is not None) is kept


def test_the_documents_say_what_the_row_list_takes(site: Site) -> None:
    """Issue 33 item 6: `state` (repeatable, the table's states) and `q`; any other
    parameter is refused."""
    own = site.client.get(DOCUMENT, headers=site.headers("staff")).json
    listing = own["paths"]["/api/apps/venue/venue/tables/orders/rows"]["get"]
    taken = {p["name"]: p for p in listing["parameters"]}
    assert sorted(taken) == ["after", "limit", "q", "state"]
    assert taken["state"]["schema"] == {
        "type": "array",
        "items": {"enum": ["placed", "confirmed", "ready", "cancelled", "refunded"]},
    }
    assert taken["state"]["explode"] is True
    assert "400 INVALID_REQUEST" in listing["description"]
    shared = document()["paths"]["/api/apps/{connection}/{app}/tables/{table}/rows"]["get"]
    assert sorted(p["name"] for p in shared["parameters"]) == ["after", "limit", "q", "state"]
    assert "400 INVALID_REQUEST" in shared["description"]
