"""Bad input gets a 4xx with a code, never a 5xx; guests learn no internals; a venue
database that does not answer is a 502 with a code; bodies have a cap; echoes are cut.

London is on BST (UTC+1) in July 2026. Instants are written in UTC with `at`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa
from flask.testing import FlaskClient

from services.apps import save_app
from services.connections import add_connection
from services.models import db
from tests.integration.api_fixtures import Clock, Site, api_manifest, rows_path
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import add_order, csrf_of

pytestmark = pytest.mark.integration

GONE_URL = "postgresql://postgres@127.0.0.1:1/nowhere"
"""A database nobody listens for: every query on it fails to connect."""


@pytest.fixture
def site(screens_site: Site) -> Site:
    """The module's site at its usual clock."""
    screens_site.clock.now = Clock().now
    return screens_site


def code_of(answer: Any) -> tuple[int, str]:
    """An API answer's status and error code."""
    return answer.status_code, answer.get_json()["error"]["code"]


def ticket_code(site: Site, **values: Any) -> str:
    """A valid ticket with a link code of its own (sale from 09:00 UTC); its code."""
    event = site.insert("events", doors_at=at("2026-07-10 18:00"))
    key = site.insert("tickets", event_id=event, status="valid", **values)
    code = f"tk{key:014d}"
    with site.store().engine.begin() as conn:
        t = site.store().table("tickets")
        conn.execute(t.update().where(t.c.id == key).values(link_token=code))
    return code


# --- 8: a guest gets the code and no internals ------------------------------------


def test_a_guest_is_not_told_the_databases_own_words(site: Site) -> None:
    # The venue's own CHECK refuses a valid_to after 2030; the database names the
    # constraint and the table, which a guest must not learn.
    with site.store().engine.begin() as conn:
        conn.execute(
            sa.text(
                "ALTER TABLE public.tickets ADD CONSTRAINT ck_valid_to_soon "
                "CHECK (valid_to < '2030-01-01') NOT VALID"
            )
        )
    try:
        code = ticket_code(site, sale_from=at("2026-07-10 08:00"))
        answer = site.client.post(
            f"/public/venue/venue/tickets/{code}/moves",
            json={"to": "returned", "values": {"valid_to": "2031-01-01T00:00:00+00:00"}},
        )
    finally:
        with site.store().engine.begin() as conn:
            conn.execute(sa.text("ALTER TABLE public.tickets DROP CONSTRAINT ck_valid_to_soon"))
    assert code_of(answer) == (422, "VALUE_REFUSED")
    error = answer.get_json()["error"]
    assert error["params"] == {}
    for internal in ("ck_valid_to_soon", "tickets", "constraint", "valid_to", "database"):
        assert internal not in error["message"]


def test_staff_still_read_the_databases_words(site: Site) -> None:
    # The same refusal to staff keeps what the database said: they fix their data with it.
    answer = site.client.post(
        rows_path("orders"),
        json={"values": {"pickup_at": "2026-07-10T12:00:00+00:00", "note": "x" * 41}},
        headers=site.headers("staff"),
    )
    assert code_of(answer) == (422, "VALUE_REFUSED")
    assert "character varying(40)" in answer.get_json()["error"]["message"]


def test_a_guest_refusal_does_not_echo_a_column_name(site: Site) -> None:
    code = ticket_code(site, sale_from=at("2026-07-10 08:00"))
    answer = site.client.post(
        f"/public/venue/venue/tickets/{code}/moves",
        json={"to": "returned", "values": {"pending_email": "x@example.test"}},
    )
    assert code_of(answer) == (422, "COLUMN_READ_ONLY")
    assert "pending_email" not in answer.text


# --- 9: a body nested too deep -----------------------------------------------------


DEEP = "[" * 1000 + "]" * 1000


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(DEEP, id="a_deep_array"),
        pytest.param('{"values": {"note": ' + DEEP + "}}", id="deep_inside_an_object"),
    ],
)
def test_a_body_nested_1000_deep_is_an_invalid_request(site: Site, body: str) -> None:
    staff = site.client.post(
        rows_path("orders"),
        data=body,
        content_type="application/json",
        headers=site.headers("staff"),
    )
    assert code_of(staff) == (400, "INVALID_REQUEST")
    code = ticket_code(site)
    guest = site.client.post(
        f"/public/venue/venue/tickets/{code}/moves", data=body, content_type="application/json"
    )
    assert code_of(guest) == (400, "INVALID_REQUEST")
    assert guest.get_json()["error"]["params"] == {}


# --- 10: NUL, state filters, times past 9999 on the screens and the API ------------


def board(client: FlaskClient, query: str, htmx: bool = False) -> Any:
    """The orders board with a query string."""
    headers = {"HX-Request": "true"} if htmx else {}
    return client.get(f"/apps/venue/venue/orders?{query}", headers=headers)


@pytest.mark.parametrize(
    "query",
    [
        pytest.param("q=a%00b", id="nul_in_the_search"),
        pytest.param("state=placed%00", id="nul_in_the_state_filter"),
        pytest.param("state=lost", id="a_state_the_board_lacks"),
    ],
)
def test_a_board_filter_no_row_could_match_is_refused_with_a_code(
    signed_in: Callable[[str], FlaskClient], query: str
) -> None:
    staff = signed_in("staff")
    page = board(staff, query)
    assert page.status_code == 400
    assert "INVALID_REQUEST" in page.text
    partial = board(staff, query, htmx=True)
    assert partial.status_code == 400
    assert partial.text.startswith('<p class="refusal"')


def test_a_board_search_still_finds_its_rows(
    site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    key = add_order(site, at("2026-07-11 11:30"), note="window seat")
    found = board(signed_in("staff"), "q=window+seat&state=placed")
    assert found.status_code == 200
    assert f'id="row-orders-{key}"' in found.text


def edit(client: FlaskClient, key: int, column: str, value: str) -> Any:
    """The row page's edit form, sent."""
    page = client.get(f"/apps/venue/venue/orders/{key}")
    return client.post(
        f"/apps/venue/venue/orders/{key}/edit",
        data={"column": column, "value": value, "csrf_token": csrf_of(page.text)},
        headers={"HX-Request": "true"},
    )


@pytest.mark.parametrize(
    ("column", "value"),
    [
        pytest.param("note", "a\x00b", id="nul_in_text"),
        pytest.param("pickup_at", "10000-01-01T00:00", id="year_10000"),
        pytest.param("pickup_at", "9999-12-31T23:30", id="last_day_of_9999"),
        pytest.param("x" * 5000, "1", id="a_long_unknown_column"),
    ],
)
def test_an_edit_no_column_holds_is_refused_on_the_row(
    site: Site, signed_in: Callable[[str], FlaskClient], column: str, value: str
) -> None:
    key = add_order(site, at("2026-07-11 11:30"))
    answer = edit(signed_in("staff"), key, column, value)
    assert answer.status_code == 422  # the refusal's own status, swapped in by htmx
    assert "VALUE_REFUSED" in answer.text
    assert "x" * 101 not in answer.text
    assert site.row("orders", key)["note"] is None


@pytest.mark.parametrize(
    "values",
    [
        pytest.param({"note": "a\u0000b"}, id="nul"),
        pytest.param({"note": "a\ud800b"}, id="lone_surrogate"),
        pytest.param({"pickup_at": "9999-12-31T23:59:59-05:00"}, id="past_9999_in_utc"),
        pytest.param({"pickup_at": "10000-01-01T00:00:00+00:00"}, id="year_10000"),
        pytest.param({"pickup_at": 1783680000}, id="a_number_for_a_time"),
    ],
)
def test_an_api_value_no_column_holds_is_value_refused(site: Site, values: dict[str, Any]) -> None:
    body = {"values": {"pickup_at": "2026-07-10T12:00:00+00:00", **values}}
    answer = site.client.post(rows_path("orders"), json=body, headers=site.headers("staff"))
    assert code_of(answer) == (422, "VALUE_REFUSED")


@pytest.mark.parametrize(
    ("path", "as_guest"),
    [
        pytest.param("/api/apps/ven%00ue/venue/tables/orders/rows", False, id="api_connection"),
        pytest.param("/api/apps/venue/ven%00ue/tables/orders/rows", False, id="api_app"),
        pytest.param("/public/ven%00ue/venue/tickets/aaaaaaaaaaaaaaaa", True, id="public"),
    ],
)
def test_a_nul_in_a_connection_or_app_name_is_no_such_app(
    site: Site, path: str, as_guest: bool
) -> None:
    answer = site.client.get(path, headers={} if as_guest else site.headers("admin"))
    assert code_of(answer) == (404, "NOT_FOUND")


@pytest.mark.parametrize(
    "path",
    ["/connections/ven%00ue", "/connections/ven%00ue/pending", "/apps/ven%00ue/venue/orders"],
)
def test_a_nul_in_a_screens_connection_name_is_not_found(
    signed_in: Callable[[str], FlaskClient], path: str
) -> None:
    answer = signed_in("admin").get(path)
    assert answer.status_code == 404
    assert "NOT_FOUND" in answer.text


@pytest.mark.parametrize(
    "limit",
    [
        pytest.param("9" * 5000, id="more_digits_than_python_reads"),
        pytest.param("0" * 5000 + "50", id="zeros_python_will_not_read_either"),
        pytest.param("%00", id="nul"),
    ],
)
def test_a_page_limit_out_of_reading_is_an_invalid_request(
    site: Site, limit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Past the URL cap (414) unless an operator raises it: then the limit's own check holds.
    monkeypatch.setitem(site.app.config, "URL_MAX", 10_000)
    answer = site.client.get(rows_path("orders") + f"?limit={limit}", headers=site.headers("staff"))
    assert code_of(answer) == (400, "INVALID_REQUEST")


# --- 11: a venue database that does not answer -------------------------------------


@pytest.fixture(scope="module")
def gone(screens_site: Site) -> str:
    """A connection `gone` whose database does not answer, with the venue app as `ghost`."""
    with screens_site.app.app_context():
        add_connection(db.session, "gone", GONE_URL, None)
        save_app(db.session, "gone", {**api_manifest(), "name": "ghost", "schema": "ghost"})
    return "gone"


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        pytest.param("get", "/api/apps/gone/ghost/tables/orders/rows", None, id="list"),
        pytest.param("get", "/api/apps/gone/ghost/tables/orders/rows/1", None, id="read"),
        pytest.param(
            "post",
            "/api/apps/gone/ghost/tables/orders/rows",
            {"values": {"pickup_at": "2026-07-10T12:00:00+00:00"}},
            id="create",
        ),
        pytest.param("post", "/api/apps/gone/ghost/tables/orders/rows/1/moves", {"to": "x"}),
    ],
)
def test_the_rest_api_says_its_database_does_not_answer(
    site: Site, gone: str, method: str, path: str, body: Any
) -> None:
    kwargs: dict[str, Any] = {"headers": site.headers("admin")}
    if body is not None:
        kwargs["json"] = body
    answer = getattr(site.client, method)(path, **kwargs)
    assert code_of(answer) == (502, "DATABASE_REFUSED")
    assert "Traceback" not in answer.text


@pytest.mark.parametrize("suffix", ["", "/moves"])
def test_the_public_api_says_only_that_it_cannot_answer(site: Site, gone: str, suffix: str) -> None:
    path = f"/public/gone/ghost/tickets/{'a' * 16}{suffix}"
    answer = site.client.post(path, json={"to": "x"}) if suffix else site.client.get(path)
    assert code_of(answer) == (502, "DATABASE_REFUSED")
    error = answer.get_json()["error"]
    assert error["params"] == {}
    for internal in ("127.0.0.1", "port", "nowhere", "connection"):
        assert internal not in error["message"]


# --- 12: a cap on bodies, and echoes cut --------------------------------------------


def test_a_body_over_the_cap_is_413_with_a_code(site: Site) -> None:
    name = "x" * (10 * 1024 * 1024)
    answer = site.client.post(
        rows_path("orders"),
        data=json.dumps({"values": {name: 1}}),
        content_type="application/json",
        headers=site.headers("staff"),
    )
    assert code_of(answer) == (413, "REQUEST_TOO_LARGE")
    assert len(answer.data) < 1000
    code = ticket_code(site)
    guest = site.client.post(
        f"/public/venue/venue/tickets/{code}/moves",
        data=json.dumps({"to": name}),
        content_type="application/json",
    )
    assert code_of(guest) == (413, "REQUEST_TOO_LARGE")


@pytest.mark.parametrize(
    ("path", "body"),
    [
        pytest.param(rows_path("orders"), {"values": {"y" * 500_000: 1}}, id="unknown_column"),
        pytest.param(rows_path("orders"), {"y" * 500_000: 1}, id="unknown_field"),
        pytest.param(rows_path("orders", 1) + "/moves", {"to": "y" * 500_000}, id="unknown_to"),
        pytest.param(
            rows_path("orders", 1) + "/moves", {"to": "confirmed", "from": "y" * 500_000}, id="from"
        ),
    ],
)
def test_a_refusal_echoes_at_most_100_characters_of_a_name(
    site: Site, path: str, body: dict[str, Any]
) -> None:
    add_order(site, at("2026-07-11 11:30"))  # some row 1 exists in every order
    answer = site.client.post(path, json=body, headers=site.headers("manager"))
    assert 400 <= answer.status_code < 500
    assert "y" * 101 not in answer.text
    assert len(answer.data) < 2000


def test_a_long_key_in_the_path_is_not_echoed_whole(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(site.app.config, "URL_MAX", 10_000)  # past the URL cap otherwise
    answer = site.client.get(
        f"/api/apps/venue/venue/tables/{'t' * 5000}/rows", headers=site.headers("staff")
    )
    assert code_of(answer) == (404, "NOT_FOUND")
    assert "t" * 101 not in answer.text
