"""An email's words: a producer's subject and body rendered from the row, sandboxed.

A template reads `row` (the row as written: `{{ row.cancel_code }}`), `app`, `table`,
the producer's `link` name bound to the row's key, and for a reminder `moment` (its
instant on the venue's clock). The manifest check refuses a template that does not
parse or reads any other name (`core.manifest.templates`), so a saved manifest never fails a
write: what still goes wrong while rendering (a division by zero in the row's numbers, a
render past its budget of size and time, `core.manifest.template_bounds`) leaves the words
as written, logged.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jinja2 import Template, TemplateError

from core.manifest.outbox_model import Message, Reminder
from core.manifest.template_bounds import render_bounded
from core.manifest.templates import template_environment

log = logging.getLogger(__name__)

REMINDER_SUBJECT = "A reminder"
"""A reminder's subject when the manifest gives none."""


@dataclass(frozen=True)
class Words:
    """An email's rendered subject and body."""

    subject: str
    body: str


class RowValues:
    """A row as a template reads it: `row.items` is the column `items`, never a dict method."""

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, Any]) -> None:
        self._values = dict(values)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __contains__(self, name: object) -> bool:
        return name in self._values


@functools.lru_cache(maxsize=256)
def _template(text: str) -> Template:
    """A template compiled once (a manifest's words never change once loaded)."""
    return template_environment().from_string(text)


def producer_words(producer: Message | Reminder) -> tuple[str, str]:
    """The subject and body as written; a reminder without them has a default subject and
    its subject for a body."""
    subject = producer.subject or REMINDER_SUBJECT
    return subject, producer.body or subject


def render_words(producer: Message | Reminder, context: Mapping[str, Any]) -> Words:
    """The producer's subject and body rendered from `context`; a template that fails while
    rendering is kept as written (the check already refused those that cannot parse)."""
    rendered = []
    for text in producer_words(producer):
        try:
            rendered.append(render_bounded(_template(text), context))
        except (TemplateError, ArithmeticError, TypeError, ValueError, LookupError) as error:
            log.warning("email template not rendered, kept as written: %s", error)
            rendered.append(text)
    # A header holds one line: a subject's line breaks become spaces.
    return Words(" ".join(rendered[0].split()), rendered[1])
