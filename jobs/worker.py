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

import logging

from rq.worker import SimpleWorker

# Imported here, before the first job, so that no job pays for them.
import jobs.sweep
import jobs.tick

log = logging.getLogger(__name__)

PRELOADED = (jobs.sweep.__name__, jobs.tick.__name__)
"""The job modules this worker holds from its start."""


class SweepWorker(SimpleWorker):
    """A SimpleWorker (jobs in this process, warm state kept between them)."""
