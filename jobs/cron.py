"""The clock's cron configuration, loaded by the Procfile's clock (`python -m jobs.clock`).

RQ's cron holds no lock: every clock process enqueues the tick each minute, and the
tick enqueues each connection's sweep under one job id per minute with `unique=True`.
"""

from rq import cron

from jobs.tick import enqueue_sweeps
from services.sweep_ledger import QUEUE

cron.register(enqueue_sweeps, queue_name=QUEUE, cron="* * * * *", job_timeout=50, ttl=55)
