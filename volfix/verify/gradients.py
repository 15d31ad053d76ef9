"""The `backward` calls the original run gave a gradient of shape (1,) for a one-element root,
found again in the working tree (VF403 at run time).

0.3's one-element results had shape (1,), so `D_real.backward(mone)` with `mone =
torch.FloatTensor([-1])` matched its root. Since 0.4 the root is 0-dim and torch raises
`Mismatch in shape`. VF403 makes the gradient 0-dim where the code tells the root's rank;
where only the data does (`errD_real = netD(x)`, a model volfix cannot read), the legacy run
tells: `volfix.legacy` answers each such call as 0.3 did and the tracer records its site once
(`scalar_gradient`). A call the working tree still has at that line is a finding, unless the
migrated run passed it without an error (its gradient was made 0-dim since). There is no
automatic fix: the gradient is made elsewhere (`one = torch.tensor(1.)` where it is defined).
"""
from __future__ import annotations

import ast
import os
from typing import Dict, List, Optional, Set, Tuple

from .compare import Finding, LineMap
from .runs import Run
from .scalars import _parse


def findings(before: Run, after: Run, lines: LineMap) -> List[Finding]:
    """A finding for each `scalar_gradient` call of `before` that the working tree still makes
    and `after` did not pass."""
    passed: Set[Tuple[str, int]] = {(e.get("file"), e.get("line")) for e in after.events
                                    if e.get("e") == "backward" and e.get("error") is None}
    parsed: Dict[str, Optional[tuple]] = {}
    out: Dict[Tuple[str, int], Finding] = {}
    for record in before.scalar_gradients:
        file = record.get("file")
        line = lines.line(file, record.get("line")) if file else None
        if line is None or (file, line) in passed or (file, line) in out:
            continue
        if file not in parsed:
            parsed[file] = _parse(os.path.join(lines.work_root, file))
        if parsed[file] is None:
            continue
        src, tree = parsed[file]
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and node.lineno == line
                 and isinstance(node.func, ast.Attribute) and node.func.attr in ("backward", "grad")
                 and (node.args or node.keywords)]
        if not calls:
            continue  # rewritten or gone
        shown = src.segment(calls[0]) if len(calls) == 1 else record.get("text") or "backward(...)"
        out[(file, line)] = Finding(
            "scalar-gradient", file, line,
            f"`{shown}` at {file}:{line} gives a one-element value (shape (1,) in 0.3, no dimension "
            f"today) a gradient of shape (1,): `Mismatch in shape` since PyTorch 0.4; make the gradient "
            f"0-dim where it is made (`torch.tensor(1.)` for `torch.FloatTensor([1])`, VF403)")
    return sorted(out.values(), key=lambda f: (f.file, f.line))
