"""`/metrics` in the Prometheus text format, behind a token, and the open-screens count.

Off unless METRICS_TOKEN is set; then a scrape sends `Authorization: Bearer <token>`.
Every figure is read at scrape time from where the cluster keeps it (the sweep ledger and
the queue in Redis, each web process's open screens in Redis), so any web process answers
for all of them: no per-process counter, no multiprocess directory.
"""

from __future__ import annotations

import hmac
import logging
import os
import socket
from collections.abc import Iterator

import redis
from flask import Blueprint, Flask, Response, abort, current_app, request
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from services import fence_ledger, sweep_ledger
from web.context import publisher

log = logging.getLogger(__name__)

bp = Blueprint("metrics", __name__)

SCREENS_PREFIX = "adminium:screens:"
"""Redis keys `adminium:screens:<host>:<pid>`: each web process's open screens."""
SCREENS_TTL = 3600
"""A web process that died with screens open stops being counted after this long."""
LIVE_ENDPOINT = "live.connect"
"""The websocket view: its request lasts as long as the screen stays open."""

COUNTERS = {
    "run": ("adminium_sweeps_run", "Minute sweeps run, per connection."),
    "dropped": ("adminium_sweeps_dropped", "Minute sweeps that never ran, per connection."),
    "moved": ("adminium_rows_moved", "Rows moved by timed moves, per connection."),
    "set_aside": ("adminium_rows_set_aside", "Rows the sweep set aside, per connection."),
}
GAUGES = {
    "lag": (
        "adminium_sweep_lag_seconds",
        "Seconds from its minute's start to the latest sweep's start, per connection.",
    ),
    "duration": (
        "adminium_sweep_duration_last_seconds",
        "Seconds the latest sweep took, per connection.",
    ),
}


class LedgerCollector:
    """The cluster's figures, read from Redis when scraped."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client

    def collect(self) -> Iterator[Metric]:
        figures = sweep_ledger.figures(self.client)
        for key, (name, text) in COUNTERS.items():
            counter = CounterMetricFamily(name, text, labels=["connection"])
            for connection, value in sorted(figures[key].items()):
                counter.add_metric([connection], value)
            yield counter
        for key, (name, text) in GAUGES.items():
            gauge = GaugeMetricFamily(name, text, labels=["connection"])
            for connection, value in sorted(figures[key].items()):
                gauge.add_metric([connection], value)
            yield gauge
        for key, name, text in (
            ("duration", "adminium_sweep_duration_seconds", "How long sweeps took."),
            ("lag", "adminium_sweep_start_lag_seconds", "Minute start to sweep start."),
        ):
            buckets, total = sweep_ledger.histogram(self.client, key)
            yield HistogramMetricFamily(name, text, buckets=buckets, sum_value=total)
        fenced = CounterMetricFamily(
            "adminium_sweeps_fenced",
            "Minute sweeps turned away by their connection's fence, per connection.",
            labels=["connection"],
        )
        for connection, value in sorted(fence_ledger.fenced_counts(self.client).items()):
            fenced.add_metric([connection], value)
        yield fenced
        depth, workers = sweep_ledger.queue_figures(self.client)
        yield GaugeMetricFamily("adminium_queue_depth", "Jobs waiting in the queue.", depth)
        yield GaugeMetricFamily("adminium_workers", "RQ workers on the queue.", workers)
        yield GaugeMetricFamily(
            "adminium_open_screens",
            "Open live screens, all web processes.",
            open_screens(self.client),
        )


def open_screens(client: redis.Redis) -> int:
    """Open screens over every web process."""
    keys = list(client.scan_iter(match=SCREENS_PREFIX + "*", count=500))
    return sum(int(v or 0) for v in client.mget(keys)) if keys else 0


def _screens_key() -> str:
    return f"{SCREENS_PREFIX}{socket.gethostname()}:{os.getpid()}"


def _count_screen(step: int) -> None:
    """Count this process's open screens in Redis (best effort: screens work without it)."""
    client = publisher().client
    if client is None:
        return
    try:
        pipe = client.pipeline(transaction=False)
        pipe.incrby(_screens_key(), step)
        pipe.expire(_screens_key(), SCREENS_TTL)
        pipe.execute()
    except redis.RedisError as error:
        log.warning("open screens not counted: %s", error.__class__.__name__)


@bp.get("/metrics")
def show_metrics() -> Response:
    """The figures in the Prometheus text format, to a scrape that sends the token."""
    token = current_app.config.get("METRICS_TOKEN") or ""
    if not token:
        abort(404)
    sent = request.headers.get("Authorization", "")
    if not hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
        abort(401)
    client = publisher().client
    if client is None:
        abort(503)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(LedgerCollector(client))
    return Response(generate_latest(registry), mimetype=CONTENT_TYPE_LATEST)


def init_app(app: Flask) -> None:
    """Register `/metrics` (METRICS_TOKEN) and count the open screens around `/live`."""
    app.config.setdefault("METRICS_TOKEN", os.environ.get("METRICS_TOKEN", ""))
    app.register_blueprint(bp)

    @app.before_request
    def _screen_opens() -> None:
        if request.endpoint == LIVE_ENDPOINT:
            request.environ["adminium.screen_counted"] = True
            _count_screen(1)

    @app.teardown_request
    def _screen_closes(_error: BaseException | None) -> None:
        if request.environ.pop("adminium.screen_counted", False):
            _count_screen(-1)
