"""The screens without a browser: "Add sample data" adds the kept sample and
leaves the app's setup alone; an expired session's htmx redirect names a page, never a
fragment."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from flask.testing import FlaskClient

from tests.integration.api_fixtures import Site
from tests.integration.screens_fixtures import csrf_of

ADD = "/connections/venue/apps/venue/sample/add"


def kept_sample(folder: Path) -> Path:
    """A venue sample set with a settings row (setup) and two orders."""
    sample = {
        "app": "venue",
        "rows": {
            "settings": [{"offer_hours": 99}],
            "orders": [{"pickup_at": {"@in": "PT5H"}}, {"pickup_at": {"@in": "PT6H"}}],
        },
    }
    path = folder / "venue.sample.json"
    path.write_text(json.dumps(sample))
    return path


def test_add_sample_data_adds_the_kept_sample_and_keeps_the_setup(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], tmp_path: Path
) -> None:
    kept_sample(tmp_path)
    screens_site.app.config["SAMPLES_FOLDER"] = str(tmp_path)
    try:
        manager = signed_in("manager")
        page = manager.get("/connections")
        assert "Add sample data · venue" in page.text
        answer = manager.post(ADD, headers={"X-CSRFToken": csrf_of(page.text)})
    finally:
        screens_site.app.config.pop("SAMPLES_FOLDER")
    assert answer.status_code == 200
    assert "Sample data of venue added: 2 rows." in answer.text
    # The venue already had its settings row: the sample's is not added beside it.
    with screens_site.store().engine.connect() as conn:
        settings = screens_site.store().read_rows(conn, "settings")
    assert [row["offer_hours"] for row in settings] == [24]


def test_staff_may_not_add_sample_data(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], tmp_path: Path
) -> None:
    staff = signed_in("staff")
    page = staff.get("/connections")
    assert "Add sample data" not in page.text
    answer = staff.post(ADD, headers={"X-CSRFToken": csrf_of(page.text)})
    assert answer.status_code == 403


def next_of(answer_location: str) -> str:
    """The `next=` a sign-in redirect carries."""
    return parse_qs(urlsplit(answer_location).query)["next"][0]


def test_expired_session_on_a_fragment_returns_to_its_page(screens_site: Site) -> None:
    client = screens_site.app.test_client()  # never signed in, as after an expired session
    answer = client.get(
        "/apps/venue/venue/orders/columns?q=&state=",
        headers={
            "HX-Request": "true",
            "HX-Current-URL": "http://localhost/apps/venue/venue/orders?q=soup",
        },
    )
    assert answer.status_code == 401
    assert next_of(answer.headers["HX-Redirect"]) == "/apps/venue/venue/orders?q=soup"
    # A page of another site is no page to come back to.
    answer = client.get(
        "/apps/venue/venue/orders/columns",
        headers={"HX-Request": "true", "HX-Current-URL": "http://evil.example/apps/x"},
    )
    assert next_of(answer.headers["HX-Redirect"]) == "/connections"
    # A page itself comes back to itself.
    answer = client.get("/apps/venue/venue/orders?q=soup")
    assert next_of(answer.headers["Location"]) == "/apps/venue/venue/orders?q=soup"
