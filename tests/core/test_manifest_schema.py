"""docs/manifest.schema.json is the model's schema, and the examples pass it."""

from __future__ import annotations

import json

import jsonschema
import pytest

from core.manifest.schema import SCHEMA_PATH, manifest_schema, schema_text
from tests.core.manifest_cases import EXAMPLE_NAMES, example


def test_schema_file_matches_the_model() -> None:
    # Regenerate with `python -m core.manifest.schema` after changing the model.
    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text()


def test_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(manifest_schema())


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_passes_the_published_schema(name: str) -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(example(name)))
    assert [e.message for e in errors] == []


def test_published_schema_underlines_a_typo() -> None:
    doc = example("takeaway")
    doc["tables"]["orders"]["states"]["timed"][0]["sett"] = {}
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert not jsonschema.Draft202012Validator(schema).is_valid(doc)
