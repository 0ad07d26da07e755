"""The sample marks: which rows of a connection's database are sample data, by app.

Its table is `adminium.sample_rows` in the database (the name existing databases keep);
adding and removing sample data is `core.sample_data`."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.audit import adminium_metadata

sample_marks = sa.Table(
    "sample_rows",
    adminium_metadata,
    sa.Column("app", sa.Text, primary_key=True),
    sa.Column("table_name", sa.Text, primary_key=True),
    sa.Column("row_key", sa.Text, primary_key=True),
    sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
)
"""One mark per sample row; a mark stays whatever moves the row, the clock included."""


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
