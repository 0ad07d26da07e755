"""The sample marks: which rows of a connection's database are sample data, by app.

Its table is `adminium.sample_rows` in the database (the name existing databases keep);
adding and removing sample data is `core.sample_data`."""

from __future__ import annotations

import sqlalchemy as sa

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
