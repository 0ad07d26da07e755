"""The check answers ok or refusals for any JSON, never a traceback."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.manifest.check import Refusal, check_manifest, check_manifest_text
from tests.core.manifest_cases import EXAMPLE_NAMES, example

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

NAMES = st.sampled_from(
    ["placed", "cancelled", "valid", "booked", "status", "id", "settings", "orders", "x", "Bad"]
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 100) | st.floats(allow_nan=False) | NAMES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(NAMES, inner, max_size=4),
    max_leaves=12,
)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside the document."""
    found = [prefix]
    if isinstance(doc, dict):
        for key, value in doc.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            found += _paths(value, (*prefix, index))
    return found


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path[:-1]:
        doc = doc[part]
    return doc


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    """An example with keys deleted, values replaced by random JSON or swapped, states renamed."""
    doc = example(draw(st.sampled_from(EXAMPLE_NAMES)))
    for _ in range(draw(st.integers(1, 4))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        action = draw(st.sampled_from(["delete", "replace", "rename", "swap"]))
        parent = _parent(doc, path)
        words = sorted({v for p in paths if isinstance(v := _parent(doc, p)[p[-1]], str)})
        if action == "swap" and words:
            # Keeps the shape, breaks a reference: the rules, not the model, must answer.
            parent[path[-1]] = draw(st.sampled_from(words))
        elif action == "delete":
            del parent[path[-1]]
        elif action == "replace":
            parent[path[-1]] = draw(JSON)
        else:
            doc = _rename(doc, draw(NAMES), draw(NAMES))
    return doc


def _rename(doc: Any, old: str, new: str) -> Any:
    """Rename a state (or any name) everywhere it appears, as key or value."""
    text = json.dumps(doc).replace(json.dumps(old), json.dumps(new))
    return json.loads(text)


def _answers(refusals: Any) -> None:
    assert isinstance(refusals, list)
    assert all(isinstance(r, Refusal) and r.where and r.sentence for r in refusals)


@SETTINGS
@given(mutated())
def test_mutated_example_gets_ok_or_refusals(doc: Any) -> None:
    before = copy.deepcopy(doc)
    _answers(check_manifest(doc))
    assert doc == before  # the check reads the manifest; it never changes it


@SETTINGS
@given(JSON)
def test_any_json_gets_ok_or_refusals(doc: Any) -> None:
    _answers(check_manifest(doc))


@SETTINGS
@given(st.text(max_size=60))
def test_any_text_gets_ok_or_refusals(text: str) -> None:
    _answers(check_manifest_text(text))
