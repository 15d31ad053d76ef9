"""The package layout (issue 23, docs/ARCHITECTURE.md): each top-level name says what it holds,
layers import only downwards, and there is no import cycle."""
from __future__ import annotations

import ast
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "volfix"
CYCLES = runpy.run_path(str(ROOT / "scripts" / "import_cycles.py"))
# The layers that run a whole command (and may import any layer below them).
DRIVERS = {"cli", "run", "lsp", "verify", "api", "__main__", "volfix"}
# Each package of the core and what it must never import: the layers that drive it.
CORE = ["engine", "syntax", "rules", "flow", "fixes", "notebook", "project", "files", "settings", "reporters"]


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "volfix"


@pytest.fixture(scope="module")
def edges():
    return CYCLES["graph"](CYCLES["modules"]())


def test_no_import_cycle(edges):
    import sys

    limit = sys.getrecursionlimit()
    assert CYCLES["cycles"](edges) == []
    assert sys.getrecursionlimit() == limit  # the script leaves the interpreter as it was


def test_few_modules_stay_at_the_top():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= 8, top


def test_every_package_says_what_it_holds():
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and len(doc.split()) >= 8, f"{init.relative_to(ROOT)} has no docstring saying what it holds"


@pytest.mark.parametrize("package", CORE)
def test_the_core_never_imports_the_layers_that_drive_it(edges, package):
    upward = sorted(f"{module} -> {target}" for module, targets in edges.items() if package_of(module) == package
                    for target in targets if package_of(target) in DRIVERS)
    assert upward == []


def test_nothing_below_the_command_line_imports_it(edges):
    users = sorted(module for module, targets in edges.items()
                   if any(package_of(t) == "cli" for t in targets) and package_of(module) not in ("cli", "__main__"))
    assert users == []
