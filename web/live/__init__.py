"""Live screens: a flask-sock endpoint, and one Redis subscription per web process.

A screen opens `/live?screen=…` (htmx's ws extension). The hub's thread listens to every
connection's row events on Redis and, for each open screen that shows the changed row,
renders the screen's own partials as out-of-band swaps and queues them to its socket.
Pub/sub keeps nothing while a screen is away, so each screen refetches its state when its
socket (re)opens. When Redis fails, every open screen is told at once ("Redis does not
answer", a banner, and its header's clock state), its socket kept open; once the hub has
subscribed again the banner is emptied and the socket closed with 1011, a code the ws
extension reconnects on, so the screen refetches what it may have missed. A handshake is
refused (503, which the extension retries) until the hub has subscribed, and, after a loss,
until the screens told of it have been closed, so a screen opens, says "live" and refetches
only when no change can slip by unpushed, and is not closed again at once. A handshake must
come from a page of this host (Origin).

The hub also watches the clock: every few seconds it reads the sweep health of each
connection an open screen shows and pushes the stalled banner when it changes. A web
process is what the person is looking at, so the check lives here rather than in the tick:
a dead worker or clock process could never publish that it has stopped. Signing out closes
the user's open sockets (4401, which the ws extension does not retry; the page reloads and
goes to sign-in), in every web process, through the same Redis subscription; so do a new
password, a role given or taken away and a user removed (services/users.py).

The package in three parts: `screen` (what an open socket shows and how its fragments are
drawn), `hub` (the Redis subscription, the bursts, the clock watch, the fan-out) and
`endpoint` (the handshake's checks and the socket's send loop). Here: the app's hub, made
and stopped.
"""

from __future__ import annotations

import atexit
import weakref

from flask import Flask

from web.live.endpoint import bp
from web.live.hub import Hub


def init_app(app: Flask) -> None:
    """Register the live endpoint and this process's hub."""
    found = app.extensions["adminium.live"] = Hub(app)
    _HUBS.add(found)
    app.register_blueprint(bp)


_HUBS: weakref.WeakSet[Hub] = weakref.WeakSet()


def stop_hub(app: Flask) -> None:
    """Stop an app's hub before its databases or Redis go (tests; a process that exits)."""
    app.extensions["adminium.live"].stop()


@atexit.register
def _stop_hubs() -> None:
    """A process that exits drops its sockets (1006, which the ws extension retries on)."""
    for found in list(_HUBS):
        found.stopping.set()
