"""Locales: the language the screens speak, a user's own and a connection's.

Revision ID: 0006
Revises: 0005
Create Date: 2026-01-06 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = "adminium_control"


def upgrade() -> None:
    """A nullable `locale` on users and on connections (None: chosen further down)."""
    op.add_column("users", sa.Column("locale", sa.String(16), nullable=True), schema=SCHEMA)
    op.add_column("connections", sa.Column("locale", sa.String(16), nullable=True), schema=SCHEMA)


def downgrade() -> None:
    """Drop both columns."""
    op.drop_column("connections", "locale", schema=SCHEMA)
    op.drop_column("users", "locale", schema=SCHEMA)
