"""`adminium check FILE`: ok and exit 0, or the console's `Error:` line, then one refusal a
line, and exit 1."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from adminium.cli import main
from tests.core.manifest_cases import EXAMPLES, example


def test_check_prints_ok_for_an_example() -> None:
    result = CliRunner().invoke(main, ["check", str(EXAMPLES / "tickets.json")])
    assert (result.exit_code, result.output) == (0, "ok\n")


def test_check_prints_every_refusal_and_exits_1(tmp_path: Path) -> None:
    doc = example("takeaway")
    states = doc["tables"]["orders"]["states"]
    states["timed"].append({"from": "ready", "to": "preparing", "at": {"column": "pickup_at"}})
    states["initial"] = "new"
    path = tmp_path / "takeaway.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        f"Error: the manifest check refused {path} (MANIFEST_REFUSED)",
        '  tables.orders.states.initial: "orders" has no state "new": its states are placed,'
        " confirmed, preparing, ready, picked_up, cancelled",
        '  tables.orders.states.timed[2].to: the move from "ready" to "preparing" is an undo,'
        " which only a person makes",
    ]


def test_check_refuses_malformed_json_with_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"name": "x",\n "tables": {}}}', encoding="utf-8")
    result = CliRunner().invoke(main, ["check", str(path)])
    # The third "}" on line 2 is its 15th character: extra data after the document.
    assert (result.exit_code, result.output) == (
        1,
        f"Error: the manifest check refused {path} (MANIFEST_REFUSED)\n"
        "  line 2, column 15: this is not JSON: extra data\n",
    )


def test_check_refuses_a_file_that_is_not_utf8_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    # "café" saved as Latin-1: é is the byte 0xe9, the 16th character of line 2.
    path.write_bytes(b'{\n  "title": "caf\xe9",\n  "name": "x"}')
    result = CliRunner().invoke(main, ["check", str(path)])
    assert (result.exit_code, result.output) == (
        1,
        f"Error: the manifest check refused {path} (MANIFEST_REFUSED)\n"
        f"  {path}: this is not UTF-8 text: the byte 0xe9 at line 2, column 16 is no UTF-8;"
        " save the file as UTF-8\n",
    )


def test_check_prints_a_refusal_that_echoes_a_lone_surrogate(tmp_path: Path) -> None:
    # "\ud800" is valid JSON but no character: the refusal shows it as it was written.
    path = tmp_path / "surrogate.json"
    path.write_text('{"name": "\\ud800", "tables": {"\\udc00x": {}}}', encoding="utf-8")
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code == 1
    half = "holds half of a character (a lone surrogate), which is no text: remove it"
    assert result.output.splitlines() == [
        f"Error: the manifest check refused {path} (MANIFEST_REFUSED)",
        f'  name: "\\ud800" {half}',
        f'  tables."\\udc00x": the name "\\udc00x" {half}',
    ]
