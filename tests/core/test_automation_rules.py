"""The manifest check of automations: names, tables, watched columns and values."""

from __future__ import annotations

from typing import Any

import pytest

from core.manifest.model import load_app
from tests.core.manifest_cases import Expected, Mutation, put, refused

KITCHEN: dict[str, Any] = {
    "name": "kitchen_screen",
    "table": "orders",
    "on": {"column": "status", "values": ["cancelled"]},
    "webhook": "kitchen",
}


def automations(*entries: dict[str, Any]) -> Mutation:
    return put("automations", value=list(entries))


CASES: list[tuple[str, Mutation, Expected]] = [
    ("one_on_a_state_passes", automations(KITCHEN), []),
    ("without_on_passes", automations({**KITCHEN, "on": None}), []),
    (
        "unknown_table",
        automations({**KITCHEN, "table": "tills"}),
        [("automations[0].table", 'there is no table "tills"')],
    ),
    (
        "unknown_column",
        automations({**KITCHEN, "on": {"column": "colour", "values": ["red"]}}),
        [("automations[0].on.column", '"orders" has no column "colour"')],
    ),
    (
        "unknown_state",
        automations({**KITCHEN, "on": {"column": "status", "values": ["burnt"]}}),
        [
            (
                "automations[0].on.values[0]",
                '"orders" has no state "burnt": its states are placed, confirmed, preparing,'
                " ready, picked_up, cancelled",
            )
        ],
    ),
    (
        "duplicate_name",
        automations(KITCHEN, {**KITCHEN, "webhook": "till"}),
        [
            (
                "automations[1].name",
                '"kitchen_screen" is already an automation (automations[0]): give each its own'
                " name",
            )
        ],
    ),
]


def _without_none(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if v is not None}


@pytest.mark.parametrize(
    ("mutate", "expected"), [(m, e) for _, m, e in CASES], ids=[c[0] for c in CASES]
)
def test_automation_check(mutate: Mutation, expected: Expected) -> None:
    def clean(doc: dict[str, Any]) -> None:
        mutate(doc)
        doc["automations"] = [_without_none(a) for a in doc["automations"]]

    assert refused("takeaway", clean) == expected


@pytest.mark.parametrize(
    ("entry", "where"),
    [
        ({**KITCHEN, "name": ""}, "automations[0].name"),
        ({**KITCHEN, "webhook": ""}, "automations[0].webhook"),
        ({**KITCHEN, "samples": "yes"}, "automations[0].samples"),
        ({**KITCHEN, "url": "https://example.com"}, "automations[0].url"),
    ],
    ids=["empty_name", "empty_webhook", "samples_not_boolean", "url_never_in_a_manifest"],
)
def test_automation_shape_refused(entry: dict[str, Any], where: str) -> None:
    assert [w for w, _ in refused("takeaway", automations(entry))] == [where]


def test_samples_default_to_false() -> None:
    doc = {
        "name": "a",
        "tables": {"t": {"key": "id", "columns": [{"ref": "id", "type": "serial"}]}},
    }
    app = load_app({**doc, "automations": [{"name": "x", "table": "t", "webhook": "w"}]})
    assert app.automations is not None
    assert (app.automations[0].samples, app.automations[0].on) == (False, None)
