"""The screens: sign in, connections, boards, rows, pending timed moves, set-aside rows.

`init_app` adds CSRF protection (Flask-WTF) to every form, a session cookie that is
HttpOnly, SameSite=Lax and Secure over https, the screens' blueprints and the venue-clock
template filters. The APIs keep their own token auth and are exempt from CSRF.
"""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

from flask import Flask, request
from flask.sessions import SecureCookieSessionInterface
from flask_wtf.csrf import CSRFProtect

from services.models import Connection
from web.language import SIGNED_IN
from web.screens import (
    all_day,
    auth,
    bar,
    boards,
    bump,
    clock_log,
    connections,
    labels,
    outbox,
    pending,
    rows,
    samples,
    set_aside,
    speaking,
    times,
    webhooks,
    words,
)
from web.screens.access import signed_in_user
from web.screens.clock_health import stall_of
from web.screens.samples import has_sample

csrf = CSRFProtect()


class SessionCookies(SecureCookieSessionInterface):
    """The signed session cookie, marked Secure whenever the request came over https."""

    def get_cookie_secure(self, app: Flask) -> bool:  # type: ignore[override]
        """Secure when configured so, or when this request is https."""
        return bool(app.config["SESSION_COOKIE_SECURE"]) or request.is_secure


def init_app(app: Flask, exempt: tuple[object, ...] = ()) -> None:
    """Register the screens on the app; `exempt` blueprints (the APIs) take no CSRF token."""
    app.config.setdefault("SESSION_COOKIE_HTTPONLY", True)
    app.config["SESSION_COOKIE_SAMESITE"] = app.config.get("SESSION_COOKIE_SAMESITE") or "Lax"
    app.session_interface = SessionCookies()
    csrf.init_app(app)
    for blueprint in exempt:
        csrf.exempt(blueprint)  # type: ignore[arg-type]
    for module in (
        auth,
        connections,
        boards,
        rows,
        pending,
        set_aside,
        samples,
        outbox,
        webhooks,
        clock_log,
        bump,
        all_day,
    ):
        app.register_blueprint(module.bp)
    webhooks.init_app(app, csrf)
    times.init_app(app)
    labels.init_app(app)
    bar.init_app(app)
    words.init_app(app)
    speaking.init_app(app)
    app.context_processor(_screen_globals)
    app.extensions[SIGNED_IN] = signed_in_user  # the language of the user who signed in


def zone_of(connection: Connection) -> ZoneInfo:
    """A connection's venue zone (UTC when none is set)."""
    return ZoneInfo(connection.zone_name)


def _screen_globals() -> dict[str, Any]:
    """What every template may use: the signed-in user, a connection's zone, whether its
    sweep has stalled, whether an app keeps a sample set."""
    return {
        "screen_user": signed_in_user(),
        "zone_of": zone_of,
        "stall_of": stall_of,
        "has_sample": has_sample,
    }
