"""Who makes a write: a person, the clock, an import, a guest, or sample data."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class ActorKind(StrEnum):
    """The kinds of writer the pipeline tells apart."""

    person = "person"
    clock = "clock"
    import_ = "import"
    public = "public"
    sample = "sample"


@dataclass(frozen=True)
class Actor:
    """A writer: its kind, the name the audit shows, and the app roles it holds."""

    kind: ActorKind
    name: str
    roles: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def person(cls, email: str, roles: frozenset[str] | set[str] = frozenset()) -> Actor:
        """A member of staff, shown by their address."""
        return cls(ActorKind.person, email, frozenset(roles))

    @classmethod
    def clock(cls) -> Actor:
        """The timed moves (DESIGN decision 7)."""
        return cls(ActorKind.clock, "Timed move")

    @classmethod
    def importer(cls) -> Actor:
        """Rows brought in by `adminium import`."""
        return cls(ActorKind.import_, "Import")

    @classmethod
    def public(cls) -> Actor:
        """A guest reaching a row by its link code."""
        return cls(ActorKind.public, "Public")

    @classmethod
    def sample(cls) -> Actor:
        """Sample data."""
        return cls(ActorKind.sample, "Sample data")

    @property
    def judged_late(self) -> bool:
        """Whether late rules judge this writer: an import and sample data never are."""
        return self.kind not in (ActorKind.import_, ActorKind.sample)
