"""Every `adminium` command holds to the console's one contract (docs/errors.md, "The
console"): a refusal is one `Error: <sentence> (<CODE>)` line on stderr, its code in the
table of codes, and exit 1; a usage error is one `Error:` line naming the option as it was
typed, and exit 2; never a traceback.

The commands are found by walking click's command tree, so a command added later is held
to it too: it must refuse the generic invocation below (names no control plane knows), or
say in REFUSALS how it is refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from adminium.cli import main
from adminium.control_commands import Instant
from adminium.refusals import CODES
from tests.conftest import ROOT
from web.errors import STATUSES

pytestmark = pytest.mark.integration


def leaf_commands(
    group: click.Group = main, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, ...]]:
    """The path of every command under `group` that is not itself a group."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        if isinstance(command, click.Group):
            yield from leaf_commands(command, (*path, name))
        else:
            yield (*path, name)


COMMANDS = sorted(leaf_commands())


def command_of(path: tuple[str, ...]) -> click.Command:
    command: click.Command = main
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), name)
        assert found is not None
        command = found
    return command


#: How a command whose generic invocation is not refused is refused, or why it has no
#: refusal of its own (None: `run` starts servers; its usage errors are held below).
REFUSALS: dict[tuple[str, ...], list[str] | None] = {
    ("check",): ["{broken}"],
    ("moment",): ["{bad_moment}"],
    ("connection", "list"): None,
    ("run",): None,
}
"""Commands the generic invocation does not refuse. `connection list` lists what there is
(nothing is no refusal); `run` starts the servers (its usage errors are held below)."""


DEAD_REDIS = "redis://127.0.0.1:1/0"
"""A Redis nobody answers at."""

ENVIRONMENT: dict[tuple[str, ...], dict[str, str]] = {("user", "unlock"): {"REDIS_URL": DEAD_REDIS}}
"""What a command's invocations set besides the control plane: `user unlock` with no
REDIS_URL would start an embedded Redis in the working folder; given one that does not
answer, it is refused."""


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Files the invocations name: an empty JSON array, a manifest the check refuses, a
    moment that cannot be read."""
    folder = tmp_path_factory.mktemp("contract")
    (folder / "empty.json").write_text("[]")
    (folder / "broken.json").write_text('{"name": "x", "tables": {"t": {"key": "id"}}}')
    (folder / "moment.json").write_text('{"moment": {"column": "pickup_at"}}')
    return {
        "empty": str(folder / "empty.json"),
        "broken": str(folder / "broken.json"),
        "bad_moment": str(folder / "moment.json"),
    }


def generic_args(command: click.Command, files: dict[str, str]) -> list[str]:
    """Every argument, and every required option, given a value nothing knows: a name
    `nosuch`, a path to an empty JSON array."""
    args: list[str] = []
    for param in command.params:
        if isinstance(param, click.Argument):
            takes_file = isinstance(param.type, click.Path | click.File)
            args.append(files["empty"] if takes_file else "nosuch")
        elif isinstance(param, click.Option) and param.required:
            args += [param.opts[0], "nosuch"]
    return args


def invoke(control: str, args: list[str], path: tuple[str, ...] = ()) -> Result:
    """`adminium ARGS` in this process on the test's control plane, with no Redis (or what
    ENVIRONMENT gives the command at `path`)."""
    env = {"DATABASE_URL": control, "REDIS_URL": "", **ENVIRONMENT.get(path, {})}
    return CliRunner().invoke(main, args, env=env, input="")


def assert_refusal(result: Result) -> None:
    """Exit 1; stderr's first line `Error: … (CODE)`, a code of the table; any further
    lines indented; never a traceback."""
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 1, (result.exit_code, result.output)
    first, *more = result.stderr.splitlines()
    assert first.startswith("Error: "), result.stderr
    codes = CODES.search(first)
    assert codes is not None, f"no (CODE) at the end of {first!r}"
    assert set(codes[1].split(", ")) <= set(STATUSES), first
    assert all(line.startswith("  ") for line in more), result.stderr


def assert_usage(result: Result, typed: str, path: tuple[str, ...]) -> None:
    """Exit 2; one `Error:` line on stderr naming what was typed, and where the usage is."""
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert result.stderr.splitlines() == [result.stderr.strip()], result.stderr
    line = result.stderr.strip()
    assert line.startswith("Error: ") and f"'{typed}'" in line, line
    assert line.endswith(f"(see 'adminium {' '.join(path)} --help')"), line


def test_the_walk_finds_every_command() -> None:
    # A sample of what must be there: groups' commands and single ones.
    wanted = {("run",), ("due",), ("app", "add"), ("sample", "remove"), ("set-aside", "retry")}
    assert wanted <= set(COMMANDS)


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_a_command_refuses_with_one_error_line_and_its_code(
    path: tuple[str, ...], control: str, files: dict[str, str]
) -> None:
    command = command_of(path)
    args = [*path, *generic_args(command, files)]
    generic = invoke(control, args, path) if path != ("run",) else None
    if generic is not None and generic.exit_code != 1:
        assert generic.exit_code == 0, (generic.exit_code, generic.output, generic.exception)
    if path in REFUSALS:
        special = REFUSALS[path]
        if special is not None:
            special_args = [*path, *(a.format(**files) for a in special)]
            assert_refusal(invoke(control, special_args, path))
        return
    assert generic is not None
    assert generic.exit_code == 1, (
        f"`adminium {' '.join(path)}` refused nothing; say in REFUSALS how it is refused",
        generic.output,
    )
    assert_refusal(generic)


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_an_unknown_option_is_a_usage_error_naming_it(path: tuple[str, ...], control: str) -> None:
    assert_usage(invoke(control, [*path, "--no-such-option"]), "--no-such-option", path)


def bad_values(command: click.Command) -> Iterator[tuple[str, str]]:
    """(option as typed, a value its type refuses) for each option whose type checks it."""
    for param in command.params:
        if not isinstance(param, click.Option) or param.is_flag:
            continue
        if isinstance(param.type, Instant):
            yield from ((opt, "tomorrow") for opt in param.opts)
        elif isinstance(param.type, click.types.IntParamType | click.Choice):
            yield from ((opt, "not-a-value") for opt in param.opts)


TYPED = [(path, *bad) for path in COMMANDS for bad in bad_values(command_of(path))]


def test_the_typed_options_include_every_instant() -> None:
    typed = {(path, option) for path, option, _ in TYPED}
    assert {(("due",), "--at"), (("preview",), "--at"), (("app", "add"), "--at")} <= typed
    assert {(("sweep",), "--now"), (("sample", "remove"), "--now"), (("run",), "--port")} <= typed


@pytest.mark.parametrize(("path", "option", "value"), TYPED, ids=lambda v: str(v))
def test_a_bad_option_value_names_the_option_typed(
    path: tuple[str, ...], option: str, value: str, control: str, files: dict[str, str]
) -> None:
    args = [*path, *generic_args(command_of(path), files), option, value]
    assert_usage(invoke(control, args), option, path)


def test_due_at_names_at_not_now(control: str) -> None:
    # The case: `due --at` answered "Invalid value for --now".
    result = invoke(control, ["due", "demo", "--at", "2026-10-24T09:00"])
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: Invalid value for '--at': '2026-10-24T09:00' needs its offset, e.g. +00:00"
        " (see 'adminium due --help')\n"
    )


def test_a_refused_move_is_one_error_line_with_its_code(control: str) -> None:
    # The case: `adminium move` printed `refused: CODE: …`. A connection nobody
    # added is refused the same way every other refusal is.
    result = invoke(control, ["move", "nosuch", "orders", "1", "ready", "--as", "a@b.test"])
    assert_refusal(result)
    assert result.stderr == "Error: no connection named 'nosuch' (NOT_FOUND)\n"


def test_a_manifest_refusal_is_one_error_line_then_its_sentences(
    control: str, files: dict[str, str]
) -> None:
    result = invoke(control, ["check", files["broken"]])
    assert_refusal(result)
    first, *sentences = result.stderr.splitlines()
    assert first == f"Error: the manifest check refused {files['broken']} (MANIFEST_REFUSED)"
    assert sentences and all(re.match(r"  \S+: ", s) for s in sentences), sentences


def test_the_docs_say_the_contract() -> None:
    text = (ROOT / "docs" / "errors.md").read_text()
    assert "`Error: <sentence> (<CODE>)`" in text
    assert "exit status 1" in text and "exit status 2" in text


def test_a_path_to_no_procfile_is_a_usage_error(control: str) -> None:
    result = invoke(control, ["run", "--procfile", str(Path("/nonexistent/Procfile"))])
    assert_usage(result, "--procfile", ("run",))
