"""One disagreement between an app's manifest and its tables: where (`table.column`), what
the manifest says, what the database has, and the fix (the SQL, or the words when no SQL
is the fix), as one sentence."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from core.agreement.plan import Step, plan_sql


class Kind(StrEnum):
    """What disagrees."""

    table_missing = "table-missing"
    column_missing = "column-missing"
    column_renamed = "column-renamed"
    type_differs = "type-differs"
    too_short = "too-short"
    value_refused = "value-refused"
    value_renamed = "value-renamed"
    unknown_not_null = "unknown-not-null"
    not_null = "not-null"
    may_be_empty = "may-be-empty"
    key_not_unique = "key-not-unique"
    no_key_default = "no-key-default"
    rows_hidden = "rows-hidden"
    index_missing = "index-missing"
    unlisted_value = "unlisted-value"


BLOCKING = frozenset(
    {
        Kind.table_missing,
        Kind.column_missing,
        Kind.column_renamed,
        Kind.type_differs,
        Kind.value_refused,
        Kind.value_renamed,
        Kind.unknown_not_null,
        Kind.not_null,
        Kind.key_not_unique,
        Kind.no_key_default,
    }
)
"""The kinds the tables cannot serve the manifest with: a write or a read would fail on them.
The others (a length shorter than `maxLength`, a column the manifest says is never empty
that may be, rows hidden by row-level security, an index missing, a value rows hold that
the manifest does not list) are said, and serve."""


@dataclass(frozen=True)
class Disagreement:
    """One thing the manifest says that the tables do not."""

    kind: Kind
    table: str
    column: str | None
    manifest: str
    """What the manifest says, as the sentence words it (`says integer`)."""
    database: str
    """What the database has (`has no such column`)."""
    steps: tuple[Step, ...] = ()
    advice: str | None = None
    """The fix in words, when it is no SQL (or besides it)."""

    @property
    def where(self) -> str:
        """`table.column`, or the table alone."""
        return f"{self.table}.{self.column}" if self.column else self.table

    @property
    def blocks(self) -> bool:
        """Whether the tables cannot serve the manifest while it stands."""
        return self.kind in BLOCKING

    @property
    def fix(self) -> str:
        """The SQL that makes the two agree (and the words, when there are some)."""
        parts = [*plan_sql(self.steps), *([self.advice] if self.advice else [])]
        return " ".join(parts)

    @property
    def sentence(self) -> str:
        """`orders.table_no: the manifest says integer, the database has no such column;
        fix: ALTER TABLE …`."""
        says = f"the manifest {self.manifest}, the database {self.database}"
        return f"{self.where}: {says}; fix: {self.fix}"

    def json(self) -> dict[str, object]:
        """As the control plane keeps it and an API would answer it."""
        return {
            "kind": self.kind.value,
            "table": self.table,
            "column": self.column,
            "blocks": self.blocks,
            "sentence": self.sentence,
            "sql": plan_sql(self.steps),
        }
