"""Throttles (Flask-Limiter): sign-in's wrong passwords counted per account *from* an address
and per address; the public guest API's requests counted per address.

Only refused sign-ins count, so people who type their password right are never slowed. An
account is throttled only for the address its wrong passwords came from: a stranger who
types a manager's email ten times locks out the stranger, never the manager signing in from
elsewhere. An IPv6 address counts by its /64 (what one household or server is handed). A
guest's every request under /public counts, so one address cannot walk link codes or load
the venue's database faster than `PUBLIC_LIMIT`.
The counts live in the Redis the product already runs (REDIS_URL), shared by every web
process; without REDIS_URL, or while Redis is away, in this process's memory. Each app
has its own Limiter (Flask-Limiter keeps one app's storage per instance) and its own key
prefix, so two control planes on one Redis do not share counts.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import time

from flask import Blueprint, Flask, current_app, jsonify, render_template, request
from flask_limiter import Limiter
from flask_limiter.errors import RateLimitExceeded
from werkzeug.wrappers import Response

from services import redis_client
from services.sign_in_limits import account_counter, key_prefix
from web.errors import TOO_MANY, guest_error

log = logging.getLogger(__name__)

ACCOUNT_LIMIT = "10 per 15 minutes"
"""Refused sign-ins one email may have from one address before it is throttled there."""
ADDRESS_LIMIT = "30 per 15 minutes"
"""Refused sign-ins one address may have, for any emails, before it is throttled."""
PUBLIC_LIMIT = "120 per minute"
"""Requests one address may make of the public API (any rows) before it is throttled: a
guest's page asks a few times a minute, a venue's shared Wi-Fi many guests' worth."""
REFUSED = 401
"""The status of a refused sign-in: the only answer that counts."""

_EXTENSION = "adminium.limiter"


def account_key() -> str:
    """The email a sign-in names, as the users table keeps it, and the address it comes from
    (`services.sign_in_limits` clears an email's counts by this shape)."""
    email = request.form.get("email", "").strip().lower()
    return account_counter(email, _address())


def address_key() -> str:
    """The address a sign-in comes from."""
    return f"address:{_address()}"


def _address() -> str:
    """The request's address; an IPv6 one as its /64 (one network, however many hosts)."""
    text = request.remote_addr or ""
    try:
        found = ipaddress.ip_address(text)
    except ValueError:
        return text
    if isinstance(found, ipaddress.IPv6Address):
        if found.ipv4_mapped is not None:
            return str(found.ipv4_mapped)
        return str(ipaddress.ip_network(f"{found}/64", strict=False))
    return str(found)


def _refused(response: Response) -> bool:
    """Whether a sign-in was refused (only those count)."""
    return response.status_code == REFUSED


def init_app(app: Flask, public: Blueprint, endpoint: str = "auth.sign_in") -> None:
    """Throttle the sign-in form's refused posts (a 429 page) and the `public` blueprint's
    requests (a guest's JSON 429)."""
    # Flask-Limiter's name for the product's Redis: one server, a socket, or the sentinels
    # (`limits` follows their primary through a failover), from the client's one home.
    uri, options = redis_client.limiter_storage(app.config.get("REDIS_URL", ""))
    app.config.setdefault("RATELIMIT_STORAGE_URI", uri)
    app.config.setdefault("RATELIMIT_STORAGE_OPTIONS", options)
    app.config.setdefault("RATELIMIT_KEY_PREFIX", key_prefix(app.config.get("DATABASE_URL", "")))
    # A moving window: the limit holds over any 15 minutes (any minute), not per clock
    # window, where twice the limit could pass across a window's edge.
    app.config.setdefault("RATELIMIT_STRATEGY", "moving-window")
    # A Redis outage must not stop sign-in: count in memory meanwhile.
    app.config.setdefault("RATELIMIT_SWALLOW_ERRORS", True)
    app.config.setdefault("RATELIMIT_IN_MEMORY_FALLBACK_ENABLED", True)
    limiter = Limiter(address_key, app=app)
    for limit, key in ((ACCOUNT_LIMIT, account_key), (ADDRESS_LIMIT, address_key)):
        # This app's view is wrapped here, not decorated where it is defined, because the
        # module's function is shared by every app a process makes (the tests make many).
        app.view_functions[endpoint] = limiter.limit(
            limit, key_func=key, methods=["POST"], deduct_when=_refused, scope=key.__name__
        )(app.view_functions[endpoint])
    limiter.limit(PUBLIC_LIMIT, key_func=address_key, scope="public")(public)
    app.extensions[_EXTENSION] = limiter
    app.register_error_handler(RateLimitExceeded, _too_many)


def _too_many(error: RateLimitExceeded) -> tuple[str | Response, int, dict[str, str]]:
    """A throttled sign-in: a page that says so and when to try again; a throttled guest:
    the public API's JSON refusal."""
    limiter: Limiter = current_app.extensions[_EXTENSION]
    found = limiter.current_limit
    # The window's own reset instant (`RequestLimit.reset_at` adds a second and truncates:
    # 61 s past a minute's window), and never past the limit's period.
    if found:
        period = found.limit.get_expiry()
        wait = min(period, max(1, math.ceil(found.window.reset_time - time.time())))
    else:
        wait = 60
    if request.blueprint == "public":
        log.warning("public API throttled for %s (%s)", _address(), error.description)
        return jsonify(guest_error(TOO_MANY)), 429, {"Retry-After": str(wait)}
    log.warning("sign-in throttled from %s (%s)", request.remote_addr, error.description)
    page = render_template(
        "screens/sign_in.html",
        next=request.values.get("next", ""),
        error=f"Too many sign-in attempts. Try again in {math.ceil(wait / 60)} minutes.",
    )
    return page, 429, {"Retry-After": str(wait)}
