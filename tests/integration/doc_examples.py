"""The docs' examples, read and run as a reader meets them (test_docs_examples.py).

The convention (README.md, "Docs"):

- A fenced block whose info string is `sh` or `console` is an example, and runs.
  `sh`: a script; it must succeed (`set -e -o pipefail`), its output is not compared.
  `console`: each `$ ` line is a command (a line ending in `\\` goes on with the next);
  the lines after it, up to the next `$ `, are its output, compared with what it printed
  (stdout and stderr together): `…` in a line stands for any text, a line holding only
  `…` for any lines, and runs of spaces match any run of spaces or tabs. A command whose
  shown output has a line starting `Error:` must fail; any other must succeed.
- An HTML comment just before a block changes how it is run:
  `<!-- doc-test: skip: WHY -->` the block is not run, and says why;
  `<!-- doc-test: file NAME -->` the block's text is saved as NAME in the working folder,
  for the examples after it (any language);
  `<!-- doc-test: wait N -->` the block's output comes from the clock: it is run again
  until it matches, for at most N seconds;
  any other `<!-- doc-test: … -->` words are a note, and the block runs.
- Other blocks (`json`, `text`, `ini`, no language…) are not run: a command's synopsis with
  placeholders (`adminium sweep CONNECTION`) is written in a `text` block.
- Pages run in the order of README.md's Docs table (README.md first; a page it does not
  list after the listed ones), each page's blocks in order, in one shell state: a variable
  set in one block is there in the next.
- `127.0.0.1:5000` in a command or an output is the site's address.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

RUNNABLE = {"sh", "console"}
MARK = re.compile(r"<!--\s*doc-test:\s*(?P<words>(?:(?!-->).)*?)\s*-->\s*\Z", re.S)
FENCE = re.compile(r"^(?P<indent> *)(?P<ticks>`{3,})(?P<info>[^`\n]*)$")
COMMAND_SECONDS = 180.0
"""How long one command may take (a console command starts an interpreter; a loaded
2-core machine makes that slow)."""


@dataclass(frozen=True)
class Block:
    """A fenced block of a page: where it starts (its opening fence's line, from 1), its
    language, its text, and the doc-test words of the comment before it (if any)."""

    page: str
    line: int
    language: str
    text: str
    mark: str | None = None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def skipped(self) -> str | None:
        """Why the block is not run (`skip: WHY`), or None."""
        if self.mark is not None and self.mark.startswith("skip"):
            return self.mark.partition(":")[2].strip() or "no reason given"
        return None

    @property
    def file(self) -> str | None:
        """The file the block's text is saved as (`file NAME`), or None."""
        if self.mark is not None and self.mark.startswith("file "):
            return self.mark.split(None, 1)[1].strip()
        return None

    @property
    def wait(self) -> float:
        """How long the block is tried again until it matches (`wait N`), 0 for once."""
        if self.mark is not None and re.fullmatch(r"wait \d+", self.mark):
            return float(self.mark.split()[1])
        return 0.0

    @property
    def runs(self) -> bool:
        return self.language in RUNNABLE and self.skipped is None


def blocks(page: str, text: str) -> list[Block]:
    """The fenced blocks of a Markdown page, each with the doc-test comment before it."""
    found: list[Block] = []
    lines = text.splitlines()
    number = 0
    while number < len(lines):
        opening = FENCE.match(lines[number])
        if opening is None:
            number += 1
            continue
        indent, ticks = len(opening["indent"]), opening["ticks"]
        body: list[str] = []
        end = number + 1
        while end < len(lines) and lines[end].strip() != ticks:
            body.append(lines[end][indent:] if lines[end][:indent].strip() == "" else lines[end])
            end += 1
        mark = MARK.search("\n".join(lines[max(0, number - 8) : number]))
        words = " ".join(mark["words"].split()) if mark is not None else None
        language = opening["info"].strip().split(" ")[0]
        found.append(Block(page, number + 1, language, "\n".join(body) + "\n", words))
        number = end + 1
    return found


def page_order(root: Path) -> list[Path]:
    """README.md, then docs/*.md in the order README's Docs table links them, then the rest."""
    readme = root / "README.md"
    section = readme.read_text().partition("\n## Docs\n")[2].partition("\n## ")[0]
    table = "\n".join(line for line in section.splitlines() if line.startswith("| "))
    listed = re.findall(r"\]\((docs/[\w./-]+\.md)\)", table)
    pages = [readme, *(root / name for name in dict.fromkeys(listed))]
    rest = sorted(p for p in (root / "docs").glob("*.md") if p not in pages)
    return [*pages, *rest]


def count_commands(block: Block) -> int:
    """How many commands a runnable block runs: a console block's `$ ` lines, an sh
    block's lines that are not blank, comments or continuations."""
    if not block.runs:
        return 0
    if block.language == "console":
        return len(commands(block))
    lines = [line.strip() for line in block.text.splitlines()]
    starts = [
        line
        for number, line in enumerate(lines)
        if line and not line.startswith("#") and not (number and lines[number - 1].endswith("\\"))
    ]
    return len(starts)


@dataclass(frozen=True)
class Command:
    """One command of a console block: its text and the output it shows."""

    text: str
    shown: list[str]

    @property
    def must_fail(self) -> bool:
        return any(line.startswith("Error:") for line in self.shown)


def commands(block: Block) -> list[Command]:
    """The `$ ` commands of a console block and the output each shows."""
    found: list[Command] = []
    lines = block.text.splitlines()
    number = 0
    while number < len(lines):
        line = lines[number]
        if not line.startswith("$ "):
            raise ValueError(f"{block.where}: output before any `$ ` command: {line!r}")
        text = [line[2:]]
        while text[-1].endswith("\\") and number + 1 < len(lines):
            number += 1
            text.append(lines[number])
        number += 1
        shown: list[str] = []
        while number < len(lines) and not lines[number].startswith("$ "):
            shown.append(lines[number])
            number += 1
        found.append(Command("\n".join(text), shown))
    return found


def pattern(shown: list[str]) -> re.Pattern[str]:
    """The output a command shows as a pattern: `…` any text within a line, a line of `…`
    alone any lines (runs of spaces and tabs are one space, here and in what is matched)."""
    parts = []
    for line in shown:
        if line.strip() == "…":
            parts.append(r"(?:[^\n]*\n)*?")
            continue
        pieces = [re.escape(piece) for piece in " ".join(line.split()).split("…")]
        parts.append("[^\n]*?".join(pieces) + r"\n")
    return re.compile("".join(parts))


def matches(shown: list[str], printed: str) -> bool:
    """Whether what a command printed is what the doc shows."""
    lines = [" ".join(line.split()) if line.strip() else "" for line in printed.splitlines()]
    text = "".join(f"{line}\n" for line in lines)
    return pattern(shown).fullmatch(text) is not None


@dataclass
class Shell:
    """Runs the examples in one working folder with one shell state (variables carried
    from block to block); `site` is the address `127.0.0.1:5000` stands for."""

    folder: Path
    env: dict[str, str]
    site: str = "127.0.0.1:5000"
    state: Path = field(init=False)

    def __post_init__(self) -> None:
        self.state = self.folder / ".doc-test-state"
        self.state.write_text("")

    def localise(self, text: str) -> str:
        return text.replace("127.0.0.1:5000", self.site)

    def run(self, script: str, *, strict: bool) -> tuple[int, str]:
        """Run a script in the shell state; its status and what it printed. The state is
        kept after a script that succeeds."""
        prelude = f"set -a; . {shlex.quote(str(self.state))}; " + (
            "set -e -o pipefail; " if strict else ""
        )
        keep = f"\n__status=$?; export -p > {shlex.quote(str(self.state))}; exit $__status\n"
        done = subprocess.run(
            ["bash", "-c", prelude + "\n" + self.localise(script) + keep],
            cwd=self.folder,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=COMMAND_SECONDS,
        )
        return done.returncode, done.stdout

    def save(self, block: Block) -> None:
        name = block.file
        assert name is not None
        (self.folder / name).write_text(block.text)

    def check(self, block: Block) -> str | None:
        """Run one block; None when it did what the doc says, else what went wrong."""
        if block.file is not None:
            self.save(block)
        if not block.runs:
            return None
        deadline = time.monotonic() + block.wait
        while True:
            problem = self._once(block)
            if problem is None or time.monotonic() >= deadline:
                return problem
            time.sleep(2.0)

    def _once(self, block: Block) -> str | None:
        if block.language == "sh":
            status, printed = self.run(block.text, strict=True)
            return None if status == 0 else f"{block.where}: exit {status}:\n{printed}"
        for command in commands(block):
            status, printed = self.run(command.text, strict=False)
            shown = [self.localise(line) for line in command.shown]
            failed = status != 0
            if failed != command.must_fail:
                wanted = "fail" if command.must_fail else "succeed"
                return f"{block.where}: `{command.text}` should {wanted}, exit {status}:\n{printed}"
            if not matches(shown, printed):
                expected = "\n".join(shown)
                return (
                    f"{block.where}: `{command.text}` printed:\n{printed}\n"
                    f"--- the doc shows:\n{expected}"
                )
        return None


def environment(folder: Path, venv_bin: Path) -> dict[str, str]:
    """A reader's shell in the working folder: the venv activated, none of the suite's
    servers' URLs (the site's embedded ones are found under ./instance)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "SMTP_URL", "ADMINIUM_INSTANCE", "PORT")
        and not k.startswith(("TEST_", "PYTEST_"))
    }
    env["PATH"] = os.pathsep.join([str(venv_bin), env.get("PATH", os.defpath)])
    env["VIRTUAL_ENV"] = str(venv_bin.parent)
    env["PYTHONUNBUFFERED"] = "1"
    env["HOME"] = str(folder)
    return env
