"""The README's and docs' examples run as written, against a fresh site, in the order a
reader meets them (the convention and the runner: tests/integration/doc_examples.py).

The site is one real `adminium run` (embedded PostgreSQL, Redis and SMTP server, with its
demo) in a fresh working folder that holds `instance/` and links `examples/`, `docs/`, the
Procfile and `.venv` to the repository's: a newcomer's clone after `make run`, seen from a
second terminal. Its start-up and every page's examples share this one module.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.integration.doc_examples import (
    Block,
    Shell,
    blocks,
    commands,
    count_commands,
    environment,
    matches,
    page_order,
)
from tests.integration.launching import Launch, free_port

pytestmark = pytest.mark.integration

VENV_BIN = Path(sys.executable).parent
LINKED = ("examples", "docs", "Procfile", "README.md", ".venv")


@pytest.fixture(scope="module")
def site() -> Iterator[tuple[Launch, Shell]]:
    """`adminium run` in a fresh working folder on a free port, up; and a reader's shell
    there. Stopped with Ctrl-C after the module."""
    folder = Path(tempfile.mkdtemp(prefix="admd", dir="/tmp"))
    for name in LINKED:
        (folder / name).symlink_to(ROOT / name if name != ".venv" else VENV_BIN.parent)
    env = environment(folder, VENV_BIN)
    port = free_port()
    log = folder / "run.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(VENV_BIN / "adminium"), "run", "--port", str(port)],
            cwd=folder,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    running = Launch(folder / "instance", port, process, log)
    try:
        running.wait_until_up()
        yield running, Shell(folder, env, site=f"127.0.0.1:{port}")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
        shutil.rmtree(folder, ignore_errors=True)


def every_block() -> list[Block]:
    return [b for page in page_order(ROOT) for b in blocks(page.name, page.read_text())]


def test_the_docs_examples_run_as_written(site: tuple[Launch, Shell]) -> None:
    running, shell = site
    failures: list[str] = []
    ran = 0
    started = time.monotonic()
    pages: list[str] = []
    lines = 0
    for page in page_order(ROOT):
        name = str(page.relative_to(ROOT))
        began, count = time.monotonic(), 0
        for block in blocks(name, page.read_text()):
            problem = shell.check(block)
            ran, count = ran + block.runs, count + block.runs
            lines += count_commands(block)
            if problem is not None:
                # The page's later examples build on this one: go on with the next page.
                failures.append(problem)
                break
        pages.append(f"{name} {count} in {time.monotonic() - began:.0f} s")
    took = time.monotonic() - started
    print(f"{ran} doc examples ({lines} commands) ran in {took:.0f} s: " + ", ".join(pages))
    assert not failures, "\n\n".join(failures) + f"\n\n--- the site's log:\n{running.log_tail()}"


def test_the_pages_run_in_the_readers_order() -> None:
    names = [str(p.relative_to(ROOT)) for p in page_order(ROOT)]
    assert names[:3] == ["README.md", "docs/manifest.md", "docs/moments.md"]
    assert names.index("docs/api.md") + 1 == names.index("docs/errors.md")
    assert sorted(names) == sorted(
        ["README.md", *(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]
    )


def test_every_shell_block_runs_or_says_why_not() -> None:
    # A block in a shell's language that is not `sh` or `console` would silently not run.
    for block in every_block():
        assert block.language not in ("bash", "shell", "shell-session", "zsh"), (
            f"{block.where}: write ```sh or ```console (a {block.language} block never runs)"
        )
        if block.skipped is not None:
            assert len(block.skipped) > 10, f"{block.where}: say why it cannot run"


def test_the_runner_reads_marks_files_and_commands() -> None:
    page = (
        "Text.\n\n<!-- doc-test: skip: needs a real mail server -->\n```sh\nmail x\n```\n"
        "<!-- doc-test: file a.json -->\n```json\n{}\n```\n"
        "```console\n$ echo one \\\n  two\none two\n$ false\nError: …\n```\n"
        "<!-- doc-test: wait 30 -->\n\n```console\n$ date\n…\n```\n"
    )
    found = blocks("p.md", page)
    assert [(b.line, b.language, b.skipped, b.file, b.wait) for b in found] == [
        (4, "sh", "needs a real mail server", None, 0.0),
        (8, "json", None, "a.json", 0.0),
        (11, "console", None, None, 0.0),
        (20, "console", None, None, 30.0),
    ]
    assert [(c.text, c.shown, c.must_fail) for c in commands(found[2])] == [
        ("echo one \\\n  two", ["one two"], False),
        ("false", ["Error: …"], True),
    ]


@pytest.mark.parametrize(
    ("shown", "printed", "same"),
    [
        pytest.param(["ok"], "ok\n", True, id="exact"),
        pytest.param(["ok"], "ok\nmore\n", False, id="a_line_more"),
        pytest.param(["ok"], "not ok\n", False, id="another_line"),
        pytest.param(["order … was cancelled"], "order 8 was cancelled\n", True, id="in_line"),
        pytest.param(["order … was cancelled"], "order 8 went\n", False, id="in_line_wrong"),
        pytest.param(["first", "…", "last"], "first\na\nb\nlast\n", True, id="lines"),
        pytest.param(["first", "…", "last"], "first\nlast\n", True, id="no_lines"),
        pytest.param(["a b"], "a\t  b\n", True, id="spaces"),
        pytest.param(["ab"], "a b\n", False, id="a_space_is_not_nothing"),
    ],
)
def test_an_output_matches_only_what_the_doc_shows(
    shown: list[str], printed: str, same: bool
) -> None:
    assert matches(shown, printed) is same


def test_a_wrong_output_or_exit_fails_the_block(tmp_path: Path) -> None:
    shell = Shell(tmp_path, environment(tmp_path, VENV_BIN))
    wrong = Block("p.md", 3, "console", "$ echo 7\n8\n")
    problem = shell.check(wrong)
    assert problem is not None and problem.startswith("p.md:3: `echo 7` printed:")
    refused = Block("p.md", 9, "console", "$ echo fine\nError: …\n")
    assert "should fail" in (shell.check(refused) or "")
    assert shell.check(Block("p.md", 1, "sh", "true\nfalse\ntrue\n")) is not None
    # The state: a variable set in one block is there in the next.
    assert shell.check(Block("p.md", 1, "sh", "TOKEN=abc\n")) is None
    assert shell.check(Block("p.md", 2, "console", "$ echo $TOKEN\nabc\n")) is None
