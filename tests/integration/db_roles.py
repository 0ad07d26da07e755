"""A store seen through a real, restricted PostgreSQL role: for the database's own refusals."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import psycopg
import sqlalchemy as sa
from psycopg import sql

from core.store.store import Store


@contextmanager
def restricted_store(store: Store, grants: Sequence[str]) -> Iterator[Store]:
    """The store through a new login role holding only `grants` (each with `{}` for the role)."""
    role = f"adm_role_{uuid.uuid4().hex[:10]}"
    owner = store.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(owner, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        for statement in grants:
            conn.execute(sql.SQL(statement).format(sql.Identifier(role)))
    engine = sa.create_engine(store.engine.url.set(username=role, password=None))
    try:
        yield Store(engine, store.app, store.zone, connection=store.connection)
    finally:
        engine.dispose()
        with psycopg.connect(owner, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))
