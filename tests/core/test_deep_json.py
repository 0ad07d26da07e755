"""JSON nested deeper than Python reads is a clear refusal naming the file, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from adminium.cli import main
from core.samples.files import SampleRefused, load_sample

DEEP = "[" * 100_000 + "]" * 100_000


def test_a_sample_file_nested_too_deep_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "deep.sample.json"
    file.write_text(DEEP)
    with pytest.raises(SampleRefused) as refused:
        load_sample(file)
    assert "nests too deep" in refused.value.message and str(file) in refused.value.message


def test_a_console_json_file_nested_too_deep_is_one_line_and_exit_1(tmp_path: Path) -> None:
    file = tmp_path / "deep.json"
    file.write_text(DEEP)
    # The file is read before any database is asked for: a connection name is enough.
    answer = CliRunner().invoke(main, ["app", "add", "venue", str(file)])
    assert answer.exit_code == 1
    assert f"{file} nests its JSON too deep to read" in answer.output
    assert "Traceback" not in answer.output
