"""/status says only "up" to a stranger; the details, masked, are for the signed-in."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from flask.testing import FlaskClient

from tests.integration.api_fixtures import Site

pytestmark = pytest.mark.integration
SECRET = "s3cret-pw"


@pytest.fixture
def leaky_urls(screens_site: Site, redis_url: str) -> Iterator[None]:
    """The site's URLs carrying a password in the forms the old masking missed."""
    config = screens_site.app.config
    before = config["DATABASE_URL"], config["REDIS_URL"]
    # The test servers trust local users, so the password is carried but not needed
    # (PostgreSQL); Redis refuses AUTH without a password set, which the page reports.
    config["DATABASE_URL"] = f"{before[0]} password={SECRET}"
    config["REDIS_URL"] = f"redis://127.0.0.1:6379/0?password={SECRET}"
    yield
    config["DATABASE_URL"], config["REDIS_URL"] = before


@pytest.mark.parametrize("path", ["/status", "/status?x=1"])
def test_signed_out_status_says_up_and_nothing_more(
    screens_site: Site, leaky_urls: None, path: str
) -> None:
    answer = screens_site.app.test_client().get(path)
    assert answer.status_code == 200
    assert "Adminium is up" in answer.text
    for detail in (SECRET, "PostgreSQL", "Redis", "127.0.0.1", "host=", "redis://", "dbname"):
        assert detail not in answer.text


def test_signed_in_status_shows_masked_urls_and_versions(
    signed_in: Callable[[str], FlaskClient], leaky_urls: None
) -> None:
    page = signed_in("staff").get("/status").text
    assert SECRET not in page
    assert "PostgreSQL 1" in page
    assert "postgresql://" in page and ":***@" in page
    assert "redis://127.0.0.1:6379/0?password=***" in page


def test_signed_out_home_leads_to_sign_in(screens_site: Site) -> None:
    answer = screens_site.app.test_client().get("/")
    assert answer.status_code == 302
    assert answer.headers["Location"].startswith("/signin")


def test_signed_in_home_leads_to_the_connections(
    signed_in: Callable[[str], FlaskClient],
) -> None:
    answer = signed_in("staff").get("/")
    assert answer.status_code == 302
    assert answer.headers["Location"] == "/connections"
