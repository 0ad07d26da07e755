"""The web says it is up; to a signed-in user, which database and Redis it uses, never a
password (the masking itself: test_hardening_urls.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from flask.testing import FlaskClient

pytestmark = pytest.mark.integration


def test_status_names_both_servers(signed_in: Callable[[str], FlaskClient]) -> None:
    page = signed_in("staff").get("/status").get_data(as_text=True)
    assert "Adminium is up" in page
    assert "PostgreSQL 1" in page
    assert "Redis " in page and "does not answer" not in page
