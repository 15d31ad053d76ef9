"""Many findings in one file (issue 24: a 4.5 MB document with 45,000 findings): the planner,
the taint, the regions and the edit selection were made near-linear, and their output must be
exactly what the straightforward algorithms give. Each test runs volfix twice, once with the
plain algorithm put back (kept here as the reference) and once as shipped, and compares every
diagnostic, every fix's edits and the fixed text. The speed is measured in the benchmark
(`benchmarks/bench.py --many-sites`), not here."""
from __future__ import annotations

import ast
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import List, Sequence, Set, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import legacy_programs

import volfix
from volfix.fixes import edits as edits_module
from volfix.fixes.edits import TextEdit, conflicts, conflicts_across, select_compatible
from volfix.flow import taint
from volfix.fixes import planner as planner_module
from volfix.fixes import regions as regions_module
from volfix.syntax.names import target_names

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from gen_many_sites import generate  # noqa: E402

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---------------------------------------------------------------------- the plain algorithms


def plain_merge(self, groups):
    """Planner.merge as it was: rescan from the first pair after every merge."""
    changed = True
    while changed:
        changed = False
        for i, a in enumerate(groups):
            for b in groups[i + 1:]:
                same = (a.flag is None) == (b.flag is None) and (a.flag is None or a.flag.text == b.flag.text)
                if same and self.touch(a, b):
                    merged = self.analyse(planner_module.Group(a.scope, a.sources + b.sources))
                    groups = [g for g in groups if g is not a and g is not b] + [merged]
                    changed = True
                    break
            if changed:
                break
    return groups


def plain_rebound_later(self, stmt, names, inside: Set[int]):
    """RegionPlacer.rebound_later as it was: read the later statements one by one."""
    slot = self.index.slot_of(stmt)
    if slot is None:
        return set()
    out: Set[str] = set()
    for later in slot[2][slot[3] + 1:]:
        if id(later) not in inside:
            break
        if isinstance(later, ast.Assign):
            for target in later.targets:
                out.update(target_names(target))
        elif any(isinstance(n, (ast.Break, ast.Continue, ast.Return, ast.Raise)) for n in ast.walk(later)):
            break
    return out & set(names)


def plain_harmless_gap(self, a, b, scope):
    if a.block is not b.block:
        return False
    if a.first > b.first:
        a, b = b, a
    return all(self.kinds.harmless(s, scope) for s in a.block[a.last + 1:b.first])


def plain_run_contains(outer, inner):
    if outer.block is inner.block:
        return outer.first <= inner.first and inner.last <= outer.last
    first = inner.block[inner.first]
    return any(regions_module.within(first, s) for s in outer.statements)


def plain_select_compatible(groups: Sequence[Tuple[object, Sequence[TextEdit]]]):
    chosen_keys, chosen = [], []
    seen = set()
    for key, edits in groups:
        new = [e for e in dict.fromkeys(edits) if not (e.key and e in seen)]
        if any(conflicts_across(e, c) for e in new for c in chosen):
            continue
        if any(conflicts(a, b) for i, a in enumerate(new) for b in new[i + 1:]):
            continue
        chosen_keys.append(key)
        chosen.extend(new)
        seen.update(new)
    return chosen_keys, chosen


@contextmanager
def plain_algorithms():
    """volfix with every long block read statement by statement and the plain algorithms."""
    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(taint, "SKIP_BLOCK", 10 ** 9)
        mp.setattr(planner_module.Planner, "merge", plain_merge)
        mp.setattr(regions_module.RegionPlacer, "rebound_later", plain_rebound_later)
        mp.setattr(regions_module.RegionPlacer, "harmless_gap", plain_harmless_gap)
        mp.setattr(regions_module.Run, "contains", plain_run_contains)
        mp.setattr(edits_module._Near, "WIDE", -1)  # every edit compared with every other
        yield
    finally:
        mp.undo()


@contextmanager
def every_block_long():
    """The shipped algorithms, with even a one-statement block read the long way."""
    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(taint, "SKIP_BLOCK", 1)
        yield
    finally:
        mp.undo()


def everything(source: str) -> tuple:
    """What volfix says and writes: the findings with each fix's edits, the safe fix, the
    unsafe fix (and the findings each leaves)."""
    checked = volfix.check_source(source, path="many.py", with_fixes=True)
    safe = volfix.fix_source(source, path="many.py")
    unsafe = volfix.fix_source(source, path="many.py", unsafe_fixes=True)
    return (checked.diagnostics, safe.fixed_source, safe.diagnostics, unsafe.fixed_source, unsafe.diagnostics)


# ---------------------------------------------------------------------- tests


@pytest.mark.parametrize("seed", [0, 3])
def test_many_sites_come_out_as_with_the_plain_algorithms(seed):
    source = generate(40, seed)
    with plain_algorithms():
        expected = everything(source)
    found = everything(source)
    assert found == expected
    diagnostics, fixed = found[0], found[1]
    assert len(diagnostics) > 60 and fixed != source  # the comparison is about real fixes
    assert sum(d.fix is not None and bool(d.fix.edits) for d in diagnostics) > 40
    assert volfix.fix_source(fixed, path="many.py").fixed_source == fixed  # and converges


def test_the_generated_script_is_varied_and_deterministic():
    source = generate(60, 1)
    assert source == generate(60, 1) and source != generate(60, 2)
    tree = ast.parse(source)
    kinds = {type(s).__name__ for s in tree.body}
    assert {"Assign", "For", "If", "FunctionDef", "Expr"} <= kinds
    assert "backward()" in source and "# reuses site" in source
    assert len([s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name.startswith("f")]) >= 60


@SETTINGS
@given(legacy_programs())
def test_reading_every_block_the_long_way_changes_nothing(program):
    """`long_block` (visit only what can matter) equals the plain statement-by-statement walk,
    on blocks of every shape the property tests draw (loops, branches, try, closures...)."""
    source = program.source
    with plain_algorithms():
        expected = everything(source)
    with every_block_long():
        assert everything(source) == expected


_EDITS = st.builds(
    lambda start, length, content, key: TextEdit(start, start + length, content, key),
    st.integers(0, 60), st.sampled_from([0, 0, 1, 2, 5, 30, 700]), st.sampled_from(["", "x", "with a:\n"]),
    st.sampled_from(["", "", "import torch"]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_EDITS, max_size=20), max_size=12))
def test_edit_selection_equals_the_pairwise_one(groups: List[List[TextEdit]]):
    keyed = list(enumerate(groups))
    assert select_compatible(keyed) == plain_select_compatible(keyed)
