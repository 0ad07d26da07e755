"""The one table of codes and statuses agrees with the error classes and with docs/errors.md."""

from __future__ import annotations

import re

import pytest

from core.basics import errors as core_errors
from core.basics.errors import AdminiumError, PublicError
from core.samples import files as core_samples
from services import errors as services_errors
from tests.conftest import ROOT
from web import errors as web_errors
from web.errors import STATUSES


def error_classes() -> list[type[AdminiumError]]:
    """Every error class with a code of its own: core's, the samples', services', the web's."""
    found = []
    for module in (core_errors, core_samples, services_errors, web_errors):
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, AdminiumError)
                and value not in (AdminiumError, PublicError)
            ):
                found.append(value)
    return found


@pytest.mark.parametrize("cls", error_classes(), ids=lambda c: c.__name__)
def test_every_error_class_is_in_the_table_with_its_status(cls: type[AdminiumError]) -> None:
    assert STATUSES[cls.code] == cls.status


def documented() -> dict[str, int]:
    """Each code docs/errors.md lists in a table row, with the status written beside it."""
    text = (ROOT / "docs" / "errors.md").read_text()
    return {m[1]: int(m[2]) for m in re.finditer(r"^\| `([A-Z_]+)` \| (\d{3}) \|", text, re.M)}


def test_docs_list_every_code_with_its_status() -> None:
    assert documented() == STATUSES
