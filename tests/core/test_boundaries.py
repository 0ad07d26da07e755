"""The layers import only downward: adapters -> services -> core, never up or sideways.

`core/` is the domain and imports no flask, redis or rq; `services/` (the operations)
imports `core/`; the adapters `web/`, `jobs/` and the console (`adminium/`) import the
operations and `core/`, and never one another.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FRAMEWORKS = {"flask", "flask_sock", "flask_sqlalchemy", "flask_wtf", "redis", "rq"}
OURS = {"core", "services", "web", "jobs", "adminium"}
ALLOWED = {
    "core": set(),
    "services": {"core"},
    "web": {"core", "services"},
    "jobs": {"core", "services"},
    "adminium": {"core", "services"},
}
"""Which of our packages each package may import, besides itself."""


def imported_roots(path: Path) -> set[str]:
    """Top-level package names a module imports, at its top or inside a function."""
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def modules_of(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


LAYERED = [(package, path) for package in ALLOWED for path in modules_of(package)]


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_each_layer_has_modules(package: str) -> None:
    assert modules_of(package), f"{package}/ holds no modules"


@pytest.mark.parametrize(
    ("package", "path"), LAYERED, ids=[str(p.relative_to(ROOT)) for _, p in LAYERED]
)
def test_a_module_imports_only_downward(package: str, path: Path) -> None:
    ours = imported_roots(path) & OURS - {package}
    assert ours <= ALLOWED[package], f"{package} may not import {sorted(ours - ALLOWED[package])}"


@pytest.mark.parametrize("path", modules_of("core"), ids=lambda p: str(p.relative_to(ROOT)))
def test_core_imports_no_framework(path: Path) -> None:
    assert imported_roots(path) & FRAMEWORKS == set()


def test_the_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import redis\nfrom flask import Flask\n\ndef f():\n    from web.api import clock\n"
    )
    assert imported_roots(bad) & FRAMEWORKS == {"redis", "flask"}
    assert imported_roots(bad) & OURS == {"web"}
