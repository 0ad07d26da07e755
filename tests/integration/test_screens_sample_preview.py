"""'Add sample data' on the connections screen asks once more when the sample would leave
rows due at once: it names them, adds nothing, and adds on "Add anyway"."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import sqlalchemy as sa
from flask.testing import FlaskClient

from core.sweep.sweep import sweep_connection
from tests.integration.api_fixtures import Site
from tests.integration.screens_fixtures import csrf_of

ADD = "/connections/venue/apps/venue/sample/add"


def orders_and_audit(site: Site) -> tuple[list[int], int]:
    with site.store().engine.connect() as conn:
        keys = list(conn.scalars(sa.text("SELECT id FROM orders ORDER BY id")))
        entries = conn.scalar(sa.text("SELECT count(*) FROM adminium.audit"))
    return keys, int(entries or 0)


def test_a_sample_due_at_once_is_named_and_added_only_on_confirm(
    screens_site: Site, signed_in: Callable[[str], FlaskClient], tmp_path: Path
) -> None:
    # The screen's clock: Fri 10 Jul 2026 10:00 BST. The first order picked up yesterday
    # (Thu 10:00 BST) is cancelled at Thursday's closing, 21:00 BST: passed, due at once.
    # The second, picked up at 15:00 today, waits for tonight's 21:00.
    sample = {
        "app": "venue",
        "rows": {"orders": [{"pickup_at": {"@in": "-P1D"}}, {"pickup_at": {"@in": "PT5H"}}]},
    }
    (tmp_path / "venue.sample.json").write_text(json.dumps(sample))
    screens_site.app.config["SAMPLES_FOLDER"] = str(tmp_path)
    try:
        manager = signed_in("manager")
        token = csrf_of(manager.get("/connections").text)
        before = orders_and_audit(screens_site)
        asked = manager.post(ADD, headers={"X-CSRFToken": token, "HX-Request": "true"})
        assert asked.status_code == 200
        assert "Not added yet: 1 sample row of venue would be moved at the next minute" in (
            asked.text
        )
        assert "(sample row 1):" in asked.text and "(sample row 2)" not in asked.text
        assert "Fri 10 Jul 2026" not in asked.text and "Thu 09 Jul 2026 21:00" in asked.text
        assert 'name="confirmed" value="1"' in asked.text and "Add anyway · venue" in asked.text
        assert orders_and_audit(screens_site) == before  # asking wrote nothing
        added = manager.post(
            ADD,
            data={"confirmed": "1"},
            headers={"X-CSRFToken": token, "HX-Request": "true"},
        )
    finally:
        screens_site.app.config.pop("SAMPLES_FOLDER")
    assert "Sample data of venue added: 2 rows." in added.text
    keys, _ = orders_and_audit(screens_site)
    first, second = keys[-2:]
    store = screens_site.store()
    report = sweep_connection([store], connection="venue", now=screens_site.clock.now)
    assert {d.key for d in report.moved} & {first, second} == {first}
