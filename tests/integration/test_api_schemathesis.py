"""Schemathesis against the served OpenAPI documents: no 5xx, no answer outside the
document, and every request the document allows accepted (positive data: no 400 or 422).

The venue app's own document (/api/apps/venue/venue/openapi.json) describes each table's
values, keys and `after` as the server checks them; each of its operations gets valid
requests aimed at a row that exists and at live link codes (so bodies reach the write
pipeline rather than a 404), and invalid ones, as a manager with a real token. The
document of every app adds its own operations (the documents, the list of apps), and
its `{table}` operations get requests with every path part generated.
A column that references another table takes the key of a row that must exist: that is
data, not shape, so a valid request sends an existing event (the document says so).
Bounded: a fixed seed, 12 examples per operation, no example database.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import given, seed, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    positive_data_acceptance,
    response_schema_conformance,
    status_code_conformance,
)

from core.manifest.model import App
from tests.integration.api_fixtures import Site, api_manifest, installed_site
from tests.integration.pipeline_fixtures import at
from web.openapi import app_document, document

pytestmark = pytest.mark.integration

APP_DOCUMENT = "/api/apps/venue/venue/openapi.json"
CODES = [f"tk-000000000000{n}" for n in range(3)]
EVENT = 1
"""The key of the one event, which valid tickets name."""
EXAMPLES = 12
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    positive_data_acceptance,
]
METHODS = ("get", "post", "patch")
GENERAL = [
    (path, method)
    for path, item in document()["paths"].items()
    for method in item
    if method in METHODS
]
"""Every app's document: its own operations, and its `{table}` ones with every path part
generated (a venue's table is its own document's to describe exactly)."""
TABLES = ("orders", "tickets", "stays", "settings")
"""The venue's tables fuzzed: each kind of column, states, moves, guests, links, locks."""
VENUE = [
    (path, method)
    for path, item in app_document("venue", "venue", App.model_validate(api_manifest()).tables)[
        "paths"
    ].items()
    for method in item
    if method in METHODS and any(f"/{table}/" in path for table in TABLES)
]


@pytest.fixture(scope="module")
def fuzzed_site(server_database_url: str, redis_url: str) -> Iterator[Site]:
    """The venue installed once for the run, with a few rows for requests to land on."""
    with installed_site(server_database_url, redis_url) as site:
        event = site.insert("events", doors_at=at("2026-07-10 18:00"))
        assert event == EVENT
        for n in range(3):
            site.insert("orders", status="placed", pickup_at=at("2026-07-10 11:30"))
            site.insert("tickets", event_id=event, status="valid", link_token=CODES[n])
        site.insert("settings", door_on=True)
        yield site


def pinned(path: str) -> list[dict[str, Any]]:
    """Path parts that reach rows: a key that exists, a live link code, the venue app."""
    if "{table}" in path:
        return []
    if "{connection}" in path:
        return [{"connection": "venue", "app": "venue"}]
    if "{code}" in path:
        return [{"code": code} for code in CODES] if "/tickets/" in path else []
    if "{key}" in path:
        return [{"key": 1}]
    return []


def cases(operation: Any, path: str) -> st.SearchStrategy[Any]:
    """Valid requests (free, and aimed at rows that exist) and invalid ones aimed there."""
    strategies = [operation.as_strategy()]
    for parts in pinned(path):
        strategies.append(operation.as_strategy(path_parameters=parts))
        strategies.append(operation.as_strategy(GenerationMode.NEGATIVE, path_parameters=parts))
    return st.one_of(strategies)


def existing_references(case: schemathesis.Case, event: int) -> None:
    """A valid ticket names an event that exists (a reference is data, not shape)."""
    values = case.body.get("values") if isinstance(case.body, dict) else None
    if isinstance(values, dict) and type(values.get("event_id")) in (int, float):
        values["event_id"] = event


MANIFEST_CHECKS = [check for check in CHECKS if check is not positive_data_acceptance]
"""A preview of a new manifest (`{"manifest": {...}}`) is described as any object (its
JSON Schema is docs/manifest.schema.json); the objects generated for it are refused by the
manifest check (MANIFEST_REFUSED, 400), which no schema can say, so that one body variant
is not held to positive-data acceptance. Its `set` variant, and every other body, are."""


def checks_of(case: schemathesis.Case) -> list[Any]:
    """The checks a request's answer is held to."""
    if isinstance(case.body, dict) and "manifest" in case.body:
        return MANIFEST_CHECKS
    return CHECKS


def run(schema: Any, site: Site, path: str, method: str) -> None:
    operation = schema[path][method.upper()]
    headers = site.headers("manager")

    @given(case=cases(operation, path))
    @settings(max_examples=EXAMPLES, deadline=None, database=None)
    @seed(21)
    def call(case: schemathesis.Case) -> None:
        existing_references(case, EVENT)
        case.call_and_validate(headers=headers, checks=checks_of(case))

    call()


@pytest.fixture(scope="module")
def venue_schema(fuzzed_site: Site) -> Any:
    """The venue app's own document, as the server serves it to the manager."""
    headers = fuzzed_site.headers("manager")
    return schemathesis.openapi.from_wsgi(APP_DOCUMENT, fuzzed_site.app, headers=headers)


@pytest.mark.parametrize(("path", "method"), GENERAL)
def test_every_apps_operations_keep_to_their_document(
    fuzzed_site: Site, path: str, method: str
) -> None:
    schema = schemathesis.openapi.from_wsgi("/api/openapi.json", fuzzed_site.app)
    run(schema, fuzzed_site, path, method)


@pytest.mark.parametrize(("path", "method"), VENUE)
def test_each_tables_operations_keep_to_the_apps_document(
    fuzzed_site: Site, venue_schema: Any, path: str, method: str
) -> None:
    run(venue_schema, fuzzed_site, path, method)
