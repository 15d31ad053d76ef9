"""The text of a flag's negation, for `torch.set_grad_enabled(<not flag>)` (SPEC §2, step 5):
`not not x` is `x`, `not (a == b)` is `a != b`, and De Morgan's rewrite of a `not a and not b`."""
from __future__ import annotations

import ast
from typing import Optional

from ..findings import Flag
from ..flow.booleans import known_bool


_NEGATED = {ast.Eq: "!=", ast.NotEq: "==", ast.In: "not in", ast.NotIn: "in", ast.Is: "is not",
            ast.IsNot: "is", ast.Lt: ">=", ast.GtE: "<", ast.Gt: "<=", ast.LtE: ">"}


def negate(flag: Flag, segment, index=None) -> str:
    """`not <flag>`, simplified: `not not x` -> `x`, `not (a == b)` -> `a != b`, `not (not a and
    not b)` -> `a or b`. A flag that is already a negation of a parameter at a call site
    (`Flag.negated`) is spelled as given. `set_grad_enabled` takes a bool and nothing else, so
    a simplified flag that is not certainly one (`known_bool`) is spelled `bool(x)`."""
    node = flag.node
    if flag.negated:
        return flag.text if known_bool(index, node) else f"bool({flag.text})"
    if flag.text != segment(node):  # substituted at a call site: spelled as text
        return f"not ({flag.text})" if " " in flag.text.strip() else f"not {flag.text}"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = node.operand
        if isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.Not):
            return f"not {segment(inner.operand)}"
        if not known_bool(index, inner):
            return f"bool({segment(inner)})"
    simplified = _negated_operand(node, segment)  # `not x` -> `x`, `a == b` -> `a != b`
    if simplified is not None:
        return simplified
    if isinstance(node, ast.BoolOp):
        parts = [_negated_operand(v, segment) for v in node.values]
        if all(p is not None for p in parts):
            joined = (" or " if isinstance(node.op, ast.And) else " and ").join(parts)  # type: ignore[arg-type]
            plain = all(isinstance(v, ast.Compare) or known_bool(index, v.operand) for v in node.values)  # type: ignore[attr-defined]
            return joined if plain else f"bool({joined})"
    if isinstance(node, (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr, ast.Compare)):
        return f"not ({flag.text})"
    return f"not {flag.text}"


def _negated_operand(node: ast.AST, segment) -> Optional[str]:
    """`not x` -> `x`, `a is None` -> `a is not None` (a flag's negation, and each operand of
    De Morgan's rewrite); None for anything else."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = node.operand
        text = segment(inner)
        return f"({text})" if isinstance(inner, (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)) else text
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _NEGATED:
        return f"{segment(node.left)} {_NEGATED[type(node.ops[0])]} {segment(node.comparators[0])}"
    return None
