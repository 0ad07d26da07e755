"""The lock every install of Adminium's tables in a database takes, until its transaction ends.

Two processes installing at once (`app add --create-tables` while `adminium run` starts)
take turns, where `IF NOT EXISTS` alone lets both try to make the schema (a duplicate key
of `pg_namespace`). Transaction-level, so it holds through a pooler's transaction mode.
"""

from __future__ import annotations

import sqlalchemy as sa

INSTALL_LOCK = sa.text("SELECT pg_advisory_xact_lock(hashtextextended('adminium install', 0))")
