"""`TrainingCalls.methods` reads the class methods off the index's defs (issue 27: a walk of
the whole tree per analysis cost as much as the index); the table must be the one the plain
breadth-first walk gives, order included (the first callee that trains names the message)."""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from volfix.flow.trains import TrainingCalls, _defs
from volfix.syntax.document import Document, parse_document

ROOT = Path(__file__).resolve().parent.parent


def walked(tree: ast.Module) -> dict:
    """The table as the plain walk builds it: every class in `ast.walk` order."""
    out: dict = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                for fn in _defs(stmt):
                    out.setdefault(fn.name, []).append(fn)
    return out


NESTED = '''\
import torch


def step(model):
    class Local(object):
        def train(self):
            pass

    return Local


class Outer(object):
    def train(self, x):
        loss = x.sum()
        loss.backward()

    class Inner(object):
        def train(self):
            pass

        if torch.__version__ < "0.4":
            def evaluate(self):
                pass
        else:
            def evaluate(self):
                with torch.no_grad():
                    pass

    try:
        def evaluate(self):
            pass
    except ImportError:
        def evaluate(self):  # in a handler: not one of the class's defs
            pass
    finally:
        def close(self):
            def train():  # nested in a method: no method
                pass


class Later(object):
    @staticmethod
    def train():
        pass

    async def evaluate(self):
        pass


if True:
    class Gated(object):
        def train(self):
            pass
'''


def table(doc: Document) -> dict:
    return {name: [id(fn) for fn in fns] for name, fns in TrainingCalls(doc.index()).methods().items()}


def test_nested_classes_and_gated_defs_are_found_in_walk_order():
    doc = parse_document(NESTED)
    assert isinstance(doc, Document)
    expected = {name: [id(fn) for fn in fns] for name, fns in walked(doc.tree).items()}
    assert table(doc) == expected
    # The walk's order is breadth first: the classes at the top come before the nested ones.
    lines = [fn.lineno for fn in TrainingCalls(doc.index()).methods()["train"]]
    assert lines == [13, 43, 6, 18, 52]


def corpus():
    paths = sorted((ROOT / "fixtures").rglob("*.py")) + sorted((ROOT / "volfix").rglob("*.py"))
    return [p for p in paths if "class " in p.read_text(encoding="utf-8", errors="replace")]


@pytest.mark.parametrize("chunk", range(4))
def test_the_table_is_the_walks_on_every_fixture_and_module(chunk):
    checked = 0
    for path in corpus()[chunk::4]:
        doc = parse_document(path.read_text(encoding="utf-8", errors="replace"))
        if not isinstance(doc, Document):
            continue
        expected = {name: [id(fn) for fn in fns] for name, fns in walked(doc.tree).items()}
        assert table(doc) == expected, path
        checked += 1
    assert checked >= 10
