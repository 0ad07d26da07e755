"""Who may see the screens: signed out goes to sign in, another app's role gets 403,
forms need their CSRF token, and the session cookie is HttpOnly, Lax, Secure over https."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from flask.testing import FlaskClient

from services.apps import save_app
from services.connections import add_connection
from services.models import db
from tests.integration.api_fixtures import Site, api_manifest
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import PASSWORD, add_order, csrf_of

pytestmark = pytest.mark.integration
APP_SCREENS = [
    "/apps/venue/venue/orders",
    "/apps/venue/venue/orders/columns",
    "/apps/venue/venue/orders/{key}",
    "/apps/venue/venue/orders/{key}/detail",
]
CONNECTION_SCREENS = ["/connections/venue/pending", "/connections/venue/set-aside"]


@pytest.mark.parametrize("path", ["/connections", *APP_SCREENS, *CONNECTION_SCREENS])
def test_signed_out_browser_is_sent_to_sign_in(screens_site: Site, path: str) -> None:
    key = add_order(screens_site, at("2026-07-10 11:30"))
    answer = screens_site.app.test_client().get(path.format(key=key))
    assert answer.status_code == 302
    assert answer.headers["Location"].startswith("/signin?next=")


def test_signed_out_htmx_request_is_redirected_by_header(screens_site: Site) -> None:
    answer = screens_site.app.test_client().get(
        "/apps/venue/venue/orders", headers={"HX-Request": "true"}
    )
    assert answer.status_code == 401
    assert answer.headers["HX-Redirect"].startswith("/signin")


@pytest.mark.parametrize("path", APP_SCREENS)
def test_role_in_another_app_is_refused_with_403(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], path: str
) -> None:
    key = add_order(screens_site, at("2026-07-10 11:30"))
    answer = signed_in("clerk").get(path.format(key=key))
    assert answer.status_code == 403
    assert "FORBIDDEN" in answer.text


@pytest.mark.parametrize("path", CONNECTION_SCREENS)
def test_connection_screens_list_only_rows_of_your_apps(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], path: str
) -> None:
    # Pending in an hour's time (the clock reads 09:00 UTC); venue's, not the clerk's app.
    key = add_order(screens_site, at("2026-07-10 10:00"))
    clerk = signed_in("clerk").get(path)
    assert clerk.status_code == 200
    assert f"Orders #{key}" not in clerk.text
    if path.endswith("pending"):
        assert f"Orders #{key}" in signed_in("manager").get(path).text


def test_connection_screens_of_a_connection_with_no_app_of_yours_are_403(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    with screens_site.app.app_context():
        add_connection(db.session, "elsewhere", screens_site.venue_url, None, force=True)
    answer = signed_in("manager").get("/connections/elsewhere/pending")
    assert answer.status_code == 403


def test_connections_list_shows_only_connections_with_an_app_of_yours(
    signed_in: Callable[[str], FlaskClient],
) -> None:
    clerk = signed_in("clerk").get("/connections")
    # The clerk holds a role in `other` on venue: the connection shows, venue's board does not.
    assert clerk.status_code == 200
    assert 'id="connection-venue"' in clerk.text
    board = 'href="/apps/venue/venue/orders" class="board-link"'
    assert board not in clerk.text
    manager = signed_in("manager").get("/connections")
    assert board in manager.text


def test_wrong_password_is_refused(screens_site: Site) -> None:
    client = screens_site.app.test_client()
    token = csrf_of(client.get("/signin").text)
    answer = client.post(
        "/signin", data={"email": "manager@venue.test", "password": "nope", "csrf_token": token}
    )
    assert answer.status_code == 401
    assert "do not match" in answer.text
    assert client.get("/connections").status_code == 302


def test_sign_in_without_csrf_token_is_refused(screens_site: Site) -> None:
    client = screens_site.app.test_client()
    answer = client.post("/signin", data={"email": "manager@venue.test", "password": PASSWORD})
    assert answer.status_code == 400
    assert client.get("/connections").status_code == 302


def test_move_without_csrf_token_is_refused_and_row_stays(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    key = add_order(screens_site, at("2026-07-10 11:30"))
    client = signed_in("manager")
    answer = client.post(
        f"/apps/venue/venue/orders/{key}/move", data={"to": "confirmed", "seen": "placed"}
    )
    assert answer.status_code == 400
    assert screens_site.row("orders", key)["status"] == "placed"


def test_move_with_csrf_header_goes_through_the_pipeline(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    key = add_order(screens_site, at("2026-07-10 11:30"))
    client = signed_in("manager")
    token = csrf_of(client.get(f"/apps/venue/venue/orders/{key}").text)
    answer = client.post(
        f"/apps/venue/venue/orders/{key}/move",
        data={"to": "confirmed", "seen": "placed"},
        headers={"X-CSRFToken": token, "HX-Request": "true"},
    )
    assert answer.status_code == 200
    assert f'id="detail-orders-{key}"' in answer.text
    assert screens_site.row("orders", key)["status"] == "confirmed"
    entry = screens_site.audit()[-1]
    assert (entry["actor"], entry["move_from"], entry["move_to"]) == (
        "manager@venue.test",
        "placed",
        "confirmed",
    )


def test_pause_needs_a_role_in_every_app_of_the_connection(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    # The manager holds a role in `venue` only, not in `other` on the same connection.
    client = signed_in("manager")
    token = csrf_of(client.get("/connections").text)
    assert "Pause" not in client.get("/connections/venue").text
    answer = client.post("/connections/venue/pause", headers={"X-CSRFToken": token})
    assert answer.status_code == 403
    admin = signed_in("admin")
    token = csrf_of(admin.get("/connections").text)
    answer = admin.post("/connections/venue/pause", headers={"X-CSRFToken": token})
    assert answer.status_code == 200
    assert "paused" in answer.text
    assert "Resume" in answer.text
    answer = admin.post("/connections/venue/resume", headers={"X-CSRFToken": token})
    assert "Pause" in answer.text


@pytest.mark.parametrize(
    ("base_url", "secure"),
    [("http://localhost", False), ("https://localhost", True)],
    ids=["plain-http-not-secure", "https-secure"],
)
def test_session_cookie_is_httponly_lax_and_secure_over_https(
    screens_site: Site, base_url: str, secure: bool
) -> None:
    client = screens_site.app.test_client()
    page = client.get("/signin", base_url=base_url)
    # Over https Flask-WTF also checks the Referer is this site, as a browser sends it.
    answer = client.post(
        "/signin",
        base_url=base_url,
        headers={"Referer": f"{base_url}/signin"},
        data={
            "email": "manager@venue.test",
            "password": PASSWORD,
            "csrf_token": csrf_of(page.text),
        },
    )
    cookie = answer.headers["Set-Cookie"]
    assert "HttpOnly" in cookie
    assert "SameSite=Lax" in cookie
    assert ("Secure" in cookie) is secure


def test_websocket_refuses_a_signed_out_client(screens_site: Site) -> None:
    answer = screens_site.app.test_client().get(
        "/live?screen=board&connection=venue&app=venue&table=orders",
        headers={
            "Upgrade": "websocket",
            "Connection": "Upgrade",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
            "Sec-WebSocket-Version": "13",
        },
    )
    assert answer.status_code == 403


def test_websocket_refuses_a_role_of_another_app(
    signed_in: Callable[[str], FlaskClient],
) -> None:
    answer = signed_in("clerk").get(
        "/live?screen=board&connection=venue&app=venue&table=orders",
        headers={
            "Upgrade": "websocket",
            "Connection": "Upgrade",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
            "Sec-WebSocket-Version": "13",
        },
    )
    assert answer.status_code == 403


def test_connection_whose_database_does_not_answer_says_so(
    screens_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    # A connection to a database nobody made: its card names the trouble, its lists answer 502.
    with screens_site.app.app_context():
        add_connection(db.session, "gone", "postgresql://postgres@127.0.0.1:1/nowhere", None)
        save_app(db.session, "gone", {**api_manifest(), "name": "ghost", "schema": "ghost"})
    admin = signed_in("admin")
    page = admin.get("/connections").text
    card = page[page.index('id="connection-gone"') :]
    assert "does not answer" in card
    answer = admin.get("/apps/gone/ghost/orders/1")
    assert answer.status_code == 502
    assert "DATABASE_REFUSED" in answer.text
