"""A manifest drafted from the catalogue of an existing database (`adminium app draft`).

Each table's columns get the manifest type that fits their PostgreSQL type, read from the
same fit table the comparison judges with (`core.agreement.fit.FITS`), so a draft the
database made always agrees with it: text with `maxLength` from varchar(n), numeric with
its precision and scale, `timestamp` (`"zone": "venue"`) for a `timestamp without time
zone`, an enum from a PostgreSQL ENUM type or a `CHECK (col IN (…))`. Nullability, the
literal defaults, the primary key, the foreign keys (as `references`, the links `via`
reads) come as the database keeps them; a state column is guessed from an enum column
named like status or state (its values the states, no moves: those are the person's to
write). What the draft leaves out, and why, is said in `Draft.notes`.

The columns (`core.agreement.catalogue`) and the keys (SQLAlchemy's inspector) are read in
the caller's transaction; nothing is written.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from core.agreement.catalogue import Check, ColumnFacts, TableFacts, read_catalogue
from core.agreement.fit import ENUM, FITS, WHOLE

STATE_NAMES = re.compile(r"^(status|state)$|_(status|state)$", re.IGNORECASE)
"""A column named like a state column (`status`, `state`, `order_status` …)."""

_CHOSEN_APART = frozenset({"serial", "enum"})
"""Manifest types the draft picks from more than the base type (a sequence, listed values)."""

_IN_LIST = re.compile(r"=\s*ANY\s*\(\(?ARRAY\[(?P<items>.*)\]", re.DOTALL)
_EQUALS_ONE = re.compile(r"^\(*\(?(?P<col>\"?[\w ]+\"?)\)?(::[\w ]+)?\s*=\s*(?P<item>'.*')")
_QUOTED = re.compile(r"'((?:[^']|'')*)'")
_LITERAL_TEXT = re.compile(r"^'((?:[^']|'')*)'(::[\w .\"]+(\(\d+(,\s*\d+)?\))?)?$")
_NUMBER = re.compile(r"^\(?(-?\d+(\.\d+)?)\)?$")


@dataclass(frozen=True)
class Draft:
    """A drafted manifest (JSON, as a file holds it) and what the draft left to a person."""

    manifest: dict[str, Any]
    notes: tuple[str, ...]
    """Each column or table the draft left out or could not decide, in a sentence."""


def drafted_type(facts: ColumnFacts, *, listed: bool) -> str | None:
    """The manifest type that fits a column (`core.agreement.fit.FITS`, in its order):
    `enum` when its values are listed (an ENUM type, a CHECK), `serial` for a whole number
    the database counts up (a sequence's default, an identity); None when no manifest type
    reads its type."""
    if listed and facts.base in FITS["enum"].accepts:
        return "enum"
    counts_up = facts.identity or (facts.default or "").startswith("nextval(")
    if counts_up and facts.base in WHOLE:
        return "serial"
    for name, fit in FITS.items():
        if name not in _CHOSEN_APART and facts.base in fit.accepts:
            return name
    return None


def listed_values(facts: ColumnFacts, checks: Sequence[Check]) -> list[str] | None:
    """The values a column may hold as the database lists them: an enum type's labels, or a
    CHECK of that column alone of the form `col IN (…)` (or `col = '…'`)."""
    if facts.base == ENUM:
        return list(facts.labels)
    for check in checks:
        if check.columns != (facts.name,):
            continue
        found = _IN_LIST.search(check.expression)
        if found is not None:
            return [v.replace("''", "'") for v in _QUOTED.findall(found["items"])]
        one = _EQUALS_ONE.match(check.expression)
        if one is not None and "ANY" not in check.expression and " OR " not in check.expression:
            return [v.replace("''", "'") for v in _QUOTED.findall(one["item"])][:1]
    return None


def literal_default(expression: str | None, manifest_type: str) -> Any:
    """A column default the manifest can carry (a literal of the column's type), or None
    for none or an expression the database works out (`now()`, `gen_random_uuid()`)."""
    if expression is None:
        return None
    text = expression.strip()
    if manifest_type == "boolean":
        return {"true": True, "false": False}.get(text.lower())
    quoted = _LITERAL_TEXT.match(text)
    if quoted is not None:
        text = quoted[1].replace("''", "'")
        if manifest_type in ("text", "enum", "date", "uuid"):
            return text
    elif manifest_type in ("text", "enum"):
        return None
    number = _NUMBER.match(text)
    if manifest_type in ("integer", "numeric") and number is not None:
        try:
            value = Decimal(number[1])
        except InvalidOperation:  # pragma: no cover - the pattern holds digits only
            return None
        return int(value) if value == value.to_integral_value() else float(value)
    return None


def _numeric_size(column: dict[str, Any]) -> tuple[int | None, int | None]:
    """A numeric column's precision and scale as the inspector reflects them."""
    kind = column["type"]
    precision = getattr(kind, "precision", None)
    scale = getattr(kind, "scale", None)
    return precision, (scale if precision is not None else None)


def _state_column(columns: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The enum column named most like a state column: `status`, then `state`, then one
    that ends so."""
    named = [c for c in columns if c["type"] == "enum" and STATE_NAMES.search(c["ref"])]
    for wanted in ("status", "state"):
        for column in named:
            if column["ref"].lower() == wanted:
                return column
    return named[0] if named else None


def draft_tables(
    conn: Connection, schema: str, tables: Collection[str] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """Each table of `schema` (those named, else all) drafted: manifest tables and the notes."""
    inspector = sa.inspect(conn)
    there = inspector.get_table_names(schema=schema)
    wanted = [t for t in there if tables is None or t in tables]
    notes = [f"{t}: schema {schema} has no table {t}" for t in (tables or ()) if t not in there]
    catalogue = read_catalogue(conn, schema, wanted)
    drafted: dict[str, Any] = {}
    keys: dict[str, str] = {}
    for name in wanted:
        facts = catalogue.tables[name]
        key = _key(inspector, schema, name, facts, notes)
        table, state = _columns(inspector, schema, name, facts, key, notes)
        spec: dict[str, Any] = {}
        if key is not None:
            spec["key"] = key
            if isinstance(key, str):
                keys[name] = key
        spec["columns"] = table
        if state is not None:
            spec["states"] = state
        drafted[name] = spec
    for name in wanted:
        _references(inspector, schema, name, drafted, keys, notes)
    return drafted, notes


def _key(
    inspector: Any, schema: str, name: str, facts: TableFacts, notes: list[str]
) -> str | list[str] | None:
    """The table's primary key (a composite one as its list, which the check refuses with
    its sentence); without one, a single-column unique key the database keeps."""
    primary = inspector.get_pk_constraint(name, schema=schema)["constrained_columns"]
    if len(primary) == 1:
        return str(primary[0])
    if primary:
        return [str(c) for c in primary]
    for unique in sorted(facts.unique):
        if len(unique) == 1 and facts.columns[unique[0]].not_null:
            notes.append(f"{name}: no primary key; the draft keys it by {unique[0]}, unique")
            return unique[0]
    notes.append(
        f"{name}: no primary key and no single unique column NOT NULL; the manifest needs "
        f"one as its key (ALTER TABLE {schema}.{name} ADD PRIMARY KEY (…);)"
    )
    return None


def _columns(
    inspector: Any, schema: str, name: str, facts: TableFacts, key: Any, notes: list[str]
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """A table's columns as the manifest writes them, and its guessed states."""
    reflected = {c["name"]: c for c in inspector.get_columns(name, schema=schema)}
    columns: list[dict[str, Any]] = []
    initial: dict[str, Any] = {}
    for column in facts.columns.values():
        values = listed_values(column, facts.checks)
        kind = drafted_type(column, listed=values is not None)
        where = f"{name}.{column.name}"
        if kind is None:
            notes.append(
                f"{where}: no manifest type reads {column.shown}; left out (Adminium leaves "
                "it as it is)"
            )
            continue
        is_key = column.name == key
        default = literal_default(column.default, kind)
        fills = column.default is not None or column.identity
        if fills and default is None and not is_key and kind != "serial":
            notes.append(
                f"{where}: left out; the database fills it ({column.default or 'generated'})"
                " and a manifest column is sent on every create unless it has a literal"
                " default"
            )
            continue
        spec: dict[str, Any] = {"ref": column.name, "type": kind}
        if not column.not_null and not is_key:
            spec["nullable"] = True
        if kind == "text" and column.length is not None:
            spec["maxLength"] = column.length
        if kind == "numeric" and column.base == "numeric":
            precision, scale = _numeric_size(reflected[column.name])
            if precision is not None:
                spec["precision"] = precision
                spec["scale"] = scale or 0
        if kind == "timestamp":
            spec["zone"] = "venue"
        if values is not None:
            spec["values"] = values
        if default is not None and not is_key:
            spec["default"] = default
            initial[column.name] = default
        columns.append(spec)
    state = _state_column(columns)
    if state is None:
        _unlisted_state(name, columns, notes)
        return columns, None
    values = state["values"]
    first = state.pop("default", None)
    start = first if first in values else values[0]
    return columns, {"column": state["ref"], "initial": start, "moves": {}}


def _unlisted_state(name: str, columns: list[dict[str, Any]], notes: list[str]) -> None:
    """A text column named like a state column whose values the database does not list."""
    for column in columns:
        if column["type"] == "text" and STATE_NAMES.search(column["ref"]):
            notes.append(
                f"{name}.{column['ref']}: named like a state column, but no CHECK or enum "
                "type lists its values; write its states yourself (states.column, initial, "
                "moves)"
            )
            return


def _references(
    inspector: Any,
    schema: str,
    name: str,
    drafted: dict[str, Any],
    keys: dict[str, str],
    notes: list[str],
) -> None:
    """Each single-column foreign key to a drafted table's key, as the column's
    `references` (the link a `via` reads)."""
    by_ref = {c["ref"]: c for c in drafted[name]["columns"]}
    for foreign in inspector.get_foreign_keys(name, schema=schema):
        mine, theirs = foreign["constrained_columns"], foreign["referred_columns"]
        target = foreign["referred_table"]
        where = f"{name}.{', '.join(mine)}"
        in_schema = foreign.get("referred_schema") in (None, schema)
        if len(mine) != 1 or not in_schema or target not in drafted:
            notes.append(
                f"{where}: its foreign key to {foreign.get('referred_schema') or schema}."
                f"{target} is no link the manifest reads (one column, to a table drafted)"
            )
            continue
        if keys.get(target) != theirs[0] or mine[0] not in by_ref:
            notes.append(f"{where}: its foreign key reads {target}.{theirs[0]}, not its key")
            continue
        by_ref[mine[0]]["references"] = target


def draft_manifest(
    conn: Connection,
    schema: str,
    *,
    tables: Collection[str] | None = None,
    name: str | None = None,
) -> Draft:
    """A manifest of `schema`'s tables (those named, else every one) as the catalogue keeps
    them, named `name` (else the schema's name)."""
    drafted, notes = draft_tables(conn, schema, tables)
    manifest: dict[str, Any] = {"name": name or schema}
    if schema != "public":
        manifest["schema"] = schema
    manifest["tables"] = drafted
    return Draft(manifest, tuple(notes))
