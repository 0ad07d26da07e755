"""The web says it is up; to a signed-in user, which database and Redis it uses, never a
password (the masking itself: test_hardening_urls.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from flask.testing import FlaskClient

from tests.integration.api_fixtures import Site

pytestmark = pytest.mark.integration


def test_status_names_both_servers(signed_in: Callable[[str], FlaskClient]) -> None:
    page = signed_in("staff").get("/status").get_data(as_text=True)
    assert "Adminium is up" in page
    assert "PostgreSQL 1" in page
    assert "Redis " in page and "does not answer" not in page


def test_status_says_a_silent_redis_in_the_readers_language(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing listens on port 1: Redis refuses the connection, in German to a German browser.
    monkeypatch.setitem(screens_site.app.config, "REDIS_URL", "redis://127.0.0.1:1/0")
    client = signed_in("staff")
    german = client.get("/status", headers={"Accept-Language": "de"}).get_data(as_text=True)
    assert (
        "— Redis antwortet nicht (ConnectionError): Bis es antwortet, wird kein Durchlauf"
        " eingereiht</dd>"
    ) in german
    english = client.get("/status").get_data(as_text=True)
    assert "Redis does not answer (ConnectionError): no sweep is enqueued until it does" in english
