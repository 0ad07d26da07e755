"""Schemathesis against /api/openapi.json: no 5xx, and no answer outside the document.

Each operation gets valid requests with every path part generated, and valid and invalid
requests aimed at the installed venue's tables, an existing row and live link codes (so
generated bodies reach the write pipeline rather than stopping at a 404), all as a
manager with a real token.
Bounded: 25 examples per operation, no example database.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.integration.api_fixtures import Site, installed_site
from tests.integration.pipeline_fixtures import at
from web.openapi import document

pytestmark = pytest.mark.integration

TABLES = ("orders", "tickets", "stays", "settings")
OPERATIONS = [
    (path, method)
    for path, item in document()["paths"].items()
    for method in item
    if method in ("get", "post", "patch")
]
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.fixture(scope="module")
def fuzzed_site(server_database_url: str, redis_url: str) -> Iterator[Site]:
    """The venue installed once for the run, with a few rows for requests to land on."""
    with installed_site(server_database_url, redis_url) as site:
        event = site.insert("events", doors_at=at("2026-07-10 18:00"))
        for n in range(3):
            site.insert("orders", status="placed", pickup_at=at("2026-07-10 11:30"))
            site.insert("tickets", event_id=event, status="valid", link_token=f"tk-000000000000{n}")
        yield site


def targets(names: set[str]) -> list[dict[str, str]]:
    """Path parts that reach the venue: each table, a row that exists, a live link code."""
    if "connection" not in names:
        return []
    venue = {"connection": "venue", "app": "venue"}
    if "code" in names:
        return [{**venue, "table": "tickets", "code": f"tk-000000000000{n}"} for n in range(3)]
    if "key" in names:
        return [{**venue, "table": table, "key": "1"} for table in TABLES]
    return [{**venue, "table": table} for table in TABLES]


def cases(operation: Any) -> st.SearchStrategy[Any]:
    """Free requests, and valid and invalid ones aimed at the venue's tables and rows."""
    names = {p["name"] for p in document()["paths"][operation.path].get("parameters", [])}
    strategies = [operation.as_strategy()]
    for pinned in targets(names):
        strategies.append(operation.as_strategy(path_parameters=pinned))
        strategies.append(operation.as_strategy(GenerationMode.NEGATIVE, path_parameters=pinned))
    return st.one_of(strategies)


@pytest.mark.parametrize(("path", "method"), OPERATIONS)
def test_every_operation_keeps_to_the_document(fuzzed_site: Site, path: str, method: str) -> None:
    schema = schemathesis.openapi.from_wsgi("/api/openapi.json", fuzzed_site.app)
    operation = schema[path][method.upper()]
    headers = fuzzed_site.headers("manager")

    @given(case=cases(operation))
    @settings(max_examples=25, deadline=None, database=None)
    def call(case: schemathesis.Case) -> None:
        case.call_and_validate(headers=headers, checks=CHECKS)

    call()
