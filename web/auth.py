"""Who asks the REST API: the user holding the bearer token sent.

`current_user()` reads `Authorization: Bearer <token>`; a token sent is the only thing
judged. `register_session_loader` is a hook for session sign-in: a loader registered
with it is asked only when no bearer token is sent. Nothing registers one today (the
screens keep their own session sign-in, `web/screens/access.py`, and do not call it), so
the API knows token holders only. A loader must only answer for requests protected
against cross-site forgery (the API takes no CSRF token).
"""

from __future__ import annotations

from collections.abc import Callable

from flask import Flask, current_app, g, request

from services.control_cache import CachedApp, CachedUser
from services.models import App, User, db
from services.users import user_by_token
from web.context import control_cache
from web.errors import Forbidden, Unauthorized

SessionLoader = Callable[[], User | None]

_EXTENSION = "adminium.session_loader"


def register_session_loader(app: Flask, loader: SessionLoader) -> None:
    """Let the API also know the person signed in to the screens (the screens' hook)."""
    app.extensions[_EXTENSION] = loader


def bearer_token() -> str | None:
    """The token of an `Authorization: Bearer <token>` header, if one is sent."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def current_user() -> User | CachedUser | None:
    """The user making this request: by token (as the process's cache of the control plane
    holds them), else by the screens' session loader."""
    if "user" in g:
        return g.user  # type: ignore[no-any-return]
    token = bearer_token()
    user: User | CachedUser | None = None
    if token:
        cache = control_cache()
        user = cache.user_by_token(db.session, token) if cache else user_by_token(db.session, token)
    loader = current_app.extensions.get(_EXTENSION)
    if user is None and token is None and loader is not None:
        user = loader()
    g.user = user
    return user


def require_user() -> User | CachedUser:
    """The signed-in user, or a 401."""
    user = current_user()
    if user is None:
        raise Unauthorized("sign in: send Authorization: Bearer <your API token>")
    return user


def roles_in(user: User | CachedUser, app: App | CachedApp) -> frozenset[str]:
    """The roles the user holds in an app (an admin holds every one), or a 403."""
    roles = user.acting_roles(app)
    if not roles:
        raise Forbidden(
            f"you hold no role in the app {app.name!r}",
            {"connection": app.connection.name, "app": app.name},
        )
    return roles
