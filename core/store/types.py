"""The SQL type of each manifest column type, and the one type that reads a value on the
venue's clock: a `timestamp` column (`"zone": "venue"`) keeps wall time with no zone, read
by `core.time.clock.on_venue_clock` and written back by `wall_clock_of`.

| manifest type | PostgreSQL type |
| --- | --- |
| `serial`, `integer` | integer |
| `numeric` (with `precision`, `scale`) | numeric, numeric(p, s) |
| `text` (with `maxLength`), `enum` | text, character varying(n) (an enum: with a CHECK) |
| `boolean`, `date` | boolean, date |
| `timestamptz` | timestamp with time zone |
| `timestamp` (`"zone": "venue"`) | timestamp without time zone |
| `uuid` | uuid (as its canonical text in Python) |
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from core.manifest.model import Column
from core.time.clock import on_venue_clock, wall_clock_of

UTC_ZONE = ZoneInfo("UTC")


class VenueWallTime(sa.types.TypeDecorator[datetime]):
    """A `timestamp without time zone` read on the venue's clock: a stored wall time comes
    back aware in the venue's zone with its wall fields kept (so it is written back as it
    was); an instant written is stored as the wall time it shows there."""

    impl = sa.DateTime(timezone=False)
    cache_ok = True

    def __init__(self, zone: ZoneInfo = UTC_ZONE) -> None:
        super().__init__()
        self.zone = zone

    def process_bind_param(self, value: Any, dialect: sa.engine.Dialect) -> Any:
        """An instant as the venue's wall time; a wall time given with no zone, as it is."""
        if isinstance(value, datetime) and value.utcoffset() is not None:
            return wall_clock_of(value, self.zone)
        return value

    def process_result_value(self, value: Any, dialect: sa.engine.Dialect) -> Any:
        """A stored wall time on the venue's clock (a column that turns out to keep its
        offset is read as the instant it is)."""
        if isinstance(value, datetime) and value.tzinfo is None:
            return on_venue_clock(value, self.zone)
        return value


class ListedValues(sa.Enum):
    """A manifest's enum (or state) column: text held to its listed values by a named CHECK
    on the tables Adminium makes, and read as the database holds it. A value the manifest
    does not list (the venue's own software wrote it, or a replace renamed a value rows
    still hold) comes back as its text, never a LookupError: what shows it says that it is
    not in the manifest."""

    def result_processor(self, dialect: sa.Dialect, coltype: object) -> None:
        """No processing: the values are text, listed or not."""
        return None


_SIMPLE_TYPES: dict[str, sa.types.TypeEngine[Any]] = {
    "serial": sa.Integer(),
    "integer": sa.Integer(),
    "boolean": sa.Boolean(),
    "date": sa.Date(),
    "timestamptz": sa.DateTime(timezone=True),
    "uuid": sa.Uuid(as_uuid=False),
}


def column_type(
    column: Column, states: Sequence[str], *, check_name: str, zone: ZoneInfo = UTC_ZONE
) -> sa.types.TypeEngine[Any]:
    """The SQL type of a manifest column; an enum is text with a named CHECK of its values
    (`check_name`), a `timestamp` the venue's wall time read in `zone`."""
    if column.type in _SIMPLE_TYPES:
        return _SIMPLE_TYPES[column.type]
    if column.type == "numeric":
        if column.precision is None:
            return sa.Numeric()  # the check refuses a scale without its precision
        return sa.Numeric(column.precision, column.scale or 0)
    if column.type == "timestamp":
        return VenueWallTime(zone)
    if column.type == "enum":
        values = list(column.values or states)
        return ListedValues(
            *values,
            native_enum=False,
            create_constraint=True,
            length=max(len(v) for v in values),
            name=check_name,
            validate_strings=False,
        )
    return sa.String(column.max_length) if column.max_length else sa.Text()
