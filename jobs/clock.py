"""The Procfile's clock: RQ's CronScheduler over `jobs/cron.py`, riding out a Redis outage.

`rq cron` exits at the first Redis error, and a minute's tick with it. This clock keeps
its schedule and tries Redis again after 1 s, then every 2 s while it stays away. A tick
that could not be enqueued stays due (RQ dates the next one only once it is enqueued), so
it goes within 2 s of Redis answering; a tick whose minute is over by then still enqueues
its sweeps at once (`jobs.tick`), and they move every row that fell due meanwhile.
"""

from __future__ import annotations

import logging
import os
import sys
import time

from redis.exceptions import ConnectionError, RedisError, TimeoutError
from rq.cron import CronScheduler
from rq.exceptions import StopRequested

from jobs.logs import quiet_clock
from services.redis_client import connect

log = logging.getLogger(__name__)

CONFIG = "jobs.cron"
"""The module that registers the clock's jobs with `rq.cron.register`."""
RETRY_DELAYS = (1.0, 2.0)
"""Seconds before the n-th try in a row while Redis does not answer; the last repeats."""


class Clock(CronScheduler):
    """A CronScheduler whose loop survives Redis going away and coming back."""

    def start(self) -> None:
        """Enqueue each job when due, until SIGINT or SIGTERM; Redis errors only pause it."""
        self._install_signal_handlers()
        registered = False
        failures = 0
        try:
            while True:
                try:
                    if not registered:
                        self.register_birth()
                        registered = True
                    if self.enqueue_jobs():
                        self.save()
                    self.heartbeat()
                except (ConnectionError, TimeoutError) as error:
                    failures += 1
                    delay = RETRY_DELAYS[min(failures, len(RETRY_DELAYS)) - 1]
                    log.warning(
                        "clock %s: Redis does not answer (%s); trying again in %.0f s",
                        self.name,
                        error,
                        delay,
                    )
                    time.sleep(delay)
                    continue
                if failures:
                    log.warning("clock %s: Redis answers again after %s tries", self.name, failures)
                    failures = 0
                pause = self.calculate_sleep_interval()
                if pause > 0:
                    time.sleep(pause)
        except (KeyboardInterrupt, StopRequested):
            log.info("clock %s: stop requested", self.name)
        finally:
            if registered:
                try:
                    self.register_death()
                except RedisError as error:
                    log.warning("clock %s: could not unregister: %s", self.name, error)


def main() -> None:
    """`python -m jobs.clock [CONFIG]`: the clock on REDIS_URL, jobs from CONFIG (jobs.cron)."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    quiet_clock()  # no line a minute for the tick it enqueues (jobs/logs.py)
    clock = Clock(connection=connect(os.environ["REDIS_URL"]))
    clock.load_config_from_file(sys.argv[1] if len(sys.argv) > 1 else CONFIG)
    clock.start()


if __name__ == "__main__":
    main()
