"""A live push shows a user only what the page itself shows them: an app of the same name
on another connection is no reason to link this connection's."""

from __future__ import annotations

import pytest
import redis
from simple_websocket import Client

from services.apps import save_app
from services.connections import add_connection
from services.events import Publisher
from services.models import db
from services.users import add_user
from tests.integration.api_fixtures import Site, api_manifest
from tests.integration.screens_fixtures import PASSWORD, sign_in

pytestmark = pytest.mark.integration

SPLIT = "split@venue.test"
"""A clerk of venue/other who is also staff of annex/extra, and holds nothing in annex/other."""


@pytest.fixture(scope="module")
def annex(screens_site: Site) -> str:
    """A second connection with two apps, `other` (as venue has) and `extra`; SPLIT's roles."""
    with screens_site.app.app_context():
        add_connection(db.session, "annex", "postgresql://postgres@127.0.0.1:1/annex", None)
        for name in ("other", "extra"):
            save_app(db.session, "annex", {**api_manifest(), "name": name, "schema": name})
        add_user(db.session, SPLIT, "clerk", "venue/other", password=PASSWORD)
        add_user(db.session, SPLIT, "staff", "annex/extra")
    return "annex"


def card_of(page: str, connection: str) -> str:
    """One connection's card out of a page or a pushed fragment."""
    start = page.index(f'id="connection-{connection}"')
    return page[start : page.index("</article>", start)]


def test_a_pushed_card_links_only_the_apps_its_page_shows(
    screens_site: Site, annex: str, base_url: str, redis_url: str
) -> None:
    client = screens_site.app.test_client()
    sign_in(client, SPLIT)
    page = card_of(client.get("/connections").text, annex)
    assert "/apps/annex/extra/orders" in page
    assert "/apps/annex/other/" not in page
    cookie = client.get_cookie("session")
    assert cookie is not None
    socket = Client.connect(
        f"ws://{base_url}/live?screen=connections",
        headers={"Cookie": f"session={cookie.value}"},
    )
    publisher = Publisher(redis.Redis.from_url(redis_url), owned=True)
    try:
        publisher.pause(annex, True)
        message = ""
        while 'id="connection-annex"' not in message:
            message = socket.receive(timeout=10.0) or ""
            assert message, "no card pushed"
    finally:
        socket.close()
        publisher.close()
    pushed = card_of(message, annex)
    assert "/apps/annex/extra/orders" in pushed
    assert "/apps/annex/other/" not in pushed
