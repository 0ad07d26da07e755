"""Error codes of the spec. One base class; each subclass carries its code and status."""

from __future__ import annotations

from typing import Any, ClassVar


class AdminiumError(Exception):
    """A refusal with a code from the spec's tables. The write it stops rolls back whole."""

    code: ClassVar[str] = "ERROR"
    status: ClassVar[int] = 400

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = details or {}

    def as_dict(self) -> dict[str, Any]:
        """The error as the APIs answer it."""
        return {"code": self.code, "message": self.message, "details": self.details}
