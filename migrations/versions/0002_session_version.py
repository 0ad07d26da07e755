"""Users: a session version, so sign-out and a new password end sessions on the server.

Revision ID: 0002
Revises: 0001
Create Date: 2026-01-02 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = "adminium_control"


def upgrade() -> None:
    """Add users.session_version (0: every session signed before it stays valid once)."""
    op.add_column(
        "users",
        sa.Column("session_version", sa.Integer(), server_default="0", nullable=False),
        schema=SCHEMA,
    )


def downgrade() -> None:
    """Drop users.session_version."""
    op.drop_column("users", "session_version", schema=SCHEMA)
