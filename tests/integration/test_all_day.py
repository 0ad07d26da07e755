"""A board's all-day strip: what its open tickets add up to, by its `all_day` (the lines of
open orders, voided lines left out, quantities added up; or a column of the tickets
themselves), on the board and the wall, and fetched alone."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from flask.testing import FlaskClient

from tests.integration.all_day_fixtures import ALL_DAY, add_lines, line, save_all_day
from tests.integration.api_fixtures import Site
from tests.integration.pipeline_fixtures import at
from tests.integration.screens_fixtures import add_order

pytestmark = pytest.mark.integration
STRIP = "/apps/venue/venue/orders/all-day"


@pytest.fixture(scope="module")
def lines_site(screens_site: Site) -> Iterator[Site]:
    """The venue with order lines: two placed orders, one confirmed, one cancelled."""
    add_lines(screens_site)
    first = add_order(screens_site, at("2026-07-10 12:00"))
    second = add_order(screens_site, at("2026-07-10 12:15"))
    third = add_order(screens_site, at("2026-07-10 12:30"), status="confirmed")
    gone = add_order(screens_site, at("2026-07-10 12:45"), status="cancelled")
    line(screens_site, first, "ramen", qty=2)
    line(screens_site, first, "pad thai")
    line(screens_site, second, "ramen", qty=3)
    line(screens_site, second, "gyoza", qty=4, voided=True)  # voided: not counted
    line(screens_site, third, "ramen")
    line(screens_site, third, "pad thai", qty=2)
    line(screens_site, gone, "ramen", qty=9)  # a cancelled order is not open
    yield screens_site


def test_the_strip_adds_up_the_lines_of_open_tickets(
    lines_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    client = signed_in("staff")
    answer = client.get(STRIP)
    assert answer.status_code == 200
    # ramen 2 + 3 + 1 (the cancelled order's 9 left out), pad thai 1 + 2, gyoza voided.
    assert "All day:" in answer.text
    assert '<b>6</b> × ramen</span>, <span class="all-day-item"><b>3</b> × pad thai' in (
        answer.text
    )
    assert "gyoza" not in answer.text
    for page in ("/apps/venue/venue/orders", "/apps/venue/venue/orders/wall"):
        assert "<b>6</b> × ramen" in client.get(page).text


def test_the_strip_counts_only_the_states_it_names_and_a_column_of_the_tickets(
    lines_site: Site, signed_in: Callable[[str], FlaskClient]
) -> None:
    client = signed_in("staff")
    try:
        save_all_day(
            lines_site,
            {"table": "order_lines", "via": "order_id", "count": "item", "states": ["confirmed"]},
        )
        # The confirmed order alone, one per line (no quantity): ramen 1, pad thai 1.
        text = client.get(STRIP).text
        assert "<b>1</b> × pad thai" in text and "<b>1</b> × ramen" in text
        # The tickets' own column: how many open orders came by each channel (all web).
        save_all_day(lines_site, {"count": "channel"})
        assert "<b>3</b> × web" in client.get(STRIP).text
    finally:
        save_all_day(lines_site, None)
    # No all_day: no strip.
    assert "All day" not in client.get("/apps/venue/venue/orders/wall").text
    save_all_day(lines_site, ALL_DAY)
