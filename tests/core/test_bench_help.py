"""Every bench script answers `--help` with its usage and starts nothing (`bench/ledgers.py`,
`live.py` and `preview.py` ignored it and started the bench). Each script found in bench/
is held to it: run as `__main__` in this process (its imports are the suite's own, so a
fresh interpreter each would only cost their start-up), it must print its usage and exit
0 before it connects to anything."""

from __future__ import annotations

import runpy
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

SCRIPTS = sorted(p for p in (ROOT / "bench").glob("*.py") if "__main__" in p.read_text())


def test_the_benches_are_found() -> None:
    assert {"ledgers.py", "live.py", "preview.py", "sweep.py"} <= {p.name for p in SCRIPTS}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_help_prints_the_usage_and_starts_nothing(
    script: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_connect(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"{script.name} --help opened a connection")

    monkeypatch.setattr(sys, "argv", [str(script), "--help"])
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(socket.socket, "connect", no_connect)
    with pytest.raises(SystemExit) as exited:
        runpy.run_path(str(script), run_name="__main__")
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: {script.name} [-h]")
