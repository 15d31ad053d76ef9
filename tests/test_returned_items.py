"""A helper returning a tuple that holds a volatile value at some positions only
(`flow.taint_items.returned_items`): where a caller unpacks the call, only the names at those
positions are volatile (`TaintAnalysis`'s `items`), so the region covers what computes with
them and not the training forward on the others (a replay memory's `sample()`: Rainbow's
`return idxs, states, ..., next_states`)."""
from __future__ import annotations

import ast
import textwrap

from volfix.api import fix_source
from volfix.flow.taint_items import returned_items
from volfix.flow.taint import TaintAnalysis
from volfix.syntax.index import ModuleIndex
from volfix.syntax.positions import SourceText


def items_of(code: str):
    """`returned_items` of the module's first function, from its `Variable(...)` calls."""
    text = textwrap.dedent(code)
    tree = ast.parse(text)
    index = ModuleIndex(tree, SourceText(text))
    fn = tree.body[0]
    sources = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and any(k.arg == "volatile" for k in n.keywords)]
    taint = TaintAnalysis(fn, index, sources).run()
    return returned_items(fn, taint, sources)


def test_the_positions_that_hold_the_value():
    assert items_of('''\
        def sample(data, n):
            nxt = Variable(data[1:], volatile=True)
            return data[:n], Variable(data[:n]), nxt
        ''') == (3, frozenset({2}))
    assert items_of('''\
        def sample(data, n):
            return data[:n], Variable(data[n:], volatile=True)
        ''') == (2, frozenset({1}))
    # an attribute the value was stored in, a container it was appended to, an object holding it
    assert items_of('''\
        def sample(self, data, n):
            self.h = Variable(data[n:], volatile=True)
            out = []
            out.append(self.h)
            return n, out, self, data
        ''') == (4, frozenset({1, 2}))


def test_no_positions_when_the_returns_disagree_or_every_item_may_hold_it():
    assert items_of('''\
        def sample(data, n):
            if n:
                return data, Variable(data, volatile=True)
            return data, Variable(data, volatile=True), n
        ''') is None
    assert items_of('''\
        def sample(data, n):
            v = Variable(data, volatile=True)
            return v, v * 2
        ''') is None
    assert items_of('''\
        def sample(data, n):
            v = Variable(data, volatile=True)
            return (v, *data)
        ''') is None
    assert items_of('''\
        def sample(data, n):
            return Variable(data, volatile=True)
        ''') is None


LEARN = '''\
import torch
from torch.autograd import Variable


def sample(data, n):
    return Variable(data[:n]), Variable(data[n:], volatile=True)


def learn(net, target, data):
    states, next_states = sample(data, 4)
    q = net(states)
    pns = target(next_states).data
    return q, pns


def learn_again(net, target, data):
    v = Variable(data, volatile=True)
    states, next_states = sample(v, 4)
    q = net(states)
    return q
'''


def test_an_unpacking_caller_covers_only_the_volatile_names():
    fixed = fix_source(LEARN, path="learn.py", unsafe_fixes=True).fixed_source
    assert "    q = net(states)\n    with torch.no_grad():\n        pns = target(next_states).data\n" in fixed
    # The call is given a volatile value: what it returns may carry it anywhere.
    assert "@torch.no_grad()\ndef learn_again(net, target, data):\n    states, next_states = sample(data, 4)\n" \
        "    q = net(states)\n" in fixed


TWO_MEMORIES = '''\
import torch
from torch.autograd import Variable


class Memory0(object):
    def sample(self, x):
        return Variable(x[3:], volatile=True), Variable(x[:3])


class Memory1(object):
    def sample(self, x):
        return Variable(x[:3]), Variable(x[3:], volatile=True)


def learn(model, x):
    n0, s0 = Memory0().sample(x)
    s1, n1 = Memory1().sample(x)
    q = model(s0) + model(s1)
    t0 = model(n0).data
    t1 = model(n1).data
    return q, t0, t1
'''


def test_each_class_answers_the_calls_on_its_own_instances():
    """Two classes' `sample()` hold the volatile item at different positions: a call on an
    instance made right there reaches its own class's method only, so each unpacking follows
    its own positions (the generated run's `returned_tuple` twice found the calls merged)."""
    fixed = fix_source(TWO_MEMORIES, path="two.py", unsafe_fixes=True).fixed_source
    assert "    q = model(s0) + model(s1)\n    with torch.no_grad():\n        t0 = model(n0).data\n" \
        "        t1 = model(n1).data\n" in fixed
