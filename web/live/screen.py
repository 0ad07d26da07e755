"""What one open socket shows, and the out-of-band fragments that bring it up to date.

A `Screen` is the hub's key: sockets that show the same thing to people with the same roles
share one rendering of each burst of events (see `web.live.hub`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from web.screens import pushes
from web.screens.outbox import push_outbox


@dataclass(frozen=True)
class Screen:
    """What one open socket shows: its kind, where, its filters, and who looks (roles)."""

    kind: str
    base_url: str
    connection: str = ""
    app: str = ""
    table: str = ""
    key: str = ""
    q: str = ""
    state: str = ""
    roles: frozenset[str] = frozenset()
    apps: frozenset[str] = frozenset()
    pausable: frozenset[str] = frozenset()
    connections: frozenset[str] = frozenset()
    removable: frozenset[str] = frozenset()
    app_roles: tuple[tuple[str, frozenset[str]], ...] = ()
    view: str = ""
    """How a board's cards are drawn: "" (the board), "wall" or "touch" (`web.screens.bump`)."""
    user: int = 0
    """Who looks (the session's user id): signing out closes their sockets."""
    locale: str = "en"
    """The language it speaks (`web.language`, as the page was): its pushes are said in it."""

    def shows(self, event: Mapping[str, Any]) -> bool:
        """Whether this screen shows the row (or the connection) an event names."""
        connection = str(event.get("connection", ""))
        if self.kind == "connections":
            return connection in self.connections
        if connection != self.connection:
            return False
        if self.kind == "outbox" or "outbox" in event:
            return self.kind == "outbox" and event.get("outbox") == self.app
        if "paused" in event or "stalled" in event:
            return True
        if self.kind in ("pending", "set_aside"):
            return str(event.get("app")) in self.apps
        same_table = event.get("app") == self.app and event.get("table") == self.table
        if self.kind == "row":
            return same_table and str(event.get("key")) == self.key
        return same_table

    def render_all(self, events: Sequence[Mapping[str, Any]]) -> str:
        """The out-of-band fragments that bring this screen up to date with a burst of
        events, in one message: a board's row events read and drawn together
        (`pushes.push_boards`), each other event once (the same event twice, once)."""
        fragments: list[str] = []
        rows = [e for e in events if self.kind == "board" and _row_event(e)]
        if rows:
            fragments.append(pushes.push_boards(rows, self.q, self.state))
        seen: set[str] = set()
        for event in events:
            if self.kind == "board" and _row_event(event):
                continue
            same = json.dumps(event, sort_keys=True, default=str)
            if same not in seen:
                seen.add(same)
                fragments.append(self.render(event))
        return "".join(fragments)

    def render(self, event: Mapping[str, Any]) -> str:
        """The out-of-band fragment that brings this screen up to date."""
        if self.kind == "connections":
            name = str(event["connection"])
            return pushes.push_connection(name, name in self.pausable, self.apps, self.removable)
        if "paused" in event:
            return pushes.push_paused(self.connection)
        if "stalled" in event:
            return pushes.push_stalled(self.connection, event["stalled"])
        if self.kind == "outbox":
            return push_outbox(event, self.roles)
        if self.kind == "board":
            return pushes.push_board(event, self.q, self.state)
        if self.kind == "row":
            return pushes.push_row(event, self.roles)
        if self.kind == "pending":
            return pushes.push_pending(event)
        return pushes.push_set_aside(event, dict(self.app_roles))


def _row_event(event: Mapping[str, Any]) -> bool:
    """Whether an event is a row's change (not a pause, a stall or an outbox's)."""
    return not ({"paused", "stalled", "outbox"} & event.keys()) and "table" in event
