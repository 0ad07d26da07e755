"""Which addresses the outbox takes: one `name@domain` (a display name allowed); never a line
break, a control character, a list, or characters SMTP's commands cannot carry."""

from __future__ import annotations

import pytest

from core.outbox.addresses import address_fault

LIST_OF_2 = "the address is a list of 2 addresses where one is expected"


@pytest.mark.parametrize(
    "address",
    ["ann@example.com", "Ann Lee <ann@example.com>", '"Lee, Ann" <ann@example.com>', "a@b"],
    ids=["plain", "display-name", "quoted-comma", "dotless-domain"],
)
def test_one_address_is_taken(address: str) -> None:
    assert address_fault(address) is None


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("poison@example.com\r\nBcc: x@evil.example", "the address holds a line break"),
        ("poison@example.com\rBcc: x@evil.example", "the address holds a line break"),
        ("poison@example.com\nBcc: x@evil.example", "the address holds a line break"),
        ("ann@example.com\x00", "the address holds a control character"),
        ("ann@example.com, bob@example.com", LIST_OF_2),
        ("ann@example.com;bob@example.com", LIST_OF_2),
        ("ann@example.com bob@example.com", LIST_OF_2),
        ("a@x.com, b@x.com, c@x.com", "the address is a list of 3 addresses where one is expected"),
        ("ann at example.com", "the address is not one name@domain"),
        ("@example.com", "the address is not one name@domain"),
        (
            "zoë@example.com",
            "the address holds 'ë', which is not ASCII: this outbox sends no such address",
        ),
    ],
    ids=[
        "crlf",
        "cr",
        "lf",
        "nul",
        "comma",
        "semicolon",
        "space",
        "three",
        "no-at",
        "no-name",
        "not-ascii",
    ],
)
def test_anything_else_is_refused_with_why(address: str, why: str) -> None:
    assert address_fault(address) == why
