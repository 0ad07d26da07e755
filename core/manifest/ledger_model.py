"""A manifest's ledgers and a table's postings (WHAT-A-MOVE-SETS-OFF.md "Holds, ledgers
and give-backs"): a ledger's table of accounts and its bounds, and what a row's posting
takes from an account and when.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from core.manifest.base import Model, Name, Number, tag_of
from core.manifest.refs import SettingRef, ValueWatch, amount_tag


def _posting_on_tag(value: Any) -> str | None:
    if isinstance(value, str):
        return "~create"
    return tag_of({ValueWatch: "~watch"}, value, lambda _: "~watch")


PostingOn = Annotated[
    Annotated[Literal["create"], Tag("~create")] | Annotated[ValueWatch, Tag("~watch")],
    Discriminator(
        _posting_on_tag,
        custom_error_type="posting_on",
        custom_error_message='a posting is made on "create" or on {"column", "values"}',
    ),
]


class Posting(Model):
    """The row's `amount` taken from the ledger account its `via` points at, on create or
    on a move into given values; a hold given back by a move into `givesBack`."""

    ledger: Name
    via: Name
    amount: Name
    on: PostingOn
    gives_back: list[Name] | None = Field(default=None, alias="givesBack")


Bound = Annotated[
    Annotated[Number, Tag("~number")] | Annotated[SettingRef, Tag("~setting")],
    Discriminator(
        amount_tag,
        custom_error_type="bound",
        custom_error_message="a ledger's bound is a number or a setting {table, column}",
    ),
]
"""A ledger's `min` or `max`: a number, or a number column of the settings row."""


class Ledger(Model):
    """A table of accounts and its balance column, kept between `min` and `max`."""

    name: Name
    table: Name
    balance: Name
    min: Bound | None = None
    max: Bound | None = None
