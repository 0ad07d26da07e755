"""Effects set off by a person on a screen and by a guest on the public API: the kitchen
(tests/integration/effect_fixtures) added beside the venue on the screens' site."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest
from flask.testing import FlaskClient

from services.apps import add_app
from services.models import db
from tests.integration.api_fixtures import Site
from tests.integration.effect_fixtures import KITCHEN, Kitchen
from tests.integration.screens_fixtures import csrf_of

BOARD = "/apps/venue/kitchen/orders"
CODE = "kitchen-code-001"  # 16 characters, as the orders' code rule makes them


@pytest.fixture(scope="module")
def kitchen(screens_site: Site) -> Kitchen:
    with screens_site.app.app_context():
        add_app(db.session, "venue", KITCHEN, create_tables=True)
    made = Kitchen(screens_site.store(name="kitchen"))
    made.insert("settings")
    return made


def cause_of(kitchen: Kitchen, table: str, key: object) -> list[tuple[str, object]]:
    return [
        (e["actor"], e["cause"])
        for e in kitchen.audit()
        if e["table_name"] == table and e["row_key"] == str(key)
    ]


def test_a_screen_cancel_voids_the_lines(
    kitchen: Kitchen, signed_in: Callable[[str], FlaskClient]
) -> None:
    order = kitchen.order(None)
    lines = [kitchen.line(order, 4), kitchen.line(order, 2, "served")]
    client = signed_in("admin")
    token = csrf_of(client.get(f"{BOARD}/{order}").text)
    answer = client.post(
        f"{BOARD}/{order}/move",
        data={"to": "cancelled"},
        headers={"X-CSRFToken": token, "HX-Request": "true"},
    )
    assert answer.status_code == 200, answer.text
    assert kitchen.status(order) == "cancelled"
    assert {k: kitchen.statuses("order_lines")[k] for k in lines} == dict.fromkeys(lines, "void")
    cause = {"table": "orders", "key": order, "from": "placed", "to": "cancelled"}
    assert cause_of(kitchen, "order_lines", lines[0]) == [("admin@venue.test", cause)]
    assert kitchen.total(order) == (0, 2)


def test_a_guest_cancel_voids_the_lines(kitchen: Kitchen, screens_site: Site) -> None:
    order = kitchen.order(None, code=CODE)
    line = kitchen.line(order, 4)
    kitchen.line(order, 3, "paid")
    answer = screens_site.client.post(
        f"/public/venue/kitchen/orders/{CODE}/moves", json={"to": "cancelled"}
    )
    assert answer.status_code == 200, answer.json
    assert answer.json["row"]["status"] == "cancelled"
    # The answer carries the total written at the end of the write: the paid line's 3.
    assert Decimal(str(answer.json["row"]["total"])) == 3
    assert kitchen.statuses("order_lines")[line] == "void"
    cause = {"table": "orders", "key": order, "from": "placed", "to": "cancelled"}
    assert cause_of(kitchen, "order_lines", line) == [("Public", cause)]
