"""Control plane: connections, apps, users and their roles.

Revision ID: 0001
Revises:
Create Date: 2026-01-01 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = "adminium_control"


def upgrade() -> None:
    """Create the control plane's four tables in their schema."""
    op.create_table(
        "connections",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(63), nullable=False),
        sa.Column("url", sa.String(2000), nullable=False),
        sa.Column("zone", sa.String(64), nullable=True),
        sa.Column("paused", sa.Boolean(), server_default="false", nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.PrimaryKeyConstraint("id", name="pk_connections"),
        sa.UniqueConstraint("name", name="uq_connections_name"),
        schema=SCHEMA,
    )
    op.create_table(
        "apps",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("connection_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(63), nullable=False),
        sa.Column("manifest", postgresql.JSONB(), nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column(
            "updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.PrimaryKeyConstraint("id", name="pk_apps"),
        sa.ForeignKeyConstraint(
            ["connection_id"],
            [f"{SCHEMA}.connections.id"],
            name="fk_apps_connection_id_connections",
            ondelete="CASCADE",
        ),
        sa.UniqueConstraint("connection_id", "name", name="uq_apps_connection_id"),
        schema=SCHEMA,
    )
    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("email", sa.String(254), nullable=False),
        sa.Column("password_hash", sa.String(255), nullable=True),
        sa.Column("token_hash", sa.String(64), nullable=True),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.PrimaryKeyConstraint("id", name="pk_users"),
        sa.UniqueConstraint("email", name="uq_users_email"),
        sa.UniqueConstraint("token_hash", name="uq_users_token_hash"),
        schema=SCHEMA,
    )
    op.create_table(
        "user_roles",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("app_id", sa.Integer(), nullable=True),
        sa.Column("role", sa.String(63), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_user_roles"),
        sa.ForeignKeyConstraint(
            ["user_id"],
            [f"{SCHEMA}.users.id"],
            name="fk_user_roles_user_id_users",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["app_id"],
            [f"{SCHEMA}.apps.id"],
            name="fk_user_roles_app_id_apps",
            ondelete="CASCADE",
        ),
        sa.UniqueConstraint(
            "user_id",
            "app_id",
            "role",
            name="uq_user_roles_user_id",
            postgresql_nulls_not_distinct=True,
        ),
        schema=SCHEMA,
    )
    op.create_index(
        "ix_adminium_control_user_roles_user_id", "user_roles", ["user_id"], schema=SCHEMA
    )


def downgrade() -> None:
    """Drop the control plane's tables."""
    for table in ("user_roles", "users", "apps", "connections"):
        op.drop_table(table, schema=SCHEMA)
