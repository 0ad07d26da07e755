"""A clock configuration for the fault tests: one job every 2 seconds on queue `faults`."""

from rq import cron

cron.register(print, queue_name="faults", interval=2)
