"""Every answer, screen or API, carries the security headers; HSTS only over https."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from tests.integration.api_fixtures import Site

pytestmark = pytest.mark.integration

PATHS = ["/signin", "/status", "/connections", "/api/openapi.json", "/api/apps", "/nowhere"]


@pytest.mark.parametrize("path", PATHS)
def test_every_answer_carries_the_security_headers(
    signed_in: Callable[[str], FlaskClient], path: str
) -> None:
    answer = signed_in("staff").get(path)
    policy = answer.headers["Content-Security-Policy"]
    directives = {
        name: value for name, _, value in (p.strip().partition(" ") for p in policy.split(";"))
    }
    assert directives["default-src"] == "'self'"
    assert directives["script-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'"
    assert directives["connect-src"] == "'self' ws://localhost wss://localhost"
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    assert answer.headers["X-Frame-Options"] == "DENY"
    assert answer.headers["Referrer-Policy"] == "same-origin"
    assert answer.headers["Cache-Control"] == "no-store"
    assert "Strict-Transport-Security" not in answer.headers


def test_a_guest_s_row_and_an_api_row_are_not_stored(shared_site: Site) -> None:
    client = shared_site.app.test_client()
    for path, headers in (
        ("/public/venue/venue/tickets/" + "x" * 16, {}),
        ("/api/apps/venue/venue/tables/orders/rows", shared_site.headers("staff")),
    ):
        assert client.get(path, headers=headers).headers["Cache-Control"] == "no-store"
    # A static file keeps its own caching (revalidated, not refused).
    static = client.get("/static/js/live.js")
    static.close()
    assert static.status_code == 200 and "no-store" not in static.headers["Cache-Control"]


def test_hsts_only_over_https(screens_site: Site) -> None:
    answer = screens_site.app.test_client().get("/signin", base_url="https://localhost")
    assert answer.headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"


TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


@pytest.mark.parametrize(
    "template", sorted(TEMPLATES.rglob("*.html")), ids=lambda p: str(p.relative_to(TEMPLATES))
)
def test_no_template_has_inline_script_or_handlers(template: Path) -> None:
    # The policy refuses them: a screen's script lives in static/.
    text = template.read_text()
    assert not re.search(r"<script(?![^>]*\bsrc=)", text), "inline <script>"
    assert not re.search(r"\son[a-z]+\s*=", text), "an on… handler attribute"
    assert not re.search(r"\shx-on", text), "hx-on runs inline script"
    assert "style=" not in text, "an inline style attribute"


def test_gunicorns_own_answers_share_the_apps_headers(shared_site: Site) -> None:
    # adminium/web_worker.py cannot import the web app; its copy is held to the app's.
    from adminium.web_worker import SECURITY_HEADERS

    answer = shared_site.app.test_client().get("/status")
    for name, value in SECURITY_HEADERS:
        if name != "Content-Security-Policy":  # an error page's own: it loads nothing
            assert answer.headers[name] == value, name
