"""The control plane's refusals: a change refused, nothing written (codes in docs/errors.md)."""

from __future__ import annotations

from sqlalchemy.exc import SQLAlchemyError

from core.basics.errors import AdminiumError


class ControlPlaneError(AdminiumError):
    """A control-plane change refused; nothing was written."""

    code = "CONTROL_PLANE_REFUSED"
    status = 400


class NotFound(ControlPlaneError):
    """No connection, app or user of that name."""

    code = "NOT_FOUND"
    status = 404


class OtherAppsTables(ControlPlaneError):
    """A change that would read or touch tables another app of the connection keeps (or
    another schema than the app's own): refused before anything is read."""

    code = "FORBIDDEN"
    status = 403


class AlreadyExists(ControlPlaneError):
    """A connection, app or user of that name is already there."""

    code = "ALREADY_EXISTS"
    status = 409


class InvalidValue(ControlPlaneError):
    """A name, URL, zone, email or role that cannot be used."""

    code = "INVALID_VALUE"
    status = 400


class ManifestRefused(ControlPlaneError):
    """The manifest check refused the app; `details.refusals` holds its sentences."""

    code = "MANIFEST_REFUSED"
    status = 400


class TablesDisagree(ControlPlaneError):
    """The connection's tables cannot serve the manifest (or a migration to make them is
    refused): `details.sentences` holds each disagreement, `details.refusals` what a
    migration refuses, `details.plan` the SQL that makes them agree. Nothing was saved."""

    code = "TABLES_DISAGREE"
    status = 409


class DatabaseRefused(ControlPlaneError):
    """A connection's database did not answer, or refused what was asked of it."""

    code = "DATABASE_REFUSED"
    status = 502


def first_line(error: SQLAlchemyError) -> str:
    """What the database said, without the SQL or the parameters SQLAlchemy adds."""
    cause = getattr(error, "orig", None) or error
    return str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
