#!/usr/bin/env python3
"""List import cycles between the modules of the `volfix` package (function-level imports
count too; imports under `if TYPE_CHECKING:` do not, they never run). `from . import x`
counts as an import of the submodule `x` when there is one.

    python scripts/import_cycles.py     # exit 1 and list the cycles, if any
"""
from __future__ import annotations

import ast
import os
import sys
from typing import Dict, List, Set

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "volfix")


def modules() -> Dict[str, str]:
    out = {}
    for directory, _, files in os.walk(ROOT):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                rel = os.path.relpath(path, os.path.dirname(ROOT))[:-3].replace(os.sep, ".")
                out[rel[:-len(".__init__")] if rel.endswith(".__init__") else rel] = path
    return out


def graph(mods: Dict[str, str]) -> Dict[str, Set[str]]:
    edges: Dict[str, Set[str]] = {m: set() for m in mods}
    for module, path in mods.items():
        package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
        tree = ast.parse(open(path, encoding="utf-8").read())
        typing_only = {id(n) for block in ast.walk(tree) if _type_checking(block)
                       for stmt in block.body for n in ast.walk(stmt)}  # type: ignore[attr-defined]
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")
                    parts = parts[:len(parts) - (node.level - 1)]
                    target = ".".join(parts + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in mods]
                if len(subs) < len(node.names) and target in mods:
                    subs.append(target)
                edges[module].update(s for s in subs if s != module)
            elif isinstance(node, ast.Import):
                edges[module].update(a.name for a in node.names if a.name in mods and a.name != module)
    return edges


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def cycles(edges: Dict[str, Set[str]]) -> List[List[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    found: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()  # the walk recurses once a module; put the limit back after
    sys.setrecursionlimit(max(limit, 10000))
    try:
        for v in sorted(edges):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return found


def main() -> int:
    found = cycles(graph(modules()))
    for component in found:
        print("cycle:", " <-> ".join(component))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
