"""The sample marks: which rows of a connection's database are sample data, by app.

Its table is `adminium.sample_rows` in the database (the name existing databases keep);
adding and removing sample data is `core.samples.data`."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.store.schema import sample_marks


def is_sample_row(conn: Connection, app: str, table: str, key: object) -> bool:
    """Whether a row is sample data (it carries a mark)."""
    found = conn.execute(
        sa.select(sa.literal(1)).where(
            sample_marks.c.app == app,
            sample_marks.c.table_name == table,
            sample_marks.c.row_key == str(key),
        )
    ).first()
    return found is not None
