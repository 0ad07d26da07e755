"""What a writer may send, judged without a database: Adminium's own columns and flags."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from core.basics.actors import Actor
from core.basics.errors import (
    ColumnReadOnly,
)
from core.manifest.model import load_app
from core.rules.columns import owned_columns, writer_values
from tests.core.example_rows import (
    ORDERS,
    STAFF,
    TICKETS,
)
from tests.core.manifest_cases import example

# --- owned_columns and writer_values ----------------------------------------------


def test_adminium_owns_the_state_stamps_and_codes() -> None:
    assert owned_columns(TICKETS) == {
        "link_token": "code",
        "offer_until": "stamp",
        "checked_in_at": "stamp",
        "status": "state",
    }


def test_the_hotel_late_flag_is_owned_and_dropped_when_sent() -> None:
    stays = load_app(example("hotel")).tables["stays"]
    assert owned_columns(stays)["late_cancel"] == "flag"
    kept = writer_values(stays, {"late_cancel": True, "nights": 2}, STAFF, creating=False)
    assert kept == {"nights": 2}


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        pytest.param({"colour": "red"}, "unknown", id="no-such-column"),
        pytest.param({"status": "ready"}, "state", id="state"),
        pytest.param({"cancelled_at": datetime(2026, 1, 1, tzinfo=UTC)}, "stamp", id="stamp"),
        pytest.param({"id": 9}, "key", id="serial-key"),
    ],
)
def test_a_person_may_not_write_what_adminium_owns(values: dict[str, Any], reason: str) -> None:
    with pytest.raises(ColumnReadOnly) as refused:
        writer_values(ORDERS, values, STAFF, creating=True)
    assert refused.value.details == {"column": next(iter(values)), "reason": reason}


@pytest.mark.parametrize("actor", [Actor.importer(), Actor.sample()], ids=["import", "sample"])
def test_an_import_and_sample_data_may_bring_stamps_and_codes(actor: Actor) -> None:
    at = datetime(2026, 10, 24, 18, tzinfo=UTC)
    kept = writer_values(
        TICKETS, {"checked_in_at": at, "link_token": "x" * 16}, actor, creating=True
    )
    assert kept == {"checked_in_at": at, "link_token": "x" * 16}
