"""Values one branch of an `if` made plain again (SPEC §2.10): where a region would cover a
statement that, on that path, recorded a graph in 0.3.

`if do_train and not train_feat: features = Variable(features.data, volatile=False)`: after the
`if`, the value is volatile on one path only (`flow.taint` notes the branch as a partial kill).
A region over `classifier(features)` turns grad off on both paths; on the frozen-feature path
0.3 recorded a graph there and trained with it.
"""
from __future__ import annotations

import ast
from typing import Dict, Optional, Set, Tuple

from ..flow.values import key_of
from .gates import mentions_version


def partly_volatile(index, group) -> Optional[Tuple[str, bool]]:
    """(the reason, whether a training step follows) when the region covers a statement that
    may record with a value one branch of an earlier `if` made plain again (`if frozen: feat
    = Variable(feat.data)`), or made volatile while the other path keeps a plain one (`if kw >
    1: input = Variable(buf, volatile=True)`, `input` an argument): on that path 0.3 recorded
    a graph there, and trained with what it computed, which the region turns off."""
    taint = group.taint
    runs = group.placement.runs if group.placement else []
    # A version gate's old-torch branch never runs today (`if torch_ver == "0.3": ... else:
    # with torch.no_grad(): ...`): its other branch is no path of the program's.
    kills = [(key, branch, False) for key, branch in taint.partial_kills if not mentions_version(index, branch.test)]
    # A flag written under the `if`'s own test is that test's region (`if train: ... else:
    # x.volatile = True` runs under `set_grad_enabled(train)`): both paths are what it says,
    # also when the test is a local the flag was followed to (`training = phase == "train"`).
    flags = {id(s.flag.node) for s in group.sources if s.flag is not None} | {
        id(s.flag.branch) for s in group.sources if s.flag is not None and s.flag.branch is not None}
    kills += [(key, branch, True) for key, branch in taint.partial_gens
              if not mentions_version(index, branch.test) and id(branch.test) not in flags]
    # in source order, then by name: `partial_kills`/`partial_gens` are sets, and the note names
    # the first that applies (it changed from run to run with the strings' hashes)
    kills.sort(key=lambda k: (k[1].lineno, k[1].col_offset, k[0], k[2]))
    killed: Dict[int, Set[str]] = {}  # if -> the keys one of its branches made plain (or volatile)
    for key, branch, _ in kills:
        killed.setdefault(id(branch), set()).add(key)
    made = [s.node for s in group.sources]
    for key, branch, gen in kills:
        for use in taint.uses:
            if id(use) not in taint.recording or use.lineno <= branch.end_lineno:
                continue
            read = {key_of(n) for n in ast.walk(use) if isinstance(n, (ast.Name, ast.Attribute))
                    and isinstance(n.ctx, ast.Load)} & taint.tainted_keys
            if key not in read or not read <= killed[id(branch)] or any(_covers_node(use, n) for n in made) \
                    or _bound_between(index, key, branch.end_lineno, use.lineno, group.scope):
                continue  # another volatile value (or the source itself, or a new binding) keeps it volatile
            if any(run.holds(use) for run in runs):
                trained = [stmt for stmt, _ in taint.training if stmt.lineno > branch.end_lineno]
                step = f" and trained with it (line {trained[0].lineno})" if trained else ""
                how = ("is volatile on one branch only", "the other") if gen else \
                    ("stops being volatile on one branch", "that")
                return (f"`{key}` {how[0]} of the `if` of line {branch.lineno}; on {how[1]} path 0.3 "
                        f"recorded a graph at line {use.lineno}{step}, which a region would turn off",
                        bool(trained))
    return None


def _bound_between(index, key: str, after: int, before: int, scope: ast.AST) -> bool:
    """Some statement of `scope` on the lines between binds `key` (`fc_feats, ... = tmp`
    after the `if`, from the group's own source): the use reads that value."""
    name, _, attr = key.rpartition(".")
    nodes = index.attributes.get(attr, ()) if name else index.names.get(key, ())
    return any(not isinstance(n.ctx, ast.Load) and after < n.lineno < before and key_of(n) == key
               and index.function_of(n) is scope for n in nodes)


def _covers_node(stmt: ast.stmt, node: ast.AST) -> bool:
    """`node` lies inside the statement `stmt`."""
    return (stmt.lineno, stmt.col_offset) <= (node.lineno, node.col_offset) and \
        (node.end_lineno, node.end_col_offset) <= (stmt.end_lineno, stmt.end_col_offset)  # type: ignore[attr-defined]
