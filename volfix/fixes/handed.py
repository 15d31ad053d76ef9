"""A value handed to a method of an object of a class volfix cannot see (another file's), and
the object asked to compute again later, outside the region (SPEC §2.10).

`q_bot.observe(-1, caption=caption)` then `q_bot.predict_image()` (visdial-rl): if `observe`
kept the caption on the bot, 0.3 computed the prediction volatile too, and a region around the
`observe` call alone leaves it recording. The taint notes such calls (`TaintResult.handed`);
a later method call on the object outside the region makes the fix unsafe, with this note.
"""
from __future__ import annotations

import ast
from typing import Optional

from ..flow.taint_expressions import REPORTING
from ..flow.values import key_of


def handed_on(index, group) -> Optional[str]:
    """The value handed to a method of an object of a class volfix cannot see
    (`q_bot.observe(-1, caption=c)`), and the object used again after that outside the
    region (`q_bot.predict_image()`): if the object kept the value, 0.3 computed that
    volatile too, and the region does not cover it."""
    runs = group.placement.runs if group.placement else []
    for stmt, key, what in group.taint.handed if group.taint else ():
        name, _, attr = key.rpartition(".")
        nodes = index.attributes.get(attr, ()) if name else index.names.get(key, ())
        for node in nodes:
            if not isinstance(node.ctx, ast.Load) or node.lineno <= stmt.end_lineno \
                    or index.function_of(node) is not group.scope or (name and key_of(node) != key):
                continue
            method = index.parents.get(node)
            call = index.parents.get(method)
            if not (isinstance(method, ast.Attribute) and method.value is node and isinstance(call, ast.Call)
                    and call.func is method and method.attr not in REPORTING):
                continue  # only a later method call on the object computes with what it keeps
            if any(r.holds(node) for r in runs):
                continue
            return (f"unsafe fix: the value is handed to `{what}()` (line {stmt.lineno}), which may keep "
                    f"it on `{key}`; what `{key}` computes later (line {node.lineno}) stays outside the region, "
                    "where 0.3 kept it volatile too")
    return None
