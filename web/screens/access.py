"""Who is signed in to the screens, what they may see, and how a screen answers a refusal."""

from __future__ import annotations

import logging
import secrets
from typing import Any
from urllib.parse import urlsplit

from flask import Blueprint, g, redirect, render_template, request, session, url_for
from sqlalchemy import select
from sqlalchemy.exc import DBAPIError
from werkzeug.wrappers import Response

from core.basics.actors import Actor
from core.basics.errors import AdminiumError
from services.apps import app_store
from services.connections import get_connection
from services.errors import DatabaseRefused, first_line
from services.models import ADMIN, App, Connection, User, db
from web.context import lookup_app
from web.errors import Forbidden, NotFound, status_of

log = logging.getLogger(__name__)

USER_KEY = "user_id"
"""Where the session keeps the signed-in user's id."""
VERSION_KEY = "session_version"
"""Where the session keeps the user's session version at sign-in (see `start_session`)."""
SESSION_KEY = "sign_in"
"""Where the session keeps an id of this sign-in of its own (the live sockets' cap counts
by it)."""


def signed_in_user() -> User | None:
    """The user this browser signed in as, or None."""
    if "screen_user" in g:
        return g.screen_user  # type: ignore[no-any-return]
    user_id = session.get(USER_KEY)
    user = db.session.get(User, user_id) if isinstance(user_id, int) else None
    if user is not None and session.get(VERSION_KEY) != user.session_version:
        # Signed out (or given a new password) since: this cookie opens nothing.
        log.info("user %s: session ended earlier, refused", user.id)
        session.clear()
        user = None
    g.screen_user = user
    return user


def start_session(user: User) -> None:
    """Sign this browser in as the user, until sign-out or a new password."""
    session.clear()
    session[USER_KEY] = user.id
    session[VERSION_KEY] = user.session_version
    session[SESSION_KEY] = secrets.token_urlsafe(12)
    session.permanent = True
    g.screen_user = user


def require_user() -> User:
    """The signed-in user; the blueprints' hook has sent everyone else to sign in."""
    user = signed_in_user()
    if user is None:
        raise Forbidden("sign in first")
    return user


def is_htmx() -> bool:
    """Whether htmx made this request (it sends `HX-Request`)."""
    return request.headers.get("HX-Request") == "true"


def _sign_in_first() -> Response | None:
    """Before every screen: a signed-out browser goes to the sign-in page."""
    if signed_in_user() is not None:
        return None
    target = url_for("auth.sign_in", next=page_path())
    if is_htmx():
        answer = Response("", 401)
        answer.headers["HX-Redirect"] = target
        return answer
    return redirect(target)


def page_path() -> str:
    """The page to come back to after signing in: this request's own path, or for htmx
    (a fragment: a board's columns, a row's detail) the page it was made from."""
    if not is_htmx():
        return request.full_path.rstrip("?")
    parts = urlsplit(request.headers.get("HX-Current-URL", ""))
    if parts.netloc != request.host or not parts.path.startswith("/"):
        return url_for("connections.list_connections")
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _refusal_page(error: AdminiumError) -> tuple[str, int]:
    """A refusal on a screen as a page (or, for htmx, the refusal partial)."""
    status = status_of(error)
    if is_htmx():
        return render_template("screens/_refusal.html", error=error), status
    return render_template("screens/refusal.html", error=error), status


def _database_gone(error: DBAPIError) -> tuple[str, int]:
    """A connection's database that does not answer (or lacks Adminium's tables), in words."""
    log.warning("screen %s: database error %s", request.path, first_line(error))
    return _refusal_page(DatabaseRefused(f"the database did not answer: {first_line(error)}"))


def screen_blueprint(name: str, import_name: str) -> Blueprint:
    """A screens blueprint: sign-in required, refusals answered as HTML."""
    bp = Blueprint(name, import_name)
    bp.before_request(_sign_in_first)
    bp.register_error_handler(AdminiumError, _refusal_page)
    bp.register_error_handler(DBAPIError, _database_gone)
    return bp


def roles_of(user: User, app: App) -> frozenset[str]:
    """The user's roles in the app (an admin holds every one); empty when none."""
    return user.acting_roles(app)


def is_admin(user: User) -> bool:
    """Whether the user is admin of every app."""
    return any(r.role == ADMIN and r.app_id is None for r in user.roles)


MANAGERS = frozenset({"manager", ADMIN})
"""The roles in an app that may drop its emails and deliveries and read a receiver's reply."""


def is_manager(roles: frozenset[str] | set[str]) -> bool:
    """Whether these roles in an app (`roles_of`) make its manager: `manager` or `admin`."""
    return bool(MANAGERS & roles)


def may_pause(user: User, connection: Connection) -> bool:
    """Pausing stops every app of a connection: an admin, or a role in each of its apps."""
    return is_admin(user) or all(roles_of(user, app) for app in connection.apps)


def screen_app(connection: str, name: str) -> tuple[App, frozenset[str]]:
    """The app the signed-in user opens, with their roles; 404 unknown, 403 no role."""
    user = require_user()
    app = lookup_app(connection, name)
    if app is None:
        raise NotFound(f"no app {connection}/{name}", {"connection": connection, "app": name})
    roles = roles_of(user, app)
    if not roles:
        raise Forbidden(
            f"you hold no role in the app {name!r}", {"connection": connection, "app": name}
        )
    return app, roles


def visible_apps(connection: Connection, user: User) -> list[App]:
    """The connection's apps the user holds a role in."""
    return [app for app in connection.apps if roles_of(user, app)]


def screen_connection(name: str) -> tuple[Connection, list[App]]:
    """A connection and the apps of it the signed-in user sees; 403 when none."""
    user = require_user()
    try:
        connection = get_connection(db.session, name)
    except AdminiumError:
        raise NotFound(f"no connection {name!r}", {"connection": name}) from None
    apps = visible_apps(connection, user)
    if not apps:
        raise Forbidden(f"you hold no role in connection {name!r}", {"connection": name})
    return connection, apps


def all_connections(user: User) -> list[tuple[Connection, list[App]]]:
    """Every connection with an app the user sees, with those apps."""
    found = []
    for connection in db.session.scalars(select(Connection).order_by(Connection.name)):
        apps = visible_apps(connection, user)
        if apps:
            found.append((connection, apps))
    return found


def person(user: User, roles: frozenset[str]) -> Actor:
    """The actor a signed-in person writes as."""
    return Actor.person(user.email, roles)


def store_of(app: App) -> Any:
    """The pipeline's store of an app."""
    return app_store(app)
