"""Which uses of a volatile value may record a graph (`TaintAnalysis.result.recording`): only
those get a region of their own. NumPy and `math` read values and record nothing, however
tainted what they read is (jingweiz/pytorch-rl logged `np.mean(np.asarray(rewards))` after
its test loop inside a region of its own). Nor does adding one to a running total that every
other binding makes a number (`reward_sum = 0.` at each episode's start)."""
from __future__ import annotations

import ast

from volfix.flow.taint import TaintAnalysis
from volfix.syntax.index import ModuleIndex
from volfix.syntax.names import iter_statements
from volfix.syntax.positions import SourceText

PROGRAM = '''\
import math
import numpy as np
import torch
from torch.autograd import Variable


def evaluate(model, x, weight, log):
    v = Variable(x, volatile=True)
    out = model(v)
    rewards = [out]
    log.append(np.mean(np.asarray(rewards)))
    spread = np.std(out)
    perplexity = math.exp(out)
    scaled = out * weight
    return spread, perplexity, scaled


def episodes(model, env, steps, weight):
    reward_sum = None
    penalty = weight
    for step in range(steps):
        if step % 10 == 0:
            reward_sum = 0.
        action = model(Variable(env.state, volatile=True)).max(1)[1]
        reward = env.step(action)
        reward_sum += reward
        penalty += reward
    return reward_sum, penalty
'''


def uses(program: str, function: str):
    """(line of each use, whether it may record) of the volatile source in `function`."""
    tree = ast.parse(program)
    index = ModuleIndex(tree, SourceText(program))
    fn = next(s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == function)
    source = next(n for n in ast.walk(fn) if isinstance(n, ast.Call) and ast.unparse(n.func) == "Variable")
    result = TaintAnalysis(fn, index, [source]).run()
    lines = program.splitlines()
    return {lines[s.lineno - 1].strip(): id(s) in result.recording
            for s in iter_statements(fn.body) if id(s) in {id(u) for u in result.uses_outside()} | result.recording}


def test_numpy_and_math_read_without_recording():
    found = uses(PROGRAM, "evaluate")
    assert found["out = model(v)"] is True  # the model's parameters
    assert found["scaled = out * weight"] is True  # `weight` may need grad
    assert found["perplexity = math.exp(out)"] is False
    # A NumPy call's result is an array, never volatile (0.3 kept volatility on Variables
    # only): the taint ends there, so these are no uses at all (pianomania's DQN stacked a
    # replay memory with `np.stack` and trained on it)
    assert "log.append(np.mean(np.asarray(rewards)))" not in found
    assert "spread = np.std(out)" not in found


def test_a_number_total_adds_without_recording():
    found = uses(PROGRAM, "episodes")
    assert found["reward_sum += reward"] is False
    assert found["penalty += reward"] is True  # `penalty` starts as `weight`, which may need grad
