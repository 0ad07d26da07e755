"""Signing in, hardened: only a path on this site after sign-in, throttled guesses, the same
hashing time for unknown emails, and a session that ends on the server at sign-out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner
from flask.testing import FlaskClient

from adminium.cli import main
from services import users
from services.models import db
from services.users import add_user, user_by_password
from tests.integration.api_fixtures import Site
from tests.integration.screens_fixtures import PASSWORD, csrf_of
from web import create_app
from web.live import stop_hub

pytestmark = pytest.mark.integration
FOREIGN_TARGETS = {
    "tab_then_slashes": "/\t/evil.example",
    "double_slash": "//evil.example",
    "slash_backslash": "/\\evil.example",
    "backslash_later": "/x\\..\\evil",
    "scheme": "https://evil.example/",
    "javascript": "javascript:alert(1)",
    "crlf": "/\r\n/x",
    "leading_space": " /x",
    "nul": "/x\x00y",
    "newline_then_slashes": "/\n/evil.example",
    "no_slash": "evil.example",
}


def sign_in_form(
    client: FlaskClient, email: str, password: str, *, next_: str = "", address: str = "10.0.0.1"
) -> Any:
    """Post the sign-in form from a given address."""
    page = client.get("/signin")
    return client.post(
        "/signin",
        data={
            "email": email,
            "password": password,
            "next": next_,
            "csrf_token": csrf_of(page.text),
        },
        environ_base={"REMOTE_ADDR": address},
    )


def new_user(site: Site, email: str, password: str = PASSWORD) -> None:
    """A staff user of the venue app who may sign in with `password`."""
    with site.app.app_context():
        add_user(db.session, email, "staff", "venue/venue", password=password)


# --- 2. where sign-in leads -------------------------------------------------------------


@pytest.mark.parametrize("target", FOREIGN_TARGETS.values(), ids=FOREIGN_TARGETS.keys())
def test_signed_in_get_never_leaves_the_site(
    signed_in: Callable[[str], FlaskClient], target: str
) -> None:
    answer = signed_in("staff").get("/signin", query_string={"next": target})
    assert answer.status_code == 302
    assert answer.headers["Location"] == "/connections"


@pytest.mark.parametrize("target", FOREIGN_TARGETS.values(), ids=FOREIGN_TARGETS.keys())
def test_sign_in_post_never_leaves_the_site(screens_site: Site, target: str) -> None:
    client = screens_site.app.test_client()
    answer = sign_in_form(client, "staff@venue.test", PASSWORD, next_=target, address="10.2.0.1")
    assert answer.status_code == 302
    assert answer.headers["Location"] == "/connections"


@pytest.mark.parametrize(
    "target", ["/apps/venue/venue/orders?q=soup&state=", "/status", "/connections/venue/pending"]
)
def test_sign_in_keeps_a_path_on_this_site(screens_site: Site, target: str) -> None:
    client = screens_site.app.test_client()
    answer = sign_in_form(client, "staff@venue.test", PASSWORD, next_=target, address="10.2.0.2")
    assert answer.headers["Location"] == target


# --- 3. throttling and timing -----------------------------------------------------------


def test_guessing_one_account_throttles_the_guesser_not_the_account(screens_site: Site) -> None:
    new_user(screens_site, "guessed@venue.test")
    client = screens_site.app.test_client()
    for _ in range(10):
        wrong = sign_in_form(client, "guessed@venue.test", "wrong", address="10.3.0.1")
        assert wrong.status_code == 401
    # The guesser's address is throttled for that account, even with the right password.
    answer = sign_in_form(client, "Guessed@venue.test ", PASSWORD, address="10.3.0.1")
    assert answer.status_code == 429
    assert "Too many sign-in attempts" in answer.text
    assert int(answer.headers["Retry-After"]) > 0
    # The account's owner, from anywhere else, signs in.
    owner = screens_site.app.test_client()
    assert (
        sign_in_form(owner, "guessed@venue.test", PASSWORD, address="10.3.1.1").status_code == 302
    )


def test_one_ipv6_network_counts_as_one_address(screens_site: Site) -> None:
    new_user(screens_site, "v6@venue.test")
    client = screens_site.app.test_client()
    for host in range(10):  # ten hosts of one /64
        wrong = sign_in_form(client, "v6@venue.test", "wrong", address=f"2001:db8:0:1::{host:x}")
        assert wrong.status_code == 401
    refused = sign_in_form(client, "v6@venue.test", PASSWORD, address="2001:db8:0:1::ff")
    assert refused.status_code == 429
    assert (
        sign_in_form(client, "v6@venue.test", PASSWORD, address="2001:db8:0:2::1").status_code
        == 302
    )


def test_an_admin_unlocks_an_account(screens_site: Site) -> None:
    new_user(screens_site, "locked@venue.test")
    new_user(screens_site, "other@venue.test")
    client = screens_site.app.test_client()
    for email in ("locked@venue.test", "other@venue.test"):
        for _ in range(10):
            assert sign_in_form(client, email, "wrong", address="10.3.2.1").status_code == 401
    config = screens_site.app.config
    printed = CliRunner().invoke(
        main,
        ["user", "unlock", "Locked@venue.test"],
        env={"DATABASE_URL": config["DATABASE_URL"], "REDIS_URL": config["REDIS_URL"]},
    )
    assert printed.exit_code == 0, printed.output
    assert printed.output == "sign-in of locked@venue.test unlocked (1 address cleared)\n"
    assert (
        sign_in_form(client, "locked@venue.test", PASSWORD, address="10.3.2.1").status_code == 302
    )
    # Only that account: the other stays throttled from that address.
    client = screens_site.app.test_client()
    assert sign_in_form(client, "other@venue.test", PASSWORD, address="10.3.2.1").status_code == 429


def test_behind_a_trusted_proxy_each_person_s_address_counts(screens_site: Site) -> None:
    new_user(screens_site, "proxied@venue.test")
    config = screens_site.app.config
    behind = create_app({**config, "PROXY_HOPS": 1})
    try:
        client = behind.test_client()

        def via(address: str, password: str) -> int:
            page = client.get("/signin")
            form = {"email": "proxied@venue.test", "password": password}
            return client.post(
                "/signin",
                data={**form, "next": "", "csrf_token": csrf_of(page.text)},
                environ_base={"REMOTE_ADDR": "10.7.0.1"},  # the proxy
                headers={"X-Forwarded-For": address},
            ).status_code

        assert [via("198.51.100.7", "wrong") for _ in range(10)] == [401] * 10
        assert via("198.51.100.7", PASSWORD) == 429
        assert via("198.51.100.8", PASSWORD) == 302
    finally:
        stop_hub(behind)
        with behind.app_context():
            db.engine.dispose()


def test_guessing_many_accounts_from_one_address_is_throttled(screens_site: Site) -> None:
    new_user(screens_site, "sprayed@venue.test")
    client = screens_site.app.test_client()
    for attempt in range(30):
        wrong = sign_in_form(client, f"nobody{attempt}@venue.test", "x", address="10.4.0.1")
        assert wrong.status_code == 401
    answer = sign_in_form(client, "sprayed@venue.test", PASSWORD, address="10.4.0.1")
    assert answer.status_code == 429
    # Another address still signs the same account in.
    assert (
        sign_in_form(client, "sprayed@venue.test", PASSWORD, address="10.4.0.2").status_code == 302
    )


def test_signing_in_rightly_is_never_throttled(screens_site: Site) -> None:
    new_user(screens_site, "regular@venue.test")
    for _ in range(35):
        client = screens_site.app.test_client()
        answer = sign_in_form(client, "regular@venue.test", PASSWORD, address="10.5.0.1")
        assert answer.status_code == 302


def test_unknown_email_is_checked_against_a_hash_too(
    screens_site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    new_user(screens_site, "known@venue.test")
    checked: list[str] = []
    real = users.check_password_hash

    def spy(pwhash: str, password: str) -> bool:
        checked.append(pwhash.split("$", 1)[0])
        return real(pwhash, password)

    monkeypatch.setattr(users, "check_password_hash", spy)
    with screens_site.app.app_context():
        assert user_by_password(db.session, "known@venue.test", "wrong") is None
        assert user_by_password(db.session, "unknown@venue.test", "wrong") is None
    # Both checks ran, with the same method (and so the same cost).
    assert len(checked) == 2 and checked[0] == checked[1]


# --- 6. a session that ends ---------------------------------------------------------------


def session_cookie(client: FlaskClient) -> str:
    """The value of a client's session cookie."""
    cookie = client.get_cookie("session")
    assert cookie is not None
    return cookie.value


def with_cookie(site: Site, value: str) -> FlaskClient:
    """A new client carrying a copied session cookie."""
    client = site.app.test_client()
    client.set_cookie("session", value)
    return client


def test_a_copied_cookie_stops_working_at_sign_out(screens_site: Site) -> None:
    new_user(screens_site, "leaving@venue.test")
    client = screens_site.app.test_client()
    assert (
        sign_in_form(client, "leaving@venue.test", PASSWORD, address="10.6.0.1").status_code == 302
    )
    copied = session_cookie(client)
    assert with_cookie(screens_site, copied).get("/connections").status_code == 200

    page = client.get("/connections")
    client.post("/signout", data={"csrf_token": csrf_of(page.text)})

    answer = with_cookie(screens_site, copied).get("/connections")
    assert answer.status_code == 302
    assert answer.headers["Location"].startswith("/signin")


def test_a_new_password_ends_every_session(screens_site: Site) -> None:
    new_user(screens_site, "rotated@venue.test")
    client = screens_site.app.test_client()
    assert (
        sign_in_form(client, "rotated@venue.test", PASSWORD, address="10.6.0.2").status_code == 302
    )
    assert client.get("/connections").status_code == 200

    new_user(screens_site, "rotated@venue.test", password="a new password entirely")

    assert client.get("/connections").status_code == 302
    again = sign_in_form(
        client, "rotated@venue.test", "a new password entirely", address="10.6.0.2"
    )
    assert again.status_code == 302
    assert client.get("/connections").status_code == 200


def test_a_new_role_keeps_the_session(screens_site: Site) -> None:
    new_user(screens_site, "promoted@venue.test")
    client = screens_site.app.test_client()
    assert (
        sign_in_form(client, "promoted@venue.test", PASSWORD, address="10.6.0.3").status_code == 302
    )
    with screens_site.app.app_context():
        add_user(db.session, "promoted@venue.test", "manager", "venue/venue")
    assert client.get("/connections").status_code == 200
