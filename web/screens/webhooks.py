"""Webhook screens of a connection: its webhooks (managers), its deliveries with each try,
and the demo receiver's "Recent webhook calls" (managers); plus the receiver itself.

A webhook serves every app of its connection, so seeing the list (its URLs, credentials
hidden; never a secret) takes what pausing takes: an admin, or a role in each app. The
Deliveries screen shows the deliveries of the apps the user holds a role in, and anyone
who sees one may send a failed one again; the receiver's replies (their first 500 bytes,
and what was said of a receiver that gave none) are shown, and Drop offered, only to the
app's managers (`manager` or `admin`): a reply can carry what an internal service says.
Both lists refresh every few seconds while open.

`POST /receiver/<connection>/<webhook>` is the receiver `make run` points the demo's
webhook at: no sign-in and no CSRF token (a webhook carries neither); it answers 204 to a
call signed with that webhook's secret and 401 to anything else (`services.webhook_receiver`).
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Blueprint, Flask, render_template, request
from flask_wtf.csrf import CSRFProtect
from werkzeug.wrappers import Response

from services.deliveries import app_deliveries, drop, send_again_now
from services.models import Connection, db
from services.storage import connection_engine
from services.webhook_receiver import receive_named, recent_calls
from services.webhooks import list_webhooks
from web.context import clock, publisher
from web.errors import Forbidden, NotFound
from web.screens.access import (
    is_htmx,
    is_manager,
    may_pause,
    require_user,
    roles_of,
    screen_blueprint,
    screen_connection,
)
from web.screens.outbox import refuse_drop

log = logging.getLogger(__name__)

bp = screen_blueprint("webhooks", __name__)
receiver_bp = Blueprint("receiver", __name__)

SHOWN = 100
"""The newest deliveries the screen lists."""


def init_app(app: Flask, csrf: CSRFProtect) -> None:
    """Register the receiver, which takes no CSRF token (a webhook carries none)."""
    csrf.exempt(receiver_bp)
    app.register_blueprint(receiver_bp)


def managed_connection(name: str) -> Connection:
    """A connection whose webhooks the signed-in user may see: an admin, or a role in each
    of its apps (a webhook serves all of them, as a pause stops all of them)."""
    connection, _ = screen_connection(name)
    if not may_pause(require_user(), connection):
        raise Forbidden(
            "a connection's webhooks serve every app of it: seeing them needs a role in each",
            {"connection": name},
        )
    return connection


@bp.get("/connections/<name>/webhooks")
def show_webhooks(name: str) -> str:
    """A connection's webhooks: names and URLs (credentials hidden), never a secret."""
    connection = managed_connection(name)
    return render_template(
        "screens/webhooks.html",
        connection=connection,
        webhooks=list_webhooks(db.session, name),
        now=clock(),
    )


def deliveries_context(name: str) -> dict[str, Any]:
    """What the Deliveries page and its list render."""
    connection, apps = screen_connection(name)
    engine = connection_engine(connection)
    user = require_user()
    return {
        "connection": connection,
        "deliveries": app_deliveries(engine, [a.name for a in apps], limit=SHOWN),
        "may_manage": may_pause(user, connection),
        "managed": frozenset(a.name for a in apps if is_manager(roles_of(user, a))),
        "now": clock(),
    }


@bp.get("/connections/<name>/deliveries")
def show_deliveries(name: str) -> str:
    """The Deliveries page: each event, its tries, Send again (its list alone to htmx)."""
    template = "screens/_deliveries.html" if is_htmx() else "screens/deliveries.html"
    return render_template(template, **deliveries_context(name))


@bp.post("/connections/<name>/deliveries/<int:delivery>/send-again")
def send_delivery_again(name: str, delivery: int) -> str:
    """Send a failed delivery again; the list as it is now."""
    connection, apps = screen_connection(name)
    app = request.form.get("app", "")
    if app not in {a.name for a in apps}:
        raise NotFound(f"no delivery {delivery} here", {"delivery": delivery})
    send_again_now(
        connection_engine(connection),
        name,
        delivery,
        app,
        now=clock(),
        publisher=publisher(),
        actor=require_user().email,
    )
    return render_template("screens/_deliveries.html", **deliveries_context(name))


@bp.post("/connections/<name>/deliveries/<int:delivery>/drop")
def drop_delivery(name: str, delivery: int) -> str:
    """Drop a delivery that has not gone (a manager of its app): never posted; the list."""
    connection, apps = screen_connection(name)
    found = {a.name: a for a in apps}.get(request.form.get("app", ""))
    if found is None:
        raise NotFound(f"no delivery {delivery} here", {"delivery": delivery})
    user = require_user()
    if not is_manager(roles_of(user, found)):
        raise Forbidden(
            "dropping a delivery needs the manager or admin role in its app",
            {"connection": name, "app": found.name},
        )
    answer = drop(
        connection_engine(connection), delivery, found.name, now=clock(), actor=user.email
    )
    refuse_drop(answer, "delivery", delivery)
    return render_template("screens/_deliveries.html", **deliveries_context(name))


@bp.get("/connections/<name>/receiver")
def show_calls(name: str) -> str:
    """Recent webhook calls the demo receiver verified, newest first."""
    connection = managed_connection(name)
    template = "screens/_calls.html" if is_htmx() else "screens/calls.html"
    return render_template(
        template,
        connection=connection,
        calls=recent_calls(publisher().client, name),
        now=clock(),
    )


@receiver_bp.post("/receiver/<connection>/<webhook>")
def receive_call(connection: str, webhook: str) -> Response:
    """The demo receiver: 204 for a call signed with the webhook's secret, else 401 (a name
    that does not exist too: the answer says nothing of which names do)."""
    headers = {k.lower(): v for k, v in request.headers.items()}
    client, body = publisher().client, request.get_data()
    if not receive_named(db.session, client, connection, webhook, body, headers, clock()):
        return Response("signature refused\n", 401, mimetype="text/plain")
    return Response(status=204)
