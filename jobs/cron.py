"""The clock's cron configuration, loaded by `rq cron jobs/cron.py`."""

from rq import cron

from jobs.tick import enqueue_sweeps

cron.register(enqueue_sweeps, queue_name="adminium", cron="* * * * *", job_timeout=50, ttl=55)
