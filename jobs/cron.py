"""The clock's cron configuration, loaded by the Procfile's clock (`python -m jobs.clock`).

RQ's cron holds no lock: every clock process enqueues the tick each minute, and the
tick enqueues each connection's sweep under one job id per minute, once: the first tick
of a minute claims it (`jobs.tick.claim_key`), and later ones enqueue nothing.
"""

from rq import cron

from jobs.tick import enqueue_sweeps
from services.sweep_ledger import QUEUE

cron.register(enqueue_sweeps, queue_name=QUEUE, cron="* * * * *", job_timeout=50, ttl=55)
