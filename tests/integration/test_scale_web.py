"""What the web shows of the sweeps at scale: `/metrics` behind its token, and a dropped
sweep on the connection's card."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
import redis
from flask.testing import FlaskClient

from services.sweep_ledger import (
    COUNTS,
    DROPPED,
    DURATION,
    LAST_DROP,
    Drop,
    DropReason,
    count_drops,
    mark_finished,
)
from tests.integration.api_fixtures import Site

TOKEN = "scrape-me"
# A past minute, 13:04 UTC: 14:04 on the venue's London clock (BST, UTC+1) on 4 May 2026.
MINUTE = datetime(2026, 5, 4, 13, 4, tzinfo=UTC)


@pytest.fixture
def dropped(screens_site: Site, redis_url: str) -> Iterator[redis.Redis]:
    """The venue connection with one dropped sweep and one sweep run that moved 3 rows."""
    client = redis.Redis.from_url(redis_url)
    count_drops(client, [Drop("venue", MINUTE, DropReason.expired.value)])
    mark_finished(client, "venue", seconds=0.004, moved=3, set_aside=0)
    yield client
    for key in (DROPPED, LAST_DROP, DURATION, *COUNTS.values()):
        client.hdel(key, "venue")
    client.close()


@pytest.fixture
def metrics_on(screens_site: Site) -> Iterator[FlaskClient]:
    screens_site.app.config["METRICS_TOKEN"] = TOKEN
    yield screens_site.app.test_client()
    screens_site.app.config["METRICS_TOKEN"] = ""


def test_metrics_are_off_without_a_token(screens_site: Site) -> None:
    screens_site.app.config["METRICS_TOKEN"] = ""
    assert screens_site.app.test_client().get("/metrics").status_code == 404


@pytest.mark.parametrize(
    "header", [None, "Bearer wrong", f"Basic {TOKEN}"], ids=["none", "wrong", "not-bearer"]
)
def test_metrics_refuse_a_scrape_without_the_token(
    metrics_on: FlaskClient, header: str | None
) -> None:
    headers = {"Authorization": header} if header else {}
    assert metrics_on.get("/metrics", headers=headers).status_code == 401


def test_metrics_show_the_cluster_figures_to_the_token(
    metrics_on: FlaskClient, dropped: redis.Redis
) -> None:
    reply = metrics_on.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert reply.status_code == 200
    assert reply.mimetype == "text/plain"
    body = reply.text
    assert 'adminium_sweeps_dropped_total{connection="venue"} 1.0' in body
    assert 'adminium_sweep_duration_last_seconds{connection="venue"} 0.004' in body
    for name in ("adminium_rows_moved_total", "adminium_queue_depth", "adminium_open_screens"):
        assert f"\n{name}" in body
    assert 'adminium_sweep_duration_seconds_bucket{le="0.005"}' in body


def test_the_connection_card_shows_its_dropped_sweeps(
    signed_in: Callable[[str], FlaskClient], dropped: redis.Redis
) -> None:
    page = signed_in("staff").get("/connections").text
    assert "Sweeps dropped" in page
    assert f'1, the latest of <time datetime="{MINUTE.isoformat()}">' in page
    assert DropReason.expired.value in page
