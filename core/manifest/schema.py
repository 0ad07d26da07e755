"""The manifest's JSON Schema, generated from the model: `python -m core.manifest.schema`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from core.manifest.model import App

SCHEMA_ID = "https://adminium.example/manifest.schema.json"
SCHEMA_PATH = Path(__file__).resolve().parents[2] / "docs" / "manifest.schema.json"


def manifest_schema() -> dict[str, Any]:
    """The JSON Schema editors use to complete and underline manifests."""
    schema = App.model_json_schema(by_alias=True, mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **schema,
    }


def schema_text() -> str:
    """The schema as written to `docs/manifest.schema.json`."""
    return json.dumps(manifest_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    """Write the schema file (or the path given)."""
    target = Path(argv[0]) if argv else SCHEMA_PATH
    target.write_text(schema_text(), encoding="utf-8")
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
