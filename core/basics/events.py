"""What a committed write tells the live screens: one event per changed row."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class RowEvent:
    """A row changed: where it lives, its key, its state after the write, and who wrote it."""

    connection: str
    app: str
    table: str
    key: Any
    state: str | None
    actor: str

    def as_dict(self) -> dict[str, Any]:
        """The event as the JSON published on Redis."""
        return asdict(self)
