"""Labels people read: the manifest's `title`s for tables and columns and `states.titles`
where given, else the name with underscores as spaces and a capital first letter."""

from __future__ import annotations

import copy

from core.manifest.model import load_app
from tests.integration.pipeline_fixtures import MANIFEST
from web.screens.labels import column_label, state_label, table_label


def titled() -> dict:
    manifest = copy.deepcopy(MANIFEST)
    orders = manifest["tables"]["orders"]
    orders["title"] = "Takeaway orders"
    orders["columns"][2]["title"] = "Pickup time"  # pickup_at
    orders["states"]["titles"] = {"cancelled": "Called off"}
    return manifest


def test_titles_where_given_else_the_name_humanised() -> None:
    spec = load_app(titled()).tables["orders"]
    assert table_label(spec, "orders") == "Takeaway orders"
    assert column_label("pickup_at", spec) == "Pickup time"
    assert column_label(spec.columns[2]) == "Pickup time"
    assert column_label("cancel_code", spec) == "Cancel code"
    assert state_label("cancelled", spec) == "Called off"
    assert state_label("placed", spec) == "Placed"


def test_no_titles_reads_the_names() -> None:
    spec = load_app(copy.deepcopy(MANIFEST)).tables["orders"]
    assert table_label(spec, "opening_hours") == "Opening hours"
    assert column_label("pickup_at", spec) == "Pickup at"
    assert state_label("picked_up", spec) == "Picked up"
