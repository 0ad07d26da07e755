"""Values no column holds are refused by the pipeline, for every writer, before the database.

NUL, a lone surrogate, NaN and Infinity, and a time past what Python reads back used to
reach the driver or the database, which answered in their own words (or stored a row
nobody could read back). The pipeline refuses each as VALUE_REFUSED and writes nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest
import sqlalchemy as sa

from core.basics.actors import Actor
from core.basics.errors import ValueRefused
from core.writes.pipeline import change_row, create_row
from core.writes.request import WriteRequest
from tests.integration.pipeline_fixtures import MANIFEST, Venue, at

NOW = at("2026-03-27 12:00")
STAFF = Actor.person("sam@venue.test", {"staff"})
WRITERS = {
    "person": STAFF,
    "import": Actor.importer(),
    "sample": Actor.sample(),
    "public": Actor.public(),
}

BILLS: dict[str, Any] = {
    "key": "id",
    "columns": [
        {"ref": "id", "type": "serial"},
        {"ref": "amount", "type": "numeric", "nullable": True},
        {"ref": "seats", "type": "integer", "nullable": True},
        {"ref": "label", "type": "text", "nullable": True},
        {"ref": "kind", "type": "enum", "values": ["food", "drink"], "nullable": True},
        {"ref": "paid_on", "type": "date", "nullable": True},
        {"ref": "paid_at", "type": "timestamptz", "nullable": True},
    ],
}

EAST, WEST = timezone(timedelta(hours=5)), timezone(timedelta(hours=-5))

# (column, value): each a value some writer could send, none a column can hold.
REFUSED: dict[str, tuple[str, Any]] = {
    "nan": ("amount", float("nan")),
    "infinity": ("amount", float("inf")),
    "minus-infinity": ("amount", float("-inf")),
    "decimal-nan": ("amount", Decimal("NaN")),
    "decimal-infinity": ("amount", Decimal("-Infinity")),
    "nan-as-text": ("amount", "NaN"),
    "infinity-as-text": ("amount", " infinity"),
    "integer-nan": ("seats", float("nan")),
    "nul-in-text": ("label", "A\x00B"),
    "lone-surrogate-in-text": ("label", "A\ud800B"),
    "nul-in-an-enum": ("kind", "food\x00"),
    "past-9999-in-utc": ("paid_at", datetime(9999, 12, 31, 23, 0, tzinfo=WEST)),
    "before-year-1-in-utc": ("paid_at", datetime(1, 1, 1, 1, 0, tzinfo=EAST)),
    "past-9999-as-text": ("paid_at", "10000-01-01T00:00:00+00:00"),
    "infinity-as-a-time": ("paid_at", "infinity"),
    "time-without-offset-as-text": ("paid_at", "2026-03-27T12:00:00"),
    "date-past-9999-as-text": ("paid_on", "10000-01-01"),
    "a-list": ("label", ["a", "b"]),
    "an-object": ("amount", {"n": 1}),
}


@pytest.fixture
def bills(make_venue: Callable[..., Venue]) -> Venue:
    """The test app with a `bills` table holding one column of each kind."""
    manifest = copy.deepcopy(MANIFEST)
    manifest["tables"]["bills"] = BILLS
    return make_venue(manifest)


def count_bills(venue: Venue) -> int:
    with venue.engine.connect() as conn:
        return int(conn.execute(sa.text("SELECT count(*) FROM bills")).scalar_one())


@pytest.mark.parametrize(("column", "value"), REFUSED.values(), ids=REFUSED.keys())
def test_a_value_no_column_holds_is_refused_on_create(
    bills: Venue, column: str, value: Any
) -> None:
    with pytest.raises(ValueRefused) as refused:
        create_row(bills.store, WriteRequest("bills", STAFF, NOW, values={column: value}))
    assert (refused.value.code, refused.value.status) == ("VALUE_REFUSED", 422)
    assert refused.value.details == {"column": column, "reason": "type"}
    assert count_bills(bills) == 0
    assert bills.audit() == []


@pytest.mark.parametrize("writer", WRITERS.values(), ids=WRITERS.keys())
@pytest.mark.parametrize(
    ("column", "value"),
    [REFUSED["nan"], REFUSED["nul-in-text"], REFUSED["lone-surrogate-in-text"]],
    ids=["nan", "nul", "lone-surrogate"],
)
def test_every_writer_is_refused_on_update(
    bills: Venue, writer: Actor, column: str, value: Any
) -> None:
    key = bills.insert("bills", label="lunch", amount=Decimal("12.50"))
    with bills.unchanged("bills", key), pytest.raises(ValueRefused) as refused:
        change_row(bills.store, WriteRequest("bills", writer, NOW, key=key, values={column: value}))
    assert refused.value.details == {"column": column, "reason": "type"}


def test_values_at_the_edges_are_written_and_read_back(bills: Venue) -> None:
    values = {
        "amount": Decimal("-12.50"),
        "seats": 4,
        "label": "café ☕ 🍰",
        "paid_on": "9999-12-31",
        "paid_at": "9999-12-30T12:00:00+00:00",
    }
    result = create_row(bills.store, WriteRequest("bills", Actor.importer(), NOW, values=values))
    row = bills.row("bills", result.key)
    assert row["label"] == "café ☕ 🍰"
    assert row["paid_on"].isoformat() == "9999-12-31"
    assert row["paid_at"] == datetime(9999, 12, 30, 12, tzinfo=UTC)
