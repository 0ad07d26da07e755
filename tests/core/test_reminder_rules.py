"""A reminder producer's check and its states: a reminder that can
never send is refused with the fix named; `states` names states of its table; without it a
row in a final state (no move out of it, listed or timed) is never reminded."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from adminium.cli import main
from core.manifest.check import check_manifest
from core.manifest.model import load_app
from core.manifest.outbox_model import Reminder
from core.outbox.reminders import reminded_states
from tests.integration.outbox_fixtures import mail_shop_manifest

MESSAGE = 0
REMINDER = 1


def manifest(**reminder: Any) -> dict[str, Any]:
    """The outbox tests' shop, its reminder changed by `reminder` (None: the field goes)."""
    found = copy.deepcopy(mail_shop_manifest())
    producer = found["outbox"]["producers"][REMINDER]
    for name, value in reminder.items():
        if value is None:
            producer.pop(name, None)
        else:
            producer[name] = value
    return found


def sentences(found: dict[str, Any]) -> list[tuple[str, str]]:
    return [(r.where, r.sentence) for r in check_manifest(found)]


def test_a_reminder_with_no_address_anywhere_is_refused_with_its_fix() -> None:
    found = manifest(to=None)
    del found["outbox"]["producers"][MESSAGE]
    assert sentences(found) == [
        (
            "outbox.producers[0]",
            'a reminder of "orders" has no "to", and no message producer of "orders" lends it'
            ' an address: give it "to", the text column of "orders" holding the address',
        )
    ]


def test_a_reminder_borrows_the_address_of_a_message_of_its_table() -> None:
    assert sentences(manifest(to=None)) == []


CASES = {
    "known_states_pass": (["placed"], []),
    "an_unknown_state_is_named": (
        ["placed", "ready"],
        [
            (
                "outbox.producers[1].states[1]",
                '"orders" has no state "ready": its states are placed, cancelled, done',
            )
        ],
    ),
    "an_empty_list_is_refused": (
        [],
        [("outbox.producers[1].states", '"states" names at least one state, or is left out')],
    ),
}


@pytest.mark.parametrize(("states", "refused"), CASES.values(), ids=CASES.keys())
def test_states_name_states_of_the_reminders_table(
    states: list[str], refused: list[tuple[str, str]]
) -> None:
    assert sentences(manifest(states=states)) == refused


def test_states_on_a_table_without_states_are_refused() -> None:
    found = manifest(states=["placed"])
    found["outbox"]["producers"][REMINDER]["before"]["table"] = "customers"
    found["outbox"]["producers"][REMINDER]["before"]["at"] = "seen_at"
    found["outbox"]["producers"][REMINDER]["to"] = "email"
    found["tables"]["customers"]["columns"] += [
        {"ref": "seen_at", "type": "timestamptz", "nullable": True},
        {"ref": "email", "type": "text", "nullable": True},
    ]
    found["outbox"]["producers"][REMINDER]["before"]["lead"] = {
        "table": "settings",
        "column": "reminder_hours",
    }
    assert sentences(found) == [
        (
            "outbox.producers[1].states",
            '"customers" has no states: "states" names states of the reminder\'s table',
        )
    ]


def test_a_final_state_is_never_reminded_unless_named() -> None:
    found = manifest()
    orders = found["tables"]["orders"]["states"]
    # `done` gets a timed move out of it: no longer final. `cancelled` has none.
    orders["timed"].append({"from": "done", "to": "cancelled", "at": {"column": "due_at"}})
    app = load_app(found)
    reminder = app.outbox.producers[REMINDER]  # type: ignore[union-attr]
    assert isinstance(reminder, Reminder)
    assert reminded_states(app.tables["orders"], reminder) == ["placed", "done"]
    named = load_app(manifest(states=["cancelled"])).outbox.producers[REMINDER]  # type: ignore[union-attr]
    assert isinstance(named, Reminder)
    assert reminded_states(app.tables["orders"], named) == ["cancelled"]


def test_adminium_check_refuses_a_reminder_that_can_never_send(tmp_path: Path) -> None:
    found = manifest(to=None)
    del found["outbox"]["producers"][MESSAGE]
    path = tmp_path / "shop.json"
    path.write_text(json.dumps(found), encoding="utf-8")
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        f"Error: the manifest check refused {path} (MANIFEST_REFUSED)",
        '  outbox.producers[0]: a reminder of "orders" has no "to", and no message producer of'
        ' "orders" lends it an address: give it "to", the text column of "orders" holding the'
        " address",
    ]
