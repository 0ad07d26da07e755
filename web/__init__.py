"""The web process: Flask app factory."""

from __future__ import annotations

import logging
import os
import secrets
from typing import Any

from flask import Flask, current_app, send_from_directory
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.wrappers import Response

from services import models
from web import (
    api,
    context,
    errors,
    headers,
    language,
    live,
    metrics,
    openapi,
    public,
    screens,
    status,
    throttle,
)

log = logging.getLogger(__name__)


def _passing_secret() -> str:
    """A key for this process alone when SECRET_KEY is unset: sign-ins end when it stops."""
    log.warning("SECRET_KEY is not set: sessions last only as long as this process")
    return secrets.token_hex(32)


def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    """Create the web app; configuration comes from the environment unless a test gives it."""
    app = Flask(__name__, template_folder="../templates", static_folder="../static")
    app.config.from_mapping(
        SECRET_KEY=os.environ.get("SECRET_KEY") or _passing_secret(),
        DATABASE_URL=os.environ.get("DATABASE_URL", ""),
        REDIS_URL=os.environ.get("REDIS_URL", ""),
        # A body over 1 MiB is refused unread: 413 REQUEST_TOO_LARGE.
        MAX_CONTENT_LENGTH=1024 * 1024,
        # Proxies trusted in front of the web (ADMINIUM_PROXY_HOPS): the address a sign-in
        # is counted for is then the person's, not the proxy's.
        PROXY_HOPS=int(os.environ.get("ADMINIUM_PROXY_HOPS") or 0),
    )
    if test_config:
        app.config.from_mapping(test_config)
    hops = int(app.config["PROXY_HOPS"])
    if hops > 0:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops)  # type: ignore[method-assign]

    models.init_app(app)
    context.init_app(app)
    language.init_app(app)
    app.register_blueprint(status.bp)
    errors.init_app(app)
    app.register_blueprint(api.bp)
    app.register_blueprint(public.bp)
    app.register_blueprint(openapi.bp)
    screens.init_app(app, exempt=(api.bp, public.bp))
    live.init_app(app)
    metrics.init_app(app)
    throttle.init_app(app, public=public.bp)
    headers.init_app(app)
    app.add_url_rule("/favicon.ico", "favicon", _favicon)
    return app


def _favicon() -> Response:
    """The browser's own ask for an icon: the screens' icon (an SVG), not a 404."""
    folder = str(current_app.static_folder)
    return send_from_directory(folder, "favicon.svg", mimetype="image/svg+xml", max_age=86400)
