"""core/ is the domain: it imports no flask, redis or rq."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "core"
FORBIDDEN = {"flask", "flask_sock", "flask_sqlalchemy", "redis", "rq"}


def imported_roots(path: Path) -> set[str]:
    """Top-level package names a module imports."""
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


CORE_FILES = sorted(CORE.rglob("*.py"))


def test_core_has_modules() -> None:
    assert CORE_FILES, "core/ holds no modules"


@pytest.mark.parametrize("path", CORE_FILES, ids=lambda p: str(p.relative_to(CORE)))
def test_core_module_imports_no_adapter(path: Path) -> None:
    assert imported_roots(path) & FORBIDDEN == set()


def test_the_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import redis\nfrom flask import Flask\nfrom rq.job import Job\n")
    assert imported_roots(bad) & FORBIDDEN == {"redis", "flask", "rq"}
