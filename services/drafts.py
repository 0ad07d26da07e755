"""A manifest drafted from a connection's database (`adminium app draft`, the connection
page's "Draft from the database"): `core.agreement.draft` read in a transaction rolled
back, then the manifest check run on the draft, and what a person still has to write."""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from core.agreement.draft import draft_manifest
from core.manifest.check import check_manifest
from services.connections import get_connection
from services.errors import DatabaseRefused, InvalidValue, first_line
from services.storage import connection_engine


@dataclass(frozen=True)
class Drafted:
    """A draft and what it leaves to a person: the draft's notes, the check's own sentences
    (`where: sentence`), and the moves and timed rules still to write."""

    manifest: dict[str, Any]
    notes: tuple[str, ...]
    refusals: tuple[str, ...]
    to_write: tuple[str, ...]

    @property
    def lines(self) -> list[str]:
        """Everything a person still has to write or decide, one sentence a line."""
        return [*self.notes, *self.refusals, *self.to_write]


def draft_app(
    session: Session,
    connection_name: str,
    *,
    schema: str = "public",
    tables: Collection[str] = (),
    name: str | None = None,
) -> Drafted:
    """A manifest of the connection's tables in `schema` (those named, else every one),
    named `name` (else the schema's, or the connection's for `public`). Nothing is
    written. Raises NotFound, InvalidValue (no table to draft), DatabaseRefused."""
    connection = get_connection(session, connection_name)
    engine = connection_engine(connection)
    try:
        with engine.connect() as conn:
            try:
                draft = draft_manifest(
                    conn,
                    schema,
                    tables=set(tables) or None,
                    name=name or (connection_name if schema == "public" else schema),
                )
            finally:
                conn.rollback()
    except SQLAlchemyError as error:
        raise DatabaseRefused(
            f"could not read connection {connection_name!r}'s catalogue: {first_line(error)}",
            {"connection": connection_name},
        ) from None
    if not draft.manifest["tables"]:
        asked = f" named {', '.join(sorted(tables))}" if tables else ""
        raise InvalidValue(
            f"connection {connection_name!r} has no table{asked} in schema {schema}: nothing "
            "to draft",
            {"schema": schema, "tables": sorted(tables)},
        )
    refusals = tuple(f"{r.where}: {r.sentence}" for r in check_manifest(draft.manifest))
    return Drafted(draft.manifest, draft.notes, refusals, _to_write(draft.manifest))


def _to_write(manifest: dict[str, Any]) -> tuple[str, ...]:
    """The moves and timed rules a draft leaves to a person, a sentence per table."""
    out: list[str] = []
    for name, table in manifest["tables"].items():
        states = table.get("states")
        if states is None:
            continue
        column = next(c for c in table["columns"] if c["ref"] == states["column"])
        out.append(
            f"{name}.states: its states are {', '.join(column['values'])} (initial "
            f"{states['initial']}); write its moves (which state may follow which) and its "
            "timed rules (states.timed: which state the clock moves, to which, at what moment)"
        )
    if not out:
        out.append(
            "no table has a state column whose values the database lists: write one's states "
            "(states.column, initial, moves) for the clock to move its rows"
        )
    return tuple(out)


WIDTH = 96
"""The widest line `manifest_text` writes a JSON object or array on whole."""


def manifest_text(value: Any, indent: int = 0) -> str:
    """A manifest as a file holds it, the way the examples are written: an object or array
    that fits on one line (`WIDTH`) is written on one, a larger one a member a line."""
    flat = json.dumps(value, ensure_ascii=False)
    if not isinstance(value, dict | list) or indent + len(flat) <= WIDTH or not value:
        return flat
    inner = " " * (indent + 2)
    if isinstance(value, dict):
        parts = [
            f"{inner}{json.dumps(k, ensure_ascii=False)}: {manifest_text(v, indent + 2)}"
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(parts) + "\n" + " " * indent + "}"
    parts = [f"{inner}{manifest_text(v, indent + 2)}" for v in value]
    return "[\n" + ",\n".join(parts) + "\n" + " " * indent + "]"
