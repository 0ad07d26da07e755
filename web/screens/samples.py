"""Remove sample data from the connections screen: every sample row of one app, in one
transaction (`core.sample_rows.remove_sample`), each removal pushed to the open screens."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from flask import current_app, render_template
from sqlalchemy.exc import IntegrityError

from adminium.events import publish_events, send_to
from core.sample_rows import marked_keys, removal_events, remove_sample
from web.api import clock
from web.controlplane import app_store, first_line
from web.errors import Forbidden
from web.models import ADMIN, App, User
from web.screens.access import require_user, screen_app, screen_blueprint

log = logging.getLogger(__name__)

bp = screen_blueprint("samples", __name__)

REMOVERS = frozenset({"manager", ADMIN})
"""The roles in an app that may remove its sample data (an admin of every app may too)."""


def may_remove_sample(user: User, app: App) -> bool:
    """Whether the user holds `manager` or `admin` in the app, or is admin of every app."""
    return bool(REMOVERS & user.roles_in(app))


def removable_apps(user: User, apps: list[App]) -> frozenset[str]:
    """The names of the apps whose sample data the user may remove."""
    return frozenset(app.name for app in apps if may_remove_sample(user, app))


@bp.post("/connections/<name>/apps/<app_name>/sample/remove")
def remove_sample_data(name: str, app_name: str) -> str:
    """Remove every sample row of the app; answer how many rows of each table went."""
    app, _ = screen_app(name, app_name)
    if not may_remove_sample(require_user(), app):
        raise Forbidden(
            "removing sample data needs the manager or admin role in the app",
            {"connection": name, "app": app_name},
        )
    store = app_store(app)
    keys = marked_keys(store)
    try:
        removed = remove_sample(store, now=clock())
    except IntegrityError as error:
        log.info("sample data of %s/%s not removed: %s", name, app_name, first_line(error))
        return render_template(
            "screens/_sample_removed.html", app=app, refused=first_line(error), removed={}
        )
    publish_removed(name, app_name, {t: keys.get(t, set()) for t in removed})
    log.info("sample data of %s/%s removed from the screens: %s", name, app_name, removed)
    return render_template(
        "screens/_sample_removed.html", app=app, removed=removed, total=sum(removed.values())
    )


def publish_removed(connection: str, app: str, keys: Mapping[str, set[str]]) -> None:
    """One row event per removed row (`"removed": true`): open boards drop the cards."""
    events = removal_events(connection, app, keys)
    if events:
        send_to(
            current_app.config.get("REDIS_URL"),
            lambda c: publish_events(c, events, {"removed": True}),
            f"sample removal of {connection}/{app}",
        )
