"""Sign in and sign out of the screens (a session cookie; CSRF on both forms)."""

from __future__ import annotations

import logging

from flask import Blueprint, redirect, render_template, request, session, url_for
from werkzeug.wrappers import Response

from services.models import db
from services.users import user_by_password
from web.screens.access import USER_KEY, signed_in_user

log = logging.getLogger(__name__)

bp = Blueprint("auth", __name__)


def _safe_next(target: str | None) -> str:
    """Where to go after signing in: a path on this site only."""
    if target and target.startswith("/") and not target.startswith("//"):
        return target
    return url_for("connections.list_connections")


@bp.route("/signin", methods=["GET", "POST"])
def sign_in() -> Response | tuple[str, int] | str:
    """The sign-in form; a right email and password start a session."""
    target = request.values.get("next")
    if request.method == "GET":
        if signed_in_user() is not None:
            return redirect(_safe_next(target))
        return render_template("screens/sign_in.html", next=target or "", error=None)
    email = request.form.get("email", "")
    user = user_by_password(db.session, email, request.form.get("password", ""))
    if user is None:
        log.info("sign-in refused for %s", email.strip().lower())
        page = render_template(
            "screens/sign_in.html", next=target or "", error="That email and password do not match."
        )
        return page, 401
    session.clear()
    session[USER_KEY] = user.id
    session.permanent = True
    log.info("user %s signed in", user.id)
    return redirect(_safe_next(target))


@bp.post("/signout")
def sign_out() -> Response:
    """End the session."""
    session.clear()
    return redirect(url_for("auth.sign_in"))
