"""Sign in and sign out of the screens (a session cookie; CSRF on both forms)."""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from flask import Blueprint, redirect, render_template, request, session, url_for
from flask_babel import gettext as _
from werkzeug.wrappers import Response

from services.demo_account import DEMO_EMAIL, DEMO_PASSWORD, demo_signs_in
from services.models import db
from services.users import choose_locale, end_sessions, user_by_password
from web.context import publisher
from web.screens.access import require_user, signed_in_user, start_session

log = logging.getLogger(__name__)

bp = Blueprint("auth", __name__)


def _safe_next(target: str | None) -> str:
    """Where to go after signing in: a path on this site only, else the connections."""
    if target and is_local_path(target):
        return target
    return url_for("connections.list_connections")


def is_local_path(target: str) -> bool:
    """Whether a `next` is a plain path on this site.

    Browsers drop tabs and newlines from a URL and read `\\` as `/`, so `/<tab>/evil.example`
    or `/\\evil.example` would lead off the site: any control character, space or backslash
    refuses the target, as do a scheme, a host and a leading `//`.
    """
    if any(ord(char) <= 0x20 or ord(char) == 0x7F or char == "\\" for char in target):
        return False
    parts = urlsplit(target)
    return (
        not parts.scheme
        and not parts.netloc
        and target.startswith("/")
        and not target.startswith("//")
    )


def _demo_hint() -> tuple[str, str] | None:
    """The demo's account and password while the demo is installed and they sign in."""
    return (DEMO_EMAIL, DEMO_PASSWORD) if demo_signs_in(db.session) else None


@bp.route("/signin", methods=["GET", "POST"])
def sign_in() -> Response | tuple[str, int] | str:
    """The sign-in form; a right email and password start a session."""
    target = request.values.get("next")
    if request.method == "GET":
        if signed_in_user() is not None:
            return redirect(_safe_next(target))
        return render_template(
            "screens/sign_in.html", next=target or "", error=None, demo=_demo_hint()
        )
    email = request.form.get("email", "")
    user = user_by_password(db.session, email, request.form.get("password", ""))
    if user is None:
        log.info("sign-in refused for %s", email.strip().lower())
        page = render_template(
            "screens/sign_in.html",
            next=target or "",
            error=_("That email and password do not match."),
            demo=_demo_hint(),
        )
        return page, 401
    start_session(user)
    log.info("user %s signed in", user.id)
    return redirect(_safe_next(target))


@bp.post("/signout")
def sign_out() -> Response:
    """End the session on the server too: a copy of the cookie opens nothing after it, and
    the user's open live screens close and go to sign-in."""
    user = signed_in_user()
    if user is not None:
        end_sessions(db.session, user, publisher())
    session.clear()
    return redirect(url_for("auth.sign_in"))


@bp.post("/language")
def choose_language() -> Response:
    """The signed-in user's language (the menu's select; empty: none of their own), then
    back to the page it was chosen on."""
    user = require_user()
    choose_locale(db.session, user, request.form.get("locale", ""))
    return redirect(_safe_next(request.form.get("next")))
