"""The Procfile's worker class: RQ's SimpleWorker with the jobs' modules imported once.

RQ's default worker forks a work horse per job, and each horse imported SQLAlchemy, the
domain and the services again, made its engines and connected again: about 0.6 s of a
sweep whose own work is a few milliseconds (docs/operations.md, "Running at scale").
This worker runs each job in its own process, so what one sweep warms (modules, engines
and their pools, compiled statements, parsed manifests) serves the next.

The job timeout still holds: RQ's `perform_job` runs every job under its death penalty,
which for a SimpleWorker is SIGALRM in this process (`UnixSignalDeathPenalty`), raising
`JobTimeoutException` inside the job. A job that kills the process (a crash, memory) takes
the worker with it; the launcher's supervisor, or the platform, starts it again.
"""

from __future__ import annotations

import gc
import logging
from typing import Any

from rq.worker import SimpleWorker

# Imported here, before the first job, so that no job pays for them.
import jobs.sweep
import jobs.tick

log = logging.getLogger(__name__)

PRELOADED = (jobs.sweep.__name__, jobs.tick.__name__)
"""The job modules this worker holds from its start."""

GC_THRESHOLD = (10_000, 10, 10)
"""The cyclic garbage collector's thresholds in a worker (Python's are 700, 10, 10). A
worker keeps what it learnt of thousands of apps (`services.apps.WARM`); a young collection
every 700 allocations, and the full ones they lead to, walked that heap again and again:
3.4 ms of a first-minute sweep's 20 ms went to the collector, 1.9 ms with these."""


def settle_memory() -> None:
    """Leave what was imported out of every collection (`gc.freeze`: it lives as long as
    the process) and collect young objects less often."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)


class SweepWorker(SimpleWorker):
    """A SimpleWorker (jobs in this process, warm state kept between them)."""

    def work(self, burst: bool = False, *args: Any, **kwargs: Any) -> bool:
        """Work as RQ's worker does; a long-lived one (the Procfile's, not a burst that
        drains a queue and ends) first settles its memory."""
        if not burst:
            settle_memory()
        return super().work(burst, *args, **kwargs)
