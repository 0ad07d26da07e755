"""The REST API on real PostgreSQL and Redis: who may ask, reading rows, creating, updating."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
import redis
from sqlalchemy import select
from werkzeug.test import TestResponse

from services.events import events_channel
from services.models import User, db
from tests.integration.api_fixtures import Site, rows_path
from tests.integration.pipeline_fixtures import at
from web.auth import register_session_loader

pytestmark = pytest.mark.integration


def refusal(answer: TestResponse, code: str, status: int) -> dict[str, Any]:
    """Assert a JSON refusal with this code and status; its details."""
    assert (answer.status_code, answer.json["error"]["code"]) == (status, code), answer.json
    assert set(answer.json["error"]) == {"code", "message", "details"}
    return answer.json["error"]["details"]  # type: ignore[no-any-return]


def new_order(site: Site, **values: Any) -> int:
    """An order seeded straight into the database, placed, for a pickup in July."""
    row = {"status": "placed", "pickup_at": at("2026-07-10 11:30"), **values}
    return site.insert("orders", **row)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({}, id="no_header"),
        pytest.param({"Authorization": "Bearer not-a-token"}, id="unknown_token"),
        pytest.param({"Authorization": "Basic bWFuYWdlcjpwdw=="}, id="basic_auth"),
        pytest.param({"Authorization": "Bearer "}, id="empty_token"),
    ],
)
def test_signed_out_is_401(site: Site, headers: dict[str, str]) -> None:
    for path in ("/api/apps", rows_path("orders"), rows_path("orders", 1)):
        refusal(site.client.get(path, headers=headers), "UNAUTHORIZED", 401)
    answer = site.client.post(rows_path("orders"), json={"values": {}}, headers=headers)
    refusal(answer, "UNAUTHORIZED", 401)


def test_role_of_another_app_is_403(site: Site) -> None:
    details = refusal(
        site.client.get(rows_path("orders"), headers=site.headers("clerk")), "FORBIDDEN", 403
    )
    assert details == {"connection": "venue", "app": "venue"}
    # The clerk's own app answers.
    answer = site.client.get(rows_path("notes", app="other"), headers=site.headers("clerk"))
    assert answer.status_code == 200


def test_apps_list_only_the_users_own(site: Site) -> None:
    listed = site.client.get("/api/apps", headers=site.headers("clerk")).json["apps"]
    assert [(a["connection"], a["app"], a["roles"]) for a in listed] == [
        ("venue", "other", ["clerk"])
    ]
    every = site.client.get("/api/apps", headers=site.headers("admin")).json["apps"]
    assert [a["app"] for a in every] == ["other", "venue"]


@pytest.mark.parametrize(
    ("path", "details"),
    [
        pytest.param("/api/apps/venue/nope/tables/orders/rows", {"connection": "venue"}, id="app"),
        pytest.param("/api/apps/nope/venue/tables/orders/rows", {"connection": "nope"}, id="conn"),
        pytest.param(rows_path("nope"), {"table": "nope"}, id="table"),
        pytest.param(rows_path("orders", 999), {"table": "orders", "key": "999"}, id="row"),
        pytest.param(rows_path("orders", "abc"), {"table": "orders", "key": "abc"}, id="text_key"),
        pytest.param(
            rows_path("orders", 2**40), {"table": "orders", "key": str(2**40)}, id="huge_key"
        ),
    ],
)
def test_unknown_app_table_or_row_is_404(site: Site, path: str, details: dict[str, Any]) -> None:
    answer = site.client.get(path, headers=site.headers("manager"))
    assert refusal(answer, "NOT_FOUND", 404) == details


def test_rows_come_in_pages_by_key(site: Site) -> None:
    keys = [new_order(site) for _ in range(3)]
    # Rows other tests of the module made have smaller keys: start after them.
    page = rows_path("orders") + f"?limit=2&after={keys[0] - 1}"
    first = site.client.get(page, headers=site.headers("staff")).json
    assert [r["id"] for r in first["rows"]] == keys[:2]
    assert first["next"] == keys[1]
    second = site.client.get(
        rows_path("orders") + f"?limit=2&after={first['next']}", headers=site.headers("staff")
    ).json
    assert ([r["id"] for r in second["rows"]], second["next"]) == ([keys[2]], None)


@pytest.mark.parametrize("query", ["limit=0", "limit=501", "limit=x", "after=abc"])
def test_a_bad_page_is_400(site: Site, query: str) -> None:
    answer = site.client.get(rows_path("orders") + "?" + query, headers=site.headers("staff"))
    refusal(answer, "INVALID_REQUEST", 400)


def _listed(site: Site, query: str, start: int) -> list[int]:
    """The keys a list answers (past `start`: rows other tests of the module made)."""
    answer = site.client.get(
        rows_path("orders") + f"?after={start}&" + query, headers=site.headers("staff")
    )
    assert answer.status_code == 200, answer.json
    return [row["id"] for row in answer.json["rows"]]


def test_the_list_takes_states_and_the_boards_search(site: Site) -> None:
    """Issue 33 item 6: `state` (repeatable) and `q` filter the list (before, both were
    ignored and every row came back)."""
    start = new_order(site)
    placed = new_order(site, note="Two pizzas")
    ready = new_order(site, status="ready", note="pizza_50% off")
    confirmed = new_order(site, status="confirmed")
    assert _listed(site, "", start) == [placed, ready, confirmed]
    assert _listed(site, "state=placed", start) == [placed]
    assert _listed(site, "state=placed&state=confirmed", start) == [placed, confirmed]
    assert _listed(site, "q=PIZZA", start) == [placed, ready]  # case-insensitive
    assert _listed(site, "q=_50%25", start) == [ready]  # % and _ are themselves
    assert _listed(site, "q=pizza&state=ready", start) == [ready]
    assert _listed(site, f"q={confirmed}", start) == [confirmed]  # the key too
    # Paged, the filter holds on every page.
    page = rows_path("orders") + f"?after={start}&state=placed&state=ready&limit=1"
    first = site.client.get(page, headers=site.headers("staff")).json
    assert ([r["id"] for r in first["rows"]], first["next"]) == ([placed], placed)
    second = site.client.get(
        rows_path("orders") + f"?after={placed}&state=placed&state=ready&limit=1",
        headers=site.headers("staff"),
    ).json
    assert ([r["id"] for r in second["rows"]], second["next"]) == ([ready], None)


@pytest.mark.parametrize(
    ("query", "details"),
    [
        pytest.param(
            "status=placed",
            {"parameter": "status", "takes": ["limit", "after", "state", "q"]},
            id="unknown_parameter",
        ),
        pytest.param("state=plced", {"state": "plced"}, id="unknown_state"),
        pytest.param("state=", {"state": ""}, id="empty_state"),
        pytest.param("q=a%00b", {"q": "a\x00b"}, id="nul_in_the_search"),
    ],
)
def test_a_list_parameter_it_cannot_read_is_400_naming_it(
    site: Site, query: str, details: dict[str, Any]
) -> None:
    answer = site.client.get(rows_path("orders") + "?" + query, headers=site.headers("staff"))
    assert refusal(answer, "INVALID_REQUEST", 400) == details


def test_a_row_reads_with_instants_in_utc(site: Site) -> None:
    key = new_order(site, note="two pizzas")
    answer = site.client.get(rows_path("orders", key), headers=site.headers("staff")).json
    # 11:30 UTC is 12:30 in London in July (BST, UTC+1): the answer names the instant in UTC.
    assert answer["key"] == key
    assert answer["row"]["pickup_at"] == "2026-07-10T11:30:00+00:00"
    assert (answer["row"]["status"], answer["row"]["note"]) == ("placed", "two pizzas")


def test_create_lands_in_initial_and_is_audited_by_the_person(site: Site) -> None:
    answer = site.client.post(
        rows_path("orders"),
        json={"values": {"pickup_at": "2026-07-10T12:30:00+01:00", "note": "no onions"}},
        headers=site.headers("manager"),
    )
    assert answer.status_code == 201
    body = answer.json
    assert body["row"]["status"] == "placed" and body["late"] is False
    assert site.row("orders", body["key"])["pickup_at"] == at("2026-07-10 11:30")
    entry = site.audit()[-1]
    # The clock the web was given is the write's time.
    assert (entry["actor"], entry["at"]) == ("manager@venue.test", site.clock.now)


def test_update_changes_values_and_publishes_an_event(site: Site, redis_url: str) -> None:
    key = new_order(site)
    client = redis.Redis.from_url(redis_url)
    pubsub = client.pubsub()
    try:
        pubsub.subscribe(events_channel("venue"))
        assert pubsub.get_message(timeout=2)["type"] == "subscribe"  # type: ignore[index]
        answer = site.client.patch(
            rows_path("orders", key), json={"values": {"note": "ring twice"}}, **_as(site)
        )
        assert answer.status_code == 200 and answer.json["row"]["note"] == "ring twice"
        message = pubsub.get_message(timeout=2)
        assert message is not None
        assert json.loads(message["data"]) == {
            "connection": "venue",
            "app": "venue",
            "table": "orders",
            "key": key,
            "state": "placed",
            "actor": "staff@venue.test",
        }
    finally:
        pubsub.close()
        client.close()


def _as(site: Site, user: str = "staff") -> dict[str, Any]:
    return {"headers": site.headers(user)}


@pytest.mark.parametrize(
    ("values", "details"),
    [
        pytest.param({"status": "ready"}, {"column": "status", "reason": "state"}, id="state"),
        pytest.param(
            {"cancelled_at": "2026-07-10T12:00:00+00:00"},
            {"column": "cancelled_at", "reason": "stamp"},
            id="stamp",
        ),
        pytest.param({"id": 7}, {"column": "id", "reason": "key"}, id="key"),
        pytest.param({"colour": "red"}, {"column": "colour", "reason": "unknown"}, id="unknown"),
    ],
)
def test_columns_only_adminium_writes_are_422(
    site: Site, values: dict[str, Any], details: dict[str, Any]
) -> None:
    key = new_order(site)
    before = site.row("orders", key)
    answer = site.client.patch(rows_path("orders", key), json={"values": values}, **_as(site))
    assert refusal(answer, "COLUMN_READ_ONLY", 422) == details
    assert site.row("orders", key) == before


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param(
            {"pickup_at": "2026-07-10T12:30:00"},
            {"column": "pickup_at", "reason": "type"},
            id="time_without_offset",
        ),
        pytest.param(
            {"pickup_at": 1783000000}, {"column": "pickup_at", "reason": "type"}, id="time_number"
        ),
        pytest.param({"note": ["a"]}, {"column": "note", "reason": "type"}, id="list"),
        pytest.param({"note": "x\x00y"}, {"column": "note", "reason": "type"}, id="nul"),
        pytest.param({"channel": "fax"}, {"reason": "check"}, id="enum_value"),
        pytest.param({"note": "n" * 41}, {"reason": "type"}, id="too_long"),
    ],
)
def test_values_that_do_not_fit_are_422(
    site: Site, values: dict[str, Any], expected: dict[str, Any]
) -> None:
    key = new_order(site)
    before = site.row("orders", key)
    answer = site.client.patch(rows_path("orders", key), json={"values": values}, **_as(site))
    details = refusal(answer, "VALUE_REFUSED", 422)
    assert expected.items() <= details.items()
    assert site.row("orders", key) == before


def test_a_create_missing_a_required_value_is_422(site: Site) -> None:
    audit = site.audit()
    answer = site.client.post(rows_path("orders"), json={"values": {"note": "x"}}, **_as(site))
    details = refusal(answer, "VALUE_REFUSED", 422)
    assert (details["reason"], details["column"]) == ("not-null", "pickup_at")
    assert site.audit() == audit


def test_a_locked_row_refuses_the_writer(site: Site) -> None:
    key = new_order(site, status="cancelled", cancelled_at=at("2026-07-10 10:00"))
    answer = site.client.patch(
        rows_path("orders", key), json={"values": {"note": "x"}}, **_as(site)
    )
    assert refusal(answer, "ROW_LOCKED", 409) == {
        "columns": ["note"],
        "when": {"column": "status", "values": ["cancelled"]},
    }


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"not json", id="not_json"),
        pytest.param(b"[1, 2]", id="array"),
        pytest.param(b'{"values": {}, "extra": 1}', id="unknown_field"),
        pytest.param(b'{"values": "note"}', id="values_not_object"),
        pytest.param(b'{"values": {}, "from": 3}', id="from_not_text"),
    ],
)
def test_a_body_out_of_shape_is_400(site: Site, body: bytes) -> None:
    key = new_order(site)
    answer = site.client.patch(
        rows_path("orders", key), data=body, content_type="application/json", **_as(site)
    )
    assert "errors" in refusal(answer, "INVALID_REQUEST", 400)


def test_a_method_the_path_does_not_take_is_405(site: Site) -> None:
    answer = site.client.delete(rows_path("orders", 1), **_as(site))
    refusal(answer, "METHOD_NOT_ALLOWED", 405)
    assert "PATCH" in answer.headers["Allow"]


def test_the_clock_config_must_be_aware(site: Site) -> None:
    site.clock.now = datetime(2026, 7, 10, 9, 0)
    values = {"pickup_at": "2026-07-10T12:00:00+00:00"}
    with pytest.raises(ValueError, match="aware"):
        site.client.post(rows_path("orders"), json={"values": values}, **_as(site))


def test_the_screens_session_hook_signs_in_without_a_token(site: Site) -> None:
    with site.app.app_context():
        manager = db.session.scalar(select(User).where(User.email == "manager@venue.test"))
    register_session_loader(site.app, lambda: db.session.get(User, manager.id))
    try:
        assert site.client.get(rows_path("orders")).status_code == 200
        # A token sent is the only thing judged: a wrong one is not rescued by the session.
        bad = {"Authorization": "Bearer not-a-token"}
        refusal(site.client.get(rows_path("orders"), headers=bad), "UNAUTHORIZED", 401)
    finally:
        site.app.extensions.pop("adminium.session_loader")
