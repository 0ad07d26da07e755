"""Whether the minute job has work for an app: the one rule the tick (which connections it
sweeps), the sweep's store list and the sweep itself ask.

The minute sweep of a connection makes its apps' timed moves, gives back their holds nobody
finished, and queues their reminders; an app with any of the three is swept, one with none
is not (its connection gets no sweep unless another app of it has some).
"""

from __future__ import annotations

from core.ledgers.holds import holding_tables
from core.manifest.model import App
from core.manifest.outbox_model import Reminder


def has_minute_work(app: App) -> bool:
    """Whether the app lists a timed move, keeps holds the clock gives back, or has a reminder."""
    timed = any(t.states is not None and t.states.timed for t in app.tables.values())
    return timed or bool(holding_tables(app)) or has_reminders(app)


def has_reminders(app: App) -> bool:
    """Whether the app's outbox has a reminder (queued by the minute's sweep)."""
    return app.outbox is not None and any(isinstance(p, Reminder) for p in app.outbox.producers)
