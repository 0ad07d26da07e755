"""Webhooks: each connection's endpoints (name, URL, signing secret) that automations name.

Revision ID: 0003
Revises: 0002
Create Date: 2026-01-03 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = "adminium_control"


def upgrade() -> None:
    """Create the webhooks table: one name per connection, gone with its connection."""
    op.create_table(
        "webhooks",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("connection_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(63), nullable=False),
        sa.Column("url", sa.String(2000), nullable=False),
        sa.Column("secret", sa.String(200), nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.PrimaryKeyConstraint("id", name="pk_webhooks"),
        sa.ForeignKeyConstraint(
            ["connection_id"],
            [f"{SCHEMA}.connections.id"],
            name="fk_webhooks_connection_id_connections",
            ondelete="CASCADE",
        ),
        sa.UniqueConstraint("connection_id", "name", name="uq_webhooks_connection_id"),
        schema=SCHEMA,
    )


def downgrade() -> None:
    """Drop the webhooks table."""
    op.drop_table("webhooks", schema=SCHEMA)
