"""Agreements: each app's last comparison of its manifest with its tables.

Revision ID: 0005
Revises: 0004
Create Date: 2026-01-05 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = "adminium_control"


def upgrade() -> None:
    """Create the agreements table: one row per app, gone with its app."""
    op.create_table(
        "agreements",
        sa.Column("app_id", sa.Integer(), nullable=False),
        sa.Column("fingerprint", sa.String(32), nullable=False),
        sa.Column("manifest_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("disagreements", JSONB(), nullable=False),
        sa.PrimaryKeyConstraint("app_id", name="pk_agreements"),
        sa.ForeignKeyConstraint(
            ["app_id"],
            [f"{SCHEMA}.apps.id"],
            name="fk_agreements_app_id_apps",
            ondelete="CASCADE",
        ),
        schema=SCHEMA,
    )


def downgrade() -> None:
    """Drop the agreements table."""
    op.drop_table("agreements", schema=SCHEMA)
