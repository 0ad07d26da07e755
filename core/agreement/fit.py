"""Which PostgreSQL types a manifest type may read and write: one line per manifest type.

The names are PostgreSQL's own, as `format_type(type, NULL)` gives them for a column's base
type (a domain's base type, not the domain); `ENUM` stands for any enum type
(`CREATE TYPE … AS ENUM`), whose labels are judged apart. A length (`maxLength`, the values
of an enum) is judged apart too (`core.agreement.compare`), and so is a numeric's scale
(`core.store.readable`, which `app add` asks first).
"""

from __future__ import annotations

from dataclasses import dataclass

ENUM = "ENUM"
"""Any enum type of the database (pg_type.typtype 'e')."""

WHOLE = frozenset({"integer", "bigint", "smallint"})
TEXTS = frozenset({"text", "character varying", "character", "citext"})


@dataclass(frozen=True)
class Fit:
    """A manifest type: the PostgreSQL types that serve it, and the words for it."""

    accepts: frozenset[str]
    words: str


FITS: dict[str, Fit] = {
    "serial": Fit(WHOLE, "a whole number (serial)"),
    "integer": Fit(WHOLE, "integer"),
    "numeric": Fit(frozenset({"numeric", "double precision", "real"}), "numeric"),
    "text": Fit(TEXTS, "text"),
    "boolean": Fit(frozenset({"boolean"}), "boolean"),
    "date": Fit(frozenset({"date"}), "date"),
    "timestamptz": Fit(frozenset({"timestamp with time zone"}), "timestamptz"),
    "timestamp": Fit(frozenset({"timestamp without time zone"}), "timestamp (wall time)"),
    "uuid": Fit(frozenset({"uuid"}), "uuid"),
    "enum": Fit(TEXTS | {ENUM}, "enum"),
}
"""Each manifest type and what serves it (a new manifest type is one line here)."""

LENGTHED = frozenset({"character varying", "character"})
"""The types that keep at most a number of characters (varchar(n), char(n))."""


def fits(manifest_type: str, base: str) -> bool:
    """Whether a column of PostgreSQL base type `base` serves the manifest type."""
    fit = FITS.get(manifest_type)
    return fit is not None and base in fit.accepts


def type_words(manifest_type: str) -> str:
    """The manifest type as a sentence names it."""
    fit = FITS.get(manifest_type)
    return fit.words if fit is not None else manifest_type
