"""The row page's preview before Save:
editing an hours row shows what saving would change, the rows listed and linked; a Save
that makes rows due at once asks once more. Moments worked by hand (Europe/London)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
from flask import Flask
from flask.testing import FlaskClient

from services.models import db
from services.users import add_user
from tests.integration.preview_fixtures import Diner, build_diner
from tests.integration.screens_fixtures import PASSWORD, csrf_of
from web import create_app

NOW = datetime(2026, 10, 23, 20, 30, tzinfo=UTC)  # Friday, 21:30 BST


@pytest.fixture
def site(make_database: Callable[[], str], redis_url: str) -> Iterator[tuple[Diner, Flask]]:
    diner = build_diner(make_database(), make_database())
    config = {
        "DATABASE_URL": diner.control_url,
        "REDIS_URL": redis_url,
        "TESTING": True,
        "CLOCK": lambda: NOW,
    }
    app = create_app(config)
    with app.app_context():
        add_user(db.session, "staff@diner.test", "staff", "diner/diner", password=PASSWORD)
    yield diner, app
    from web.live import stop_hub

    stop_hub(app)
    with app.app_context():
        db.engine.dispose()
    diner.dispose()


def client_of(app: Flask) -> FlaskClient:
    client = app.test_client()
    page = client.get("/signin")
    answer = client.post(
        "/signin",
        data={"email": "staff@diner.test", "password": PASSWORD, "csrf_token": csrf_of(page.text)},
    )
    assert answer.status_code == 302, answer.text
    return client


def post(client: FlaskClient, path: str, data: dict[str, str]) -> str:
    token = csrf_of(client.get(path.rsplit("/", 1)[0]).text)
    answer = client.post(path, data=data, headers={"X-CSRFToken": token, "HX-Request": "true"})
    assert answer.status_code == 200, answer.text
    return answer.text


def test_the_hours_row_previews_then_asks_once_more_before_saving(
    site: tuple[Diner, Flask],
) -> None:
    diner, app = site
    # 23 Oct (BST): closing 23:00 -> 21:00 is 22:00Z -> 20:00Z, before 20:30Z: due at once.
    due = [
        diner.insert("orders", pickup_at=datetime(2026, 10, 23, h, tzinfo=UTC), status="placed")
        for h in (12, 18)
    ]
    # 30 Oct (GMT): 23:00Z -> 21:00Z, two hours earlier.
    later = diner.insert(
        "orders", pickup_at=datetime(2026, 10, 30, 12, tzinfo=UTC), status="placed"
    )
    fri = diner.rows("SELECT id FROM diner.opening_hours WHERE weekday = 'fri'")[0][0]
    row = f"/apps/diner/diner/opening_hours/{fri}"
    client = client_of(app)
    page = client.get(row).text
    assert f'id="row-opening_hours-{fri}-preview-button"' in page or "Preview</button>" in page
    form = {"column": "closes", "value": "21:00"}
    shown = post(client, f"{row}/preview", form)
    assert "Saving makes 2 Orders moved to Cancelled at the next minute; 1 moment earlier." in shown
    for key in (*due, later):
        assert f'href="/apps/diner/diner/orders/{key}"' in shown
    assert "Fri 30 Oct 2026 23:00" in shown and "Fri 30 Oct 2026 21:00" in shown
    # How far it read: 192 hours past Fri 23 Oct 20:30Z, over the clocks going back on
    # Sun 25 Oct: Sat 31 Oct 20:30 GMT.
    assert (
        '<p class="preview-horizon"><time datetime="2026-10-31T20:30:00+00:00">Read to Sat'
        " 31 Oct 20:30, 8 days</time> ahead: a moment moved further on is not counted.</p>"
    ) in shown
    # Save asks once more: nothing written yet, the form carries the confirmation.
    asked = post(client, f"{row}/edit", form)
    assert "Not saved yet: Saving makes 2 Orders moved to Cancelled" in asked
    assert 'name="confirmed" value="1"' in asked and "Save anyway" in asked
    assert re.search(r'name="value"[^>]*value="21:00"', asked)
    assert diner.rows(f"SELECT closes FROM diner.opening_hours WHERE id = {fri}") == [("23:00",)]
    saved = post(client, f"{row}/edit", {**form, "confirmed": "1"})
    assert "Saved:" in saved
    assert diner.rows(f"SELECT closes FROM diner.opening_hours WHERE id = {fri}") == [("21:00",)]


def test_a_change_making_nothing_due_saves_at_once_and_another_table_has_no_preview(
    site: tuple[Diner, Flask],
) -> None:
    diner, app = site
    later = diner.insert(
        "orders", pickup_at=datetime(2026, 10, 30, 12, tzinfo=UTC), status="placed"
    )
    sat = diner.rows("SELECT id FROM diner.opening_hours WHERE weekday = 'sat'")[0][0]
    client = client_of(app)
    saved = post(
        client,
        f"/apps/diner/diner/opening_hours/{sat}/edit",
        {"column": "closes", "value": "22:00"},
    )
    assert "Saved:" in saved
    order = client.get(f"/apps/diner/diner/orders/{later}").text
    assert "Preview</button>" not in order
    # A table without states has no board: its row page links to the connection instead.
    hours = client.get(f"/apps/diner/diner/opening_hours/{sat}").text
    assert 'href="/apps/diner/diner/opening_hours"' not in hours
    assert 'href="/connections/diner">Diner</a> · Opening hours' in hours
