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


# What a template may build: its words, what it makes on the way, its time.
COSTLY = {
    "a_gigabyte_string": ('{{ "x" * 1000000000 }}', "a repetition would build 1000000000"),
    "a_huge_power": ("{{ 10 ** 100000000 }}", "a power would build"),
    "a_printf_width": ('{{ "%1000000000d" % 1 }}', "a % format would build"),
    "a_format_width_from_arguments": (
        '{{ "{0:{1}}".format(1, 1000000000) }}',
        "str.format would build",
    ),
    "a_filter_s_width": ("{{ row.id|center(1000000000) }}", "center's width would build"),
    "a_replace_that_multiplies": (
        '{{ ("a" * 50000)|replace("a", "b" * 50000) }}',
        "the replace filter would build",
    ),
    "a_string_doubled_in_a_loop": (
        '{% set ns = namespace(s="x") %}{% for i in range(60) %}'
        "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}",
        "the template builds more than 1000000 characters",
    ),
    "loops_that_never_end": (
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "the template takes longer than 0.5 s",
    ),
    "words_past_100000_characters": (
        '{% for i in range(100000) %}{{ "0123456789" }}{% endfor %}',
        "the template renders more than 100000 characters",
    ),
    "a_macro_calling_itself": (
        "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}",
        "the template calls itself too deep",
    ),
    "a_list_changed_in_place": ("{% set l = [] %}{{ l.append(1) }}", "is unsafe"),
}


@pytest.mark.parametrize(("body", "reason"), COSTLY.values(), ids=COSTLY.keys())
def test_a_template_is_stopped_past_its_bounds_and_keeps_its_words(
    body: str, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    message = Message.model_validate(TAKEAWAY["outbox"]["producers"][1]).model_copy(
        update={"body": body}
    )
    words = render_words(message, {"row": RowValues({"id": 1})})
    assert words.body == body
    assert reason in caplog.text


def test_a_plain_template_renders_within_its_bounds() -> None:
    message = Message.model_validate(TAKEAWAY["outbox"]["producers"][1]).model_copy(
        update={
            "body": '{{ "{:,}".format(row.total) }} for {{ row.items|upper|center(20) }}:'
            "{% for line in row.lines %} {{ loop.index }}. {{ line|replace('x', ' x ') }}"
            "{% endfor %} {{ '%.2f'|format(row.paid) }}"
        }
    )
    context = {
        "row": RowValues(
            {"total": 1234567, "items": "soup", "lines": ["1x soup", "2x tea"], "paid": 12.5}
        )
    }
    words = render_words(message, context)
    assert words.body == "1,234,567 for         SOUP        : 1. 1 x  soup 2. 2 x  tea 12.50"
