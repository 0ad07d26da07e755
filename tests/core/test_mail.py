"""Email templates: the manifest check refuses one that does not parse or reads an unknown
name; rendering is sandboxed and never fails a write."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from core.manifest.check import check_manifest
from core.manifest.outbox_model import Message, Reminder
from core.outbox.mail import RowValues, render_words

TAKEAWAY = json.loads((Path(__file__).parents[2] / "examples" / "takeaway.json").read_text())
MESSAGE = ("outbox", "producers", 1)


def with_words(index: int, **words: str) -> dict[str, Any]:
    manifest = copy.deepcopy(TAKEAWAY)
    manifest["outbox"]["producers"][index].update(words)
    return manifest


CASES = {
    "unclosed_tag": (
        1,
        {"subject": "{{ row.id"},
        "outbox.producers[1].subject",
        "the subject is no template: unexpected end of template",
    ),
    "unknown_name": (
        1,
        {"body": "{{ order.id }}"},
        "outbox.producers[1].body",
        "the body reads 'order': a template reads app, moment, row, table",
    ),
    "a_message_has_no_link_name": (
        1,
        {"body": "{{ order_id }}"},
        "outbox.producers[1].body",
        "the body reads 'order_id'",
    ),
}


@pytest.mark.parametrize(("index", "words", "where", "sentence"), CASES.values(), ids=CASES.keys())
def test_the_check_refuses_a_bad_template(
    index: int, words: dict[str, str], where: str, sentence: str
) -> None:
    [refusal] = check_manifest(with_words(index, **words))
    assert refusal.where == where
    assert refusal.sentence.startswith(sentence)


def test_a_reminder_reads_its_link_name_and_the_moment() -> None:
    assert (
        check_manifest(with_words(0, body="{{ order_id }} at {{ moment }} for {{ row.email }}"))
        == []
    )


def test_the_sandbox_keeps_python_internals_out_and_the_words_as_written() -> None:
    message = Message.model_validate(TAKEAWAY["outbox"]["producers"][1]).model_copy(
        update={"body": "{{ row.__class__.__mro__ }}"}
    )
    words = render_words(message, {"row": RowValues({"id": 1})})
    assert "RowValues" not in words.body and "object" not in words.body


def test_a_template_that_fails_while_rendering_keeps_its_words() -> None:
    message = Message.model_validate(TAKEAWAY["outbox"]["producers"][1]).model_copy(
        update={"subject": "Order {{ row.id // 0 }}\nsecond line"}
    )
    words = render_words(message, {"row": RowValues({"id": 1})})
    assert words.subject == "Order {{ row.id // 0 }} second line"  # one header line


def test_a_reminder_without_words_has_a_subject_for_a_body() -> None:
    reminder = Reminder.model_validate(
        {**TAKEAWAY["outbox"]["producers"][0], "subject": None, "body": None}
    )
    words = render_words(reminder, {})
    assert (words.subject, words.body) == ("A reminder", "A reminder")
