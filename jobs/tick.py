"""The minute tick: enqueue one sweep per connection whose apps list a timed move."""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def enqueue_sweeps() -> int:
    """Enqueue this minute's sweeps; returns how many were enqueued."""
    # The connections and their sweeps arrive with the control plane and the sweep job.
    log.info("minute tick: no connections are registered yet")
    return 0
