"""The control plane's version: one number every write of its tables raises, in the write's
own transaction, so a web process that caches users, apps and connections can tell that
what it holds may be old (services/control_cache.py), whoever wrote: the product, a
console without REDIS_URL, or SQL typed by hand.

Revision ID: 0004
Revises: 0003
Create Date: 2026-01-04 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = "adminium_control"
TABLES = ("connections", "apps", "webhooks", "users", "user_roles")


def upgrade() -> None:
    """The one-row table, and a statement trigger on each control-plane table raising it."""
    op.create_table(
        "control_version",
        sa.Column("id", sa.Integer(), server_default="1", nullable=False),
        sa.Column("version", sa.BigInteger(), server_default="0", nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_control_version"),
        sa.CheckConstraint("id = 1", name="ck_control_version_one_row"),
        schema=SCHEMA,
    )
    op.execute(f"INSERT INTO {SCHEMA}.control_version DEFAULT VALUES")
    op.execute(
        f"CREATE FUNCTION {SCHEMA}.raise_control_version() RETURNS trigger"
        " LANGUAGE plpgsql AS $$ BEGIN"
        f" UPDATE {SCHEMA}.control_version SET version = version + 1;"
        " RETURN NULL; END $$"
    )
    for table in TABLES:
        op.execute(
            f"CREATE TRIGGER raise_control_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE"
            f" ON {SCHEMA}.{table} FOR EACH STATEMENT"
            f" EXECUTE FUNCTION {SCHEMA}.raise_control_version()"
        )


def downgrade() -> None:
    """Drop the triggers, the function and the table."""
    for table in TABLES:
        op.execute(f"DROP TRIGGER raise_control_version ON {SCHEMA}.{table}")
    op.execute(f"DROP FUNCTION {SCHEMA}.raise_control_version()")
    op.drop_table("control_version", schema=SCHEMA)
