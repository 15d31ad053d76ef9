"""Version gates (`if hasattr(torch, "no_grad"): ... else: ...`): recognising their tests, and
folding a gate that a new region holds into the branch both of its sides run; and a plain
grad-disabling `with` that a new region holds (`with torch.no_grad():`, the project's
`with utils.maybe_no_grad():`) into its body."""
from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from .edits import TextEdit
from ..flow import grad_mode

_VERSION_WORDS = ("no_grad", "__version__", "set_grad_enabled", "inference_mode")


def mentions_version(index, test: ast.AST, depth: int = 0) -> bool:
    """A version test: `hasattr(torch, "no_grad")`, `torch.__version__ >= "0.4"`, or a name
    bound to one (`IS_TORCH_04 = hasattr(torch, "no_grad")`)."""
    for node in ast.walk(test):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in _VERSION_WORDS:
            return True
        if isinstance(node, ast.Attribute) and (node.attr in _VERSION_WORDS or _names_torch_version(node.attr)):
            return True  # `cfg.PYTORCH_VERSION_LESS_THAN_040` (Detectron.pytorch's config) too
        if isinstance(node, ast.Name) and _names_torch_version(node.id):
            return True
        if isinstance(node, ast.Name) and depth < 2:
            if any(mentions_version(index, v, depth + 1) for v in grad_mode.bound_values(index, node)):
                return True
    return False


def _names_torch_version(name: str) -> bool:
    """A flag named for torch's version (`PYTORCH_VERSION_LESS_THAN_040`, `torch_version_ge_04`)."""
    lowered = name.lower()
    return "version" in lowered and "torch" in lowered


# What a version test may call: conversions of the version string and its pieces, and the
# version parsers (`int(torch.__version__[2])`, `LooseVersion(torch.__version__) >= "0.4"`).
_VERSION_READERS = frozenset(("int", "float", "str", "tuple", "list", "map", "len", "hasattr",
                              "LooseVersion", "StrictVersion", "Version", "parse"))
_STRING_READERS = frozenset(("split", "startswith", "endswith", "strip", "lstrip", "rstrip", "replace",
                             "partition", "lower", "LooseVersion", "StrictVersion", "Version", "parse"))


def reads_version_only(index, test: ast.AST) -> bool:
    """A version test that only reads (`int(version[0]) > 0 or int(version[2]) > 3` with
    `version = torch.__version__`): whichever branch it picks, evaluating it does nothing else,
    so when both branches became the same statements the test may go."""
    if not mentions_version(index, test):
        return False
    for node in ast.walk(test):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            allowed = _VERSION_READERS if isinstance(func, ast.Name) else _STRING_READERS
            if name not in allowed or node.keywords:
                return False
        elif isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Lambda, ast.comprehension)):
            return False
    return True


def absorb_gates(ctx, placement) -> List[TextEdit]:
    """An old version gate the new region holds (`if torch.__version__.startswith('0.4'):
    with torch.no_grad(): X` / `else: X`): inside the region both branches do the same, so
    the gate becomes X, not a `with torch.no_grad():` nested in the new one. The test only
    reads versions, so dropping it changes nothing that runs."""
    edits: List[TextEdit] = []
    done: List[Tuple[int, int]] = []
    src = ctx.src
    for run in placement.runs:
        for stmt in run.statements:
            for node in ast.walk(stmt):
                if isinstance(node, ast.With) and node is not stmt and _redundant_with(ctx, node):
                    start, end = src.start(node), src.end(node)
                    if any(a <= start < b for a, b in done):
                        continue
                    edit = _as_statements(ctx, node, node.body, start, end)
                    if edit is not None:
                        edits.append(edit)
                        done.append((start, end))
                    continue
                if not (isinstance(node, ast.If) and node.orelse and mentions_version(ctx.index, node.test)):
                    continue
                start, end = src.start(node), src.end(node)
                if any(a <= start < b for a, b in done):
                    continue
                edit = _gate_as_branch(ctx, node, start, end)
                if edit is not None:
                    edits.append(edit)
                    done.append((start, end))
    return edits


def _gate_as_branch(ctx, gate: ast.If, start: int, end: int) -> Optional[TextEdit]:
    """The edit writing `gate` as its branch without the grad-mode `with` (None: the branches
    differ otherwise, or the text cannot be moved as it is)."""
    for gated, plain in ((gate.body, gate.orelse), (gate.orelse, gate.body)):
        inner = gated[0] if len(gated) == 1 else None
        if isinstance(inner, ast.With) and len(inner.items) == 1 and inner.items[0].optional_vars is None \
                and grad_mode.disables_grad(ctx.index, inner.items[0].context_expr) \
                and [ast.dump(s) for s in inner.body] == [ast.dump(s) for s in plain]:
            break
    else:
        return None
    return _as_statements(ctx, gate, plain, start, end)


def _redundant_with(ctx, node: ast.With) -> bool:
    """`with torch.no_grad():` (one item, no `as`) inside a new region: it changes nothing there."""
    return len(node.items) == 1 and node.items[0].optional_vars is None \
        and grad_mode.disables_grad(ctx.index, node.items[0].context_expr)


def _as_statements(ctx, gate: ast.stmt, plain: List[ast.stmt], start: int, end: int) -> Optional[TextEdit]:
    """The edit writing the statement `gate` (`start`-`end`) as the statements `plain` of one
    of its blocks, at its own indentation (None: the text cannot be moved as it is)."""
    src = ctx.src
    if any(start <= f.start < end for f in ctx.findings) or src.comments_between(start, end):
        return None  # another fix edits it, or a comment would be lost
    if any(isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes)) and n.lineno != n.end_lineno
           for s in plain for n in ast.walk(s)):
        return None  # a multi-line string's lines are its value: never re-indented
    first = plain[0].lineno
    prefix = src.line(first)[:src.char_col(first, plain[0].col_offset)]
    indent = src.line(gate.lineno)[:src.char_col(gate.lineno, gate.col_offset)]
    if prefix.strip() or indent.strip():
        return None  # a branch on the line of its `else:` or `if`
    out = []
    for line in src.text[src.line_starts[first - 1]:src.end(plain[-1])].splitlines(keepends=True):
        if not line.strip():
            out.append(line.lstrip(" \t"))
        elif line.startswith(prefix):
            out.append(indent + line[len(prefix):])
        else:
            return None
    return TextEdit(start, end, "".join(out)[len(indent):])
