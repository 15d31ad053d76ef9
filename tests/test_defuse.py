"""The statement-level flow graph behind the alias cleanup (volfix/flow/defuse.py)."""
from __future__ import annotations

import ast
import textwrap

from volfix.flow.defuse import ENTRY, Graph


def graph_of(source: str):
    tree = ast.parse(textwrap.dedent(source))
    fn = tree.body[0]
    return fn, Graph.build(fn)


def step_at(graph: Graph, fn: ast.AST, row: int) -> int:
    """The step of the statement starting at `row` of the dedented source (1-based)."""
    stmt = next(n for n in ast.walk(fn) if isinstance(n, ast.stmt) and n.lineno == row)
    return graph.step_of[id(stmt)]


def rows_reading(graph: Graph, starts, name: str):
    reading, _ = graph.reached_reads(starts, name)
    return sorted(graph.steps[i].node.lineno for i in reading)


def test_an_exhausted_loop_does_not_bind_its_target():
    fn, graph = graph_of("""\
        def f(loader, epochs):
            for epoch in range(epochs):
                if epoch:
                    print(data)
                for data in loader:
                    x = data
            return x
    """)
    # the read of `data` in the next epoch sees the inner loop's last round
    assert rows_reading(graph, [step_at(graph, fn, 6)], "data") == [4]
    # ... and the parameter-less start reaches it too (the first epoch)
    assert 4 in rows_reading(graph, [ENTRY], "data")


def test_a_rebinding_stops_the_walk_and_break_leaves_the_loop():
    fn, graph = graph_of("""\
        def f(items, a):
            x = a
            for item in items:
                if item:
                    break
                x = item
            return x
    """)
    assert rows_reading(graph, [step_at(graph, fn, 2)], "x") == [7]
    assert graph.rebound_before_read([step_at(graph, fn, 2)], "x", "a", set()) is False
    assert graph.rebound_before_read([step_at(graph, fn, 2)], "x", "item", set()) is True


def test_an_exception_reaches_the_handler_from_inside_the_try():
    fn, graph = graph_of("""\
        def f(a, b):
            x = a
            try:
                x = b
                risky()
            except ValueError:
                return x
            return x
    """)
    # both bindings reach the handler's read; only the second reaches the last return
    assert rows_reading(graph, [step_at(graph, fn, 2)], "x") == [7]
    assert rows_reading(graph, [step_at(graph, fn, 4)], "x") == [7, 8]


def test_nested_functions_and_lambdas_are_read_later_not_here():
    fn, graph = graph_of("""\
        def f(a, k=None):
            x = a
            g = lambda: x
            def h(y=x):
                return x
            return g, h
    """)
    # only the default `y=x` runs where `h` is defined; the lambda's and h's bodies run later
    assert rows_reading(graph, [step_at(graph, fn, 2)], "x") == [4]


def test_finally_and_match_are_refused():
    assert Graph.build(ast.parse("def f():\n    try:\n        pass\n    finally:\n        pass\n").body[0]) is None
    assert Graph.build(ast.parse("def f(v):\n    match v:\n        case 1:\n            pass\n").body[0]) is None


def test_a_generator_a_consuming_builtin_exhausts_is_read_at_its_call():
    source = """\
        def f(outputs, target, pending):
            y = target
            loss = sum(crit(o, y) for o in outputs)
            pending.append(crit(o, y) for o in outputs)
            return loss
    """
    tree = ast.parse(textwrap.dedent(source))
    fn = tree.body[0]
    start = lambda graph: [step_at(graph, fn, 2)]  # noqa: E731
    # `sum` runs the generator now; the one handed to `append` runs whenever it is iterated
    consumed = Graph.build(fn, frozenset({"sum"}))
    assert rows_reading(consumed, start(consumed), "y") == [3]
    # the caller leaves out a builtin the module rebinds (`sum = my_sum`): read later, as before
    plain = Graph.build(fn)
    assert rows_reading(plain, start(plain), "y") == []
