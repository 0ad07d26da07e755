"""POST /api/apps/{connection}/{app}/preview (issue 24 item 4): the same preview as JSON,
in both OpenAPI documents; nothing saved. Moments worked by hand (Europe/London)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from flask import Flask
from jsonschema import Draft202012Validator

from services.models import db
from services.users import add_user
from tests.integration.preview_fixtures import Diner, build_diner
from web import create_app
from web.openapi import app_document, document

PATH = "/api/apps/diner/diner/preview"


@pytest.fixture
def site(make_database: Callable[[], str], redis_url: str) -> Iterator[tuple[Diner, Flask, str]]:
    diner = build_diner(make_database(), make_database())
    app = create_app({"DATABASE_URL": diner.control_url, "REDIS_URL": redis_url, "TESTING": True})
    with app.app_context():
        token = add_user(db.session, "staff@diner.test", "staff", "diner/diner").token
    assert token is not None
    yield diner, app, token
    from web.live import stop_hub

    stop_hub(app)
    with app.app_context():
        db.engine.dispose()
    diner.dispose()


def fits(schema_name: str, body: Any, doc: dict[str, Any]) -> None:
    schema = {"$ref": f"#/components/schemas/{schema_name}", "components": doc["components"]}
    errors = sorted(Draft202012Validator(schema).iter_errors(body), key=str)
    assert not errors, [e.message for e in errors]


def test_the_api_answers_the_preview_as_json_and_saves_nothing(
    site: tuple[Diner, Flask, str],
) -> None:
    diner, app, token = site
    # Friday 2026-10-23 (BST): closing 23:00 -> 21:00 is 22:00Z -> 20:00Z; 20:30Z is past it.
    key = diner.insert("orders", pickup_at=datetime(2026, 10, 23, 12, tzinfo=UTC), status="placed")
    fri = diner.rows("SELECT id FROM diner.opening_hours WHERE weekday = 'fri'")[0][0]
    body = {
        "set": [{"table": "opening_hours", "key": fri, "column": "closes", "value": "21:00"}],
        "at": "2026-10-23T20:30:00+00:00",
    }
    answer = app.test_client().post(PATH, json=body, headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.json
    found = answer.json
    assert found["summary"] == "1 row due at once, 0 moments later, 0 earlier"
    [change] = found["changes"]
    assert change["key"] == str(key) and change["effect"] == "due-at-once"
    assert (change["old"], change["new"]) == (
        "2026-10-23T23:00:00+01:00",
        "2026-10-23T21:00:00+01:00",
    )
    fits("Preview", found, document())
    fits("PreviewRequest", body, document())
    with app.app_context():
        own = app_document("diner", "diner", {})
    assert own["paths"][PATH]["post"]["operationId"] == "preview"
    fits("Preview", found, own)
    assert diner.rows("SELECT closes FROM diner.opening_hours WHERE weekday = 'fri'") == [
        ("23:00",)
    ]


def test_an_unknown_table_is_404_and_no_token_401(site: tuple[Diner, Flask, str]) -> None:
    _, app, token = site
    body = {"set": [{"table": "nope", "column": "x", "value": 1}]}
    client = app.test_client()
    missing = client.post(PATH, json=body, headers={"Authorization": f"Bearer {token}"})
    assert missing.status_code == 404
    assert client.post(PATH, json=body).status_code == 401
