"""Issue 21 item 1: while Redis does not answer, `/status` says so in those words."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from flask.testing import FlaskClient

from tests.integration.api_fixtures import Site
from tests.integration.launching import free_port

pytestmark = pytest.mark.integration


def test_status_says_redis_does_not_answer_while_it_is_away(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nobody listens on this port: a Redis that has gone away.
    monkeypatch.setitem(screens_site.app.config, "REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    page = signed_in("staff").get("/status").get_data(as_text=True)
    assert "Adminium is up" in page and "PostgreSQL 1" in page
    assert "Redis does not answer (ConnectionError): no sweep is enqueued until it does" in page
