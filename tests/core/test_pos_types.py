"""The column types a POS uses: uuid, wall time on the venue's clock, numeric(p,s); a
composite key refused with what to do; a manifest default sent on insert."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from core.basics.errors import ValueRefused
from core.basics.values import checked_value
from core.manifest.check import check_manifest
from core.manifest.model import load_app
from core.rules.columns import left_out_values
from core.time.clock import on_venue_clock, wall_clock_of

LONDON = ZoneInfo("Europe/London")


def orders(*columns: dict[str, Any], key: Any = "id") -> dict[str, Any]:
    """An app of one table `orders` keyed by a uuid, with these columns besides."""
    return {
        "name": "pos",
        "tables": {"orders": {"key": key, "columns": [{"ref": "id", "type": "uuid"}, *columns]}},
    }


def sentences(manifest: dict[str, Any]) -> list[tuple[str, str]]:
    return [(r.where, r.sentence) for r in check_manifest(manifest)]


def test_the_pos_types_pass_the_check() -> None:
    manifest = orders(
        {"ref": "pickup_at", "type": "timestamp", "zone": "venue", "nullable": True},
        {"ref": "total", "type": "numeric", "precision": 10, "scale": 2, "default": 0},
        {"ref": "terminal_id", "type": "text", "default": "WEB"},
        {"ref": "parent_id", "type": "uuid", "nullable": True, "references": "orders"},
    )
    assert sentences(manifest) == []


def test_a_composite_key_is_refused_with_a_single_column_key_to_add() -> None:
    manifest = orders({"ref": "terminal_id", "type": "text"}, key=["id", "terminal_id"])
    assert sentences(manifest) == [
        (
            "tables.orders.key",
            '["id", "terminal_id"] is a key of 2 columns: Adminium finds a row by one column,'
            ' so add a single-column key to "orders" (such as "id uuid PRIMARY KEY DEFAULT'
            ' gen_random_uuid()", or a UNIQUE column it has) and name that column here',
        )
    ]


@pytest.mark.parametrize(
    ("column", "expected"),
    [
        pytest.param(
            {"ref": "pickup_at", "type": "timestamp"},
            (
                "tables.orders.columns[1]",
                '"orders.pickup_at" is timestamp, a date and wall time with no zone of its'
                ' own: say whose clock it is with "zone": "venue" (read on the connection\'s'
                " time zone), or make the column timestamptz",
            ),
            id="timestamp_names_its_clock",
        ),
        pytest.param(
            {"ref": "pickup_at", "type": "timestamptz", "zone": "venue"},
            (
                "tables.orders.columns[1].zone",
                '"orders.pickup_at" is timestamptz: "zone" is for timestamp columns',
            ),
            id="zone_only_on_timestamp",
        ),
        pytest.param(
            {"ref": "total", "type": "numeric", "scale": 2},
            (
                "tables.orders.columns[1].scale",
                '"orders.total" is numeric with a "scale" but no "precision": write both, as'
                ' numeric(precision, scale) keeps them (such as "precision": 10, "scale": 2)',
            ),
            id="scale_needs_precision",
        ),
        pytest.param(
            {"ref": "total", "type": "numeric", "precision": 2, "scale": 3},
            (
                "tables.orders.columns[1].scale",
                '"orders.total" is numeric of 2 digits in all: it cannot keep 3 after the'
                ' point; write a "scale" of at most its "precision"',
            ),
            id="scale_within_precision",
        ),
        pytest.param(
            {"ref": "note", "type": "text", "scale": 2},
            (
                "tables.orders.columns[1].scale",
                '"orders.note" is text: "scale" is for numeric columns',
            ),
            id="scale_only_on_numeric",
        ),
        pytest.param(
            {"ref": "total", "type": "numeric", "precision": 10, "scale": 2, "default": 1.234},
            (
                "tables.orders.columns[1].default",
                '"orders.total" takes a number of at most 2 decimals, not 1.234',
            ),
            id="default_within_scale",
        ),
        pytest.param(
            {"ref": "parent", "type": "uuid", "default": "nope"},
            ("tables.orders.columns[1].default", '"orders.parent" takes a UUID, not "nope"'),
            id="uuid_default_is_a_uuid",
        ),
        pytest.param(
            {"ref": "parent", "type": "text", "references": "orders"},
            (
                "tables.orders.columns[1].type",
                '"orders.parent" is text but "orders.id" is uuid: a foreign key to it is uuid',
            ),
            id="a_link_to_a_uuid_key_is_uuid",
        ),
    ],
)
def test_the_check_refuses(column: dict[str, Any], expected: tuple[str, str]) -> None:
    assert sentences(orders(column)) == [expected]


def test_a_moment_reads_a_wall_time_column() -> None:
    manifest = orders(
        {"ref": "status", "type": "enum", "values": ["placed", "cancelled"]},
        {"ref": "pickup_at", "type": "timestamp", "zone": "venue", "nullable": True},
    )
    manifest["tables"]["orders"]["states"] = {
        "column": "status",
        "initial": "placed",
        "moves": {"placed": ["cancelled"]},
        "timed": [
            {"from": "placed", "to": "cancelled", "at": {"column": "pickup_at", "time": "21:00"}}
        ],
    }
    assert sentences(manifest) == []


# 29 March 2026, London: at 01:00 GMT the clocks go forward to 02:00 BST, so 01:30 is never
# shown; the spec reads it as the hour after, 02:30 BST = 01:30 UTC. 25 October 2026: at
# 02:00 BST they go back to 01:00 GMT, so 01:30 is shown twice, at 00:30 and 01:30 UTC;
# the spec reads the first.
@pytest.mark.parametrize(
    ("wall", "instant"),
    [
        ("2026-03-29 01:30", "2026-03-29 01:30"),
        ("2026-03-29 02:30", "2026-03-29 01:30"),
        ("2026-10-25 01:30", "2026-10-25 00:30"),
        ("2026-07-10 12:30", "2026-07-10 11:30"),
        ("2026-01-10 12:30", "2026-01-10 12:30"),
    ],
    ids=[
        "spring_gap_reads_the_hour_after",
        "after_the_gap",
        "autumn_fold_reads_first",
        "summer",
        "winter",
    ],
)
def test_a_stored_wall_time_reads_on_the_venue_clock(wall: str, instant: str) -> None:
    stored = datetime.fromisoformat(wall)
    read = on_venue_clock(stored, LONDON)
    assert read.astimezone(UTC) == datetime.fromisoformat(instant).replace(tzinfo=UTC)
    # Written back, it is stored as it was, the skipped hour included.
    assert wall_clock_of(read, LONDON) == stored


def test_an_instant_is_stored_as_the_wall_time_it_shows() -> None:
    # 01:30 UTC on 25 October 2026 is the second 01:30 (GMT): stored 01:30, read as the first.
    second = datetime(2026, 10, 25, 1, 30, tzinfo=UTC)
    assert wall_clock_of(second, LONDON) == datetime(2026, 10, 25, 1, 30)
    assert wall_clock_of(datetime(2026, 7, 10, 11, 30, tzinfo=UTC), LONDON) == datetime(
        2026, 7, 10, 12, 30
    )


@pytest.mark.parametrize("value", [12.345, "12.345", Decimal("12.345")])
def test_more_decimals_than_the_scale_are_refused_never_rounded(value: Any) -> None:
    with pytest.raises(ValueRefused) as refused:
        checked_value("total", "numeric", value, scale=2, precision=10)
    assert refused.value.details == {
        "column": "total",
        "reason": "type",
        "scale": 2,
        "precision": 10,
    }
    assert str(refused.value) == (
        "'total' keeps at most 2 decimals (the column is numeric(10,2)), not 12.345:"
        " it is refused rather than rounded"
    )


@pytest.mark.parametrize("value", [12.34, "12.340", Decimal("12"), 99999999.99, -3])
def test_a_number_the_column_keeps_passes(value: Any) -> None:
    assert checked_value("total", "numeric", value, scale=2, precision=10) == value


def test_more_digits_before_the_point_than_the_precision_allows_are_refused() -> None:
    with pytest.raises(ValueRefused) as refused:
        checked_value("total", "numeric", 123456789, scale=2, precision=10)
    assert "keeps at most 8 digits before the point (the column is numeric(10,2))" in str(
        refused.value
    )


def test_a_uuid_is_kept_in_its_canonical_text() -> None:
    given = "3F2B8C1E-7D4A-4E0B-9C5D-2A6F1E8B7C90"
    assert checked_value("id", "uuid", given) == given.lower()
    assert checked_value("id", "uuid", uuid.UUID(given)) == given.lower()
    with pytest.raises(ValueRefused):
        checked_value("id", "uuid", "order-42")


def test_a_new_row_gets_each_manifest_default_and_a_uuid_key() -> None:
    app = load_app(
        orders(
            {"ref": "terminal_id", "type": "text", "default": "WEB"},
            {"ref": "total", "type": "numeric", "precision": 10, "scale": 2, "default": 0},
            {"ref": "note", "type": "text", "nullable": True},
        )
    )
    spec = app.tables["orders"]
    filled = left_out_values(spec, {"note": "x"})
    assert filled["terminal_id"] == "WEB" and filled["total"] == 0
    assert str(uuid.UUID(filled["id"])) == filled["id"]
    assert "note" not in filled
    # What the writer sent is kept; nothing is filled over it.
    assert left_out_values(spec, {"id": "k", "terminal_id": "T1", "total": 1}) == {}
