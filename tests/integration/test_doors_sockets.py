"""A new password, a role given or taken away and a user removed close the user's open live
sockets in every web process, as signing out does: two real web processes (the Procfile's
gunicorn line), a socket open on each, the change made with the console command."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from click.testing import CliRunner
from simple_websocket import Client, ConnectionClosed

from adminium.cli import main
from services.models import db
from services.users import add_user
from tests.integration.api_fixtures import Site
from tests.integration.procfile_web import procfile_webs
from tests.integration.screens_fixtures import PASSWORD, sign_in
from web.live.endpoint import SIGNED_OUT, SIGNED_OUT_MESSAGE

pytestmark = pytest.mark.integration

BOARD = "/live?screen=board&connection=venue&app=venue&table=orders&q=&state="
CHANGES: dict[str, tuple[list[str], str | None]] = {
    "new_password": (
        ["user", "add", "{email}", "--role", "staff", "--app", "venue/venue", "--password-stdin"],
        "an entirely new password\n",
    ),
    "role_given": (["user", "add", "{email}", "--role", "manager", "--app", "venue/venue"], None),
    "role_taken": (["user", "remove", "{email}", "--role", "staff", "--app", "venue/venue"], None),
    "user_removed": (["user", "remove", "{email}"], None),
}


@pytest.fixture(scope="module")
def webs(screens_site: Site) -> Iterator[tuple[int, int]]:
    """Two web processes of the Procfile's line on the same site: their ports."""
    with procfile_webs(screens_site.app.config, 2) as (one, two):
        yield one, two


def signed_in_cookie(site: Site, email: str) -> str:
    """A new staff user of the venue, signed in through the form: the session cookie."""
    with site.app.app_context():
        add_user(db.session, email, "staff", "venue/venue", password=PASSWORD)
    client = site.app.test_client()
    sign_in(client, email)
    cookie = client.get_cookie("session")
    assert cookie is not None
    return f"session={cookie.value}"


def closing(socket: Client, bound: float = 10.0) -> tuple[list[str], int | None]:
    """What a socket receives until the server closes it (bounded): messages, close code."""
    received: list[str] = []
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        try:
            message = socket.receive(timeout=0.5)
        except ConnectionClosed as closed:
            return received, closed.reason
        if message is not None:
            received.append(str(message))
    return received, None


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_the_change_closes_the_users_sockets_in_every_web_process(
    screens_site: Site, webs: tuple[int, int], change: str
) -> None:
    email = f"door-{change.replace('_', '-')}@venue.test"
    cookie = signed_in_cookie(screens_site, email)
    bystander = signed_in_cookie(screens_site, f"bystander-{change.replace('_', '-')}@venue.test")
    sockets = [
        Client.connect(f"ws://127.0.0.1:{port}{BOARD}", headers={"Cookie": cookie}) for port in webs
    ]
    other = Client.connect(f"ws://127.0.0.1:{webs[0]}{BOARD}", headers={"Cookie": bystander})
    try:
        args, stdin = CHANGES[change]
        config = screens_site.app.config
        result = CliRunner().invoke(
            main,
            [arg.format(email=email) for arg in args],
            input=stdin,
            env={"DATABASE_URL": config["DATABASE_URL"], "REDIS_URL": config["REDIS_URL"]},
        )
        assert result.exit_code == 0, result.output
        for port, socket in zip(webs, sockets, strict=True):
            received, code = closing(socket)
            assert (SIGNED_OUT_MESSAGE in received, code) == (True, SIGNED_OUT), port
        # Someone else's screen on the same process stays open.
        assert other.connected
    finally:
        for socket in [*sockets, other]:
            if socket.connected:
                socket.close()
