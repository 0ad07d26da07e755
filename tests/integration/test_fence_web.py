"""A sweep turned away by its connection's fence: counted in `/metrics` and shown on the
connection's card with who holds the fence and since when."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
import redis
import sqlalchemy as sa
from flask.testing import FlaskClient

from core.sweep.report import SweepOutcome
from services.events import Publisher
from services.fence_ledger import FENCED, LAST_FENCED
from services.models import db
from services.sweeps import sweep
from tests.integration.api_fixtures import Site

TOKEN = "scrape-the-fence"
SINCE = datetime(2026, 5, 4, 12, 1, 3, tzinfo=UTC)
HELD = "fence held by worker elsewhere:4242 since 12:01:03Z"


@pytest.fixture
def fence_held(screens_site: Site, redis_url: str) -> Iterator[redis.Redis]:
    """The venue connection's fence held by another worker for the next minute."""
    store = screens_site.store()
    with store.engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO adminium.fences (connection, holder, token, since, renewed, until,"
                " ends) VALUES ('venue', 'worker elsewhere:4242', 'theirs', :since, :since,"
                " clock_timestamp() + interval '1 minute', clock_timestamp() + interval '1 minute')"
            ),
            {"since": SINCE},
        )
    client = redis.Redis.from_url(redis_url)
    yield client
    with store.engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM adminium.fences WHERE connection = 'venue'"))
    client.hdel(FENCED, "venue")
    client.hdel(LAST_FENCED, "venue")
    client.close()


def test_a_sweep_turned_away_is_counted_in_metrics_and_shown_on_the_card(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], fence_held: redis.Redis
) -> None:
    now = datetime(2026, 5, 4, 12, 2, 0, tzinfo=UTC)
    with screens_site.app.app_context():
        report = sweep(db.session, "venue", now=now, publisher=Publisher(fence_held))
    assert (report.outcome, report.error) == (SweepOutcome.fenced, HELD)
    screens_site.app.config["METRICS_TOKEN"] = TOKEN
    try:
        scraped = screens_site.app.test_client().get(
            "/metrics", headers={"Authorization": f"Bearer {TOKEN}"}
        )
    finally:
        screens_site.app.config["METRICS_TOKEN"] = ""
    assert 'adminium_sweeps_fenced_total{connection="venue"} 1.0' in scraped.text
    page = signed_in("staff").get("/connections").text
    assert "Sweeps turned away" in page
    assert f'1, the latest at <time datetime="{now.isoformat()}"' in page
    assert HELD in page
