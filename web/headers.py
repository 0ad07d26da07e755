"""Security headers on every answer, screen or API.

The screens keep the Content-Security-Policy: their script is htmx, its ws extension and
static/js, all served from static/, with no inline script, handler or style attribute;
their one socket goes to this host. HSTS is sent only over https (on plain http a
browser ignores it, and a local `make run` must stay reachable). Every answer the app makes
itself is `Cache-Control: no-store` (signed-in pages, API rows, a guest's row): nothing a
browser or a proxy in between keeps for the next person at that computer; a static file
keeps the caching its view gave it.
"""

from __future__ import annotations

from flask import Flask, request
from werkzeug.wrappers import Response

POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self' ws://{host} wss://{host}; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
)
"""The Content-Security-Policy; `{host}` is the request's host (its socket's too)."""

HSTS = "max-age=31536000; includeSubDomains"
NO_STORE = "no-store"


def add_security_headers(response: Response) -> Response:
    """Put the security headers on an answer (a view's own values stay)."""
    headers = response.headers
    headers.setdefault("Content-Security-Policy", POLICY.format(host=request.host))
    headers.setdefault("X-Content-Type-Options", "nosniff")
    headers.setdefault("X-Frame-Options", "DENY")
    headers.setdefault("Referrer-Policy", "same-origin")
    headers.setdefault("Cache-Control", NO_STORE)
    if request.is_secure:
        headers.setdefault("Strict-Transport-Security", HSTS)
    return response


def init_app(app: Flask) -> None:
    """Send the security headers on every answer of the app."""
    app.after_request(add_security_headers)
