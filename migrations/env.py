"""Alembic environment for the control plane: Adminium's own database (DATABASE_URL)."""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from services.models import SCHEMA, Base
from services.urls import sqlalchemy_url

# Any fixed number: every process that upgrades at once (web, worker, clock) waits on it.
MIGRATION_LOCK = 0x0AD3_1410

config = context.config
database_url = config.attributes.get("database_url") or os.environ.get("DATABASE_URL", "")
if not database_url:
    raise RuntimeError("DATABASE_URL is not set: the control plane has no database")


def run_offline() -> None:
    """Print the SQL instead of running it (`alembic upgrade head --sql`)."""
    context.configure(
        url=sqlalchemy_url(database_url),
        target_metadata=Base.metadata,
        version_table_schema=SCHEMA,
        include_schemas=True,
        literal_binds=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    """Upgrade under an advisory lock, in one transaction."""
    engine = create_engine(sqlalchemy_url(database_url), poolclass=NullPool)
    with engine.connect() as connection:
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        connection.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{SCHEMA}"'))
        context.configure(
            connection=connection,
            target_metadata=Base.metadata,
            version_table_schema=SCHEMA,
            include_schemas=True,
        )
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()
    engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
