"""What the worker and the clock say on their console: quiet while nothing happens.

An idle minute used to print about 20 lines: RQ's own four per job (the job taken, "Job
OK", "Successfully completed … in …", "result is kept for … seconds") for the tick, the
sweep and the drains, and the clock's "Enqueued job". Those are RQ's bookkeeping, not
news: they are logged at DEBUG here (`rq worker --verbose` shows them again). What stays at
the default level: a minute that moved, set aside or gave back rows, an app's fault, a
sweep stopped, the spec's "timed move refused; left alone for an hour" (a warning), Redis
going away and coming back, a job that failed (RQ's own error lines), and the worker's start.

Adminium's own loggers (`core`, `services`, `jobs`) print at INFO (LOG_LEVEL sets
another level) with the time, level and logger; before, they had no handler in the worker,
so its moves were never said and its warnings came out bare.
"""

from __future__ import annotations

import logging
import os
import sys

OWN_LOGGERS = ("core", "services", "jobs")
"""Adminium's loggers a job logs through."""
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
DATE_FORMAT = "%H:%M:%S"

RQ_JOB_LINES = frozenset(
    {
        # rq.worker.base: the job taken, done, and its result's lifespan; the registries.
        "Worker %s: %s: %s (%s)",
        "Worker %s: %s: %s",
        "Successfully completed %s job in %ss on worker %s",
        "Successfully completed job %s in %ss on worker %s",
        "Worker %s: job %s result is kept for %s seconds",
        "Worker %s: job %s result discarded immediately",
        "Worker %s: cleaning registries for queue: %s",
    }
)
"""RQ's INFO lines of every job (by their format string, as RQ 2 logs them)."""
CLOCK_LINES = ("Enqueued job ",)
"""The start of RQ's cron scheduler's INFO line of each job it enqueues."""


class Demote(logging.Filter):
    """A logger's filter that logs routine INFO lines at DEBUG: dropped unless the logger
    is enabled for DEBUG (`--verbose`), then shown as DEBUG."""

    def __init__(self, formats: frozenset[str] = frozenset(), starts: tuple[str, ...] = ()):
        super().__init__()
        self.formats = formats
        self.starts = starts

    def filter(self, record: logging.LogRecord) -> bool:
        """Whether the record is shown (demoted when routine)."""
        if record.levelno != logging.INFO or not self._routine(record):
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)

    def _routine(self, record: logging.LogRecord) -> bool:
        message = record.msg if isinstance(record.msg, str) else ""
        return message in self.formats or message.startswith(self.starts)


def own_level() -> int:
    """The level of Adminium's own loggers: LOG_LEVEL (a name), INFO by default."""
    named = os.environ.get("LOG_LEVEL", "INFO").strip().upper()
    level = logging.getLevelName(named)
    return level if isinstance(level, int) else logging.INFO


def log_own_lines() -> None:
    """Give Adminium's loggers a handler (stderr) at their level, once; left alone when the
    process configured logging itself (its root logger has a handler: a test run, a host
    that embeds the worker), whose handlers then hear them as before."""
    if logging.getLogger().handlers:
        return
    for name in OWN_LOGGERS:
        logger = logging.getLogger(name)
        if not any(getattr(h, "adminium", False) for h in logger.handlers):
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(logging.Formatter(FORMAT, DATE_FORMAT))
            handler.adminium = True  # type: ignore[attr-defined]
            logger.addHandler(handler)
        logger.setLevel(own_level())


def quiet_worker() -> None:
    """The worker's console: RQ's per-job lines at DEBUG, Adminium's own lines said."""
    rq_worker = logging.getLogger("rq.worker")
    if not any(isinstance(f, Demote) for f in rq_worker.filters):
        rq_worker.addFilter(Demote(RQ_JOB_LINES))
    log_own_lines()


def quiet_clock() -> None:
    """The clock's console: RQ's cron line of each job it enqueues at DEBUG."""
    cron = logging.getLogger("rq.cron")
    if not any(isinstance(f, Demote) for f in cron.filters):
        cron.addFilter(Demote(starts=CLOCK_LINES))
