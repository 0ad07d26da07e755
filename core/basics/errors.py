"""Error codes of the spec. One base class; each subclass carries its code and status."""

from __future__ import annotations

from typing import Any, ClassVar

ECHO_LIMIT = 100
"""How many characters of a writer's own text a refusal repeats: enough to know it by."""


def echo(text: object) -> str:
    """A writer's text as a refusal repeats it: cut to ECHO_LIMIT characters."""
    shown = str(text)
    return shown if len(shown) <= ECHO_LIMIT else shown[:ECHO_LIMIT] + "…"


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


class PublicError(AdminiumError):
    """A refusal the public API answers with `params` rather than `details`."""

    def __init__(self, message: str, params: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.params: dict[str, Any] = params or {}

    def as_dict(self) -> dict[str, Any]:
        """The error as the public API answers it."""
        return {"code": self.code, "message": self.message, "params": self.params}


class WriteConflict(AdminiumError):
    """Another writer holds the row, or a late move's window opened while the write was made."""

    code = "WRITE_CONFLICT"
    status = 409


class StateMoveRefused(AdminiumError):
    """A move made outside the time it waits for, or while a setting condition fails."""

    code = "STATE_MOVE_REFUSED"
    status = 409


class StateTooLate(AdminiumError):
    """A late move in mode refuse with refuse: everyone."""

    code = "STATE_TOO_LATE"
    status = 409


class PublicTooEarly(PublicError):
    """A guest's move that opens later."""

    code = "PUBLIC_TOO_EARLY"
    status = 409


class PublicTooLate(PublicError):
    """A guest's move that closed, or a late move in mode refuse."""

    code = "PUBLIC_TOO_LATE"
    status = 409


class StateMoveNotListed(AdminiumError):
    """The table lists no move from the row's state to the one asked for."""

    code = "STATE_MOVE_NOT_LISTED"
    status = 409


class StateChanged(AdminiumError):
    """The writer named the state they saw, and the row is no longer in it."""

    code = "STATE_CHANGED"
    status = 409


class UndoRefused(AdminiumError):
    """An undo made by anyone but a person naming the state they saw."""

    code = "STATE_UNDO_REFUSED"
    status = 409


class StateMoveForbidden(AdminiumError):
    """A move kept for roles the writer does not hold."""

    code = "STATE_MOVE_FORBIDDEN"
    status = 403


class RowLocked(AdminiumError):
    """The table's lock keeps a column the writer sent shut."""

    code = "ROW_LOCKED"
    status = 409


class ColumnReadOnly(AdminiumError):
    """A column only Adminium writes (the key, the state, a stamp, a code), or no such column."""

    code = "COLUMN_READ_ONLY"
    status = 422


class ColumnNotWritable(AdminiumError):
    """The connection's database role may not write a column (a PostgreSQL privilege)."""

    code = "COLUMN_NOT_WRITABLE"
    status = 403


class ValueRefused(AdminiumError):
    """The database refused a value: not null, check, foreign key, unique, or its type."""

    code = "VALUE_REFUSED"
    status = 422


class RowNotFound(AdminiumError):
    """No row of the table has this key, or the table is not the app's."""

    code = "NOT_FOUND"
    status = 404


class RowNotDue(AdminiumError):
    """A timed move's row left `from`, or its moment, read again as held, has not passed."""

    code = "ROW_NOT_DUE"
    status = 409


class LimitReached(AdminiumError):
    """The write would make more rows count in a limit's group than its `max`."""

    code = "LIMIT_REACHED"
    status = 409


class LimitBusy(AdminiumError):
    """Other writers of the limit's group held it for longer than a write waits: try again."""

    code = "LIMIT_BUSY"
    status = 409


class LedgerBusy(AdminiumError):
    """Another writer holds the ledger account a posting changes: try again."""

    code = "LEDGER_BUSY"
    status = 409


class LedgerCap(AdminiumError):
    """A posting or a give-back would take an account's balance outside its ledger's bounds."""

    code = "LEDGER_CAP"
    status = 409
