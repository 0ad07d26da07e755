"""The database's own refusals of a write as the pipeline's codes (step 4 of DESIGN "The
write pipeline"): a row held elsewhere or a serialisation failure is WRITE_CONFLICT, a
missing privilege COLUMN_NOT_WRITABLE naming the columns, a broken constraint or a value
that does not fit VALUE_REFUSED in plain words (`core.rules.refusals`).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from core.basics.errors import ColumnNotWritable, WriteConflict
from core.rules.refusals import refused_value
from core.store.store import Store


def database_refusal(
    store: Store, table: str, key: Any, written: list[str], error: sa.exc.DBAPIError
) -> Exception:
    """The database's own refusal as the pipeline's code; anything else passes unchanged."""
    state = getattr(error.orig, "sqlstate", None) or ""
    diag = getattr(error.orig, "diag", None)
    where = {"table": table, "key": key}
    if state in ("55P03", "40001", "40P01"):
        return WriteConflict("another writer holds this row; try again", where)
    if state == "42501":
        columns = unwritable(store, table, key, written)
        return ColumnNotWritable(
            "the connection's database role may not write "
            + (", ".join(columns) if columns else table),
            {**where, "columns": columns},
        )
    reasons = {"23502": "not-null", "23514": "check", "23503": "foreign-key", "23505": "unique"}
    if state in reasons or state.startswith("22"):
        reason = reasons.get(state, "type")
        details: dict[str, Any] = {**where, "reason": reason}
        for name in ("column_name", "constraint_name"):
            value = getattr(diag, name, None)
            if value:
                details[name.removesuffix("_name")] = value
        message = getattr(diag, "message_primary", None) or str(error.orig)
        return refused_value(store, table, details, message)
    return error


def unwritable(store: Store, table: str, key: Any, written: list[str]) -> list[str]:
    """The columns of the write (a new row when `key` is None) the connection's role lacks
    the privilege for."""
    privilege = "INSERT" if key is None else "UPDATE"
    qualified = f"{store.app.schema_name}.{table}"
    names = sorted(set(written))
    if not names:
        return []
    with store.engine.connect() as conn:
        allowed = conn.execute(
            sa.select(
                *(
                    sa.func.has_column_privilege(qualified, name, privilege).label(name)
                    for name in names
                )
            )
        ).one()
    return [name for name, ok in zip(names, allowed, strict=True) if not ok]
