"""Calls of helpers of other files, as the project index finds them: the table of helpers by
module and name, a file's calls of them (parsed once per file and cached by content), and what
each call passes for the helper's flag.
"""
from __future__ import annotations

import ast
import os
from dataclasses import replace
from typing import List, Optional, Tuple

from ..files.prefilter import asks_other_files
from ..flow.helper_calls import instance_call
from ..syntax import names as nm
from ..syntax.document import Document
from .early import analyse_ahead
from .facts import HOP, ExternalCall, HelperSignature
from .helpers import CALL_KEY, NameTable, describe_call, document_of, helper_called, helper_of_qual
from .returns import asked_of
from .shims import shims_called
from .stars import has_star_import


def file_calls(item):
    """Runs here or in a worker: a file's calls of the helpers of *other* files it can reach
    (`names`: `helper_names`; `methods`: method families by name), each as
    (qual, helper path, signature, ExternalCall, the derived signature when the call passes
    its caller's own parameter on), and, from the same parse: with an `EarlyPlan` as the eighth
    item, the file's analysis (`early.analyse_ahead`) and the modules it star-imports when it
    has a star import; when the ninth is true, what its VF401 reads ask of other files
    (`file_returns_asked`) if it has any. (calls, analysis, star imports, asked), None for
    what was not asked for."""
    path, raw, shown, in_run, names, methods, shim_table, plan, ask = item
    doc = document_of(raw) if names or methods else None
    found = calls_in(doc, path, shown, in_run, names, methods, shim_table) if doc is not None else []
    if doc is None:
        return found, None, None, None
    asked = asked_of(doc, raw) if ask and asks_other_files(raw) else None
    if plan is None:
        return found, None, None, asked
    # Read before the analysis, which binds the star imports into the module's names.
    stars = list(doc.index().module_names.star_modules) if has_star_import(raw) else None
    return found, analyse_ahead(path, raw, doc, found, plan, stars or []), stars, asked


def calls_in(doc: Document, path: str, shown: str, in_run: bool, names: NameTable, methods,
             shim_table: Optional[NameTable] = None
             ) -> List[Tuple[str, str, HelperSignature, ExternalCall, Optional[HelperSignature]]]:
    """`file_calls` of a parsed file."""
    family = {k: v for k, v in methods.items() if all(os.path.abspath(h) != path for h, _ in v)}
    index = doc.index()
    if shim_table:  # a call inside `with utils.maybe_no_grad():` is covered
        index.grad_shims.update((key, shim) for key, (_, shim) in shims_called(index, path, shim_table))
    defined = {node.name for node in index.functions}
    stars = set(index.module_names.star_modules)
    out = []
    for calls in index.calls.values():
        for call in calls:
            func = call.func
            if not isinstance(func, ast.Name) and not (isinstance(func, ast.Attribute) and (
                    func.attr in names or nm.METHOD_PREFIX + func.attr in methods or CALL_KEY in family)):
                continue  # `x.cuda()`: an attribute's qualified name ends in it, and no helper is named so
            qual, target = _helper_named(index, func, names, path, stars)
            if target is not None and target[0] == path:
                target = None  # the file's own helper: its calls are its own analysis's business
            targets = [target] if target is not None else []
            if target is None and CALL_KEY in family and \
                    instance_call(index, call, {sig.param for _, sig in family[CALL_KEY]}, methods):
                qual, targets = CALL_KEY, family[CALL_KEY]  # an instance's call runs its class's `__call__`
            if target is None and not targets and isinstance(func, ast.Attribute):
                key = nm.METHOD_PREFIX + func.attr
                if key in family and func.attr not in defined and not nm.is_torch(qual):
                    # `field.as_tensor(...)` may reach any class of the run defining the method
                    qual, targets = key, family[key]
                elif key in methods:
                    # `self._yield_one_epoch(instances, for_training)` in `__call__`, a derived helper
                    # of this file: only the hop (the caller becomes a helper), never a call to place
                    for helper_path, sig in methods[key]:
                        if os.path.abspath(helper_path) == path:
                            ext, through = describe_call(index, call, sig, shown, in_run)
                            if through is not None:
                                out.append((key, helper_path, sig, replace(ext, flag=HOP), through))
            for helper_path, sig in targets:
                out.append((qual, helper_path, sig) + describe_call(index, call, sig, shown, in_run))
    out.extend(_references(index, path, shown, in_run, names, stars))
    return out


def _references(index, path: str, shown: str, in_run: bool, names: NameTable, stars: set):
    """A helper of another file named without being called there (`self.preprocess_obss =
    preprocess_obss or default_preprocess_obss`, `map(to_var, batch)`): it is called
    somewhere volfix cannot see, with a flag it cannot know; an unknown call at the name."""
    out = []
    for name in names:
        nodes = [n for n in index.names.get(name, ()) if isinstance(n.ctx, ast.Load)] + \
            [n for n in index.attributes.get(name, ()) if isinstance(n.ctx, ast.Load)]
        for node in nodes:
            parent = index.parents.get(node)
            if isinstance(parent, ast.Call) and parent.func is node:
                continue
            qual, target = _helper_named(index, node, names, path, stars)
            if target is None or target[0] == path:
                continue
            helper_path, sig = target
            call = ExternalCall(shown, node.lineno, "unknown", False, in_run, node.col_offset)
            out.append((qual, helper_path, sig, call, None))
    return out


def _helper_named(index, node: ast.AST, names: NameTable, path: str, stars: set):
    """(qualified name, (helper path, signature)) of the helper of another file `node` (a name
    or an attribute) names: through the file's imports, else a `from helpers import *`;
    (the qualified name, None) when it names none."""
    qual = index.qual(node)
    target = helper_of_qual(names, qual, path) if qual is not None else None
    if target is None and isinstance(node, ast.Name) and not index.module_names.bound(node.id):
        for module in stars:  # `from helpers import *`
            target = helper_called(names, module, node.id, path)
            if target is not None:
                return (f"{module}.{node.id}" if not module.endswith(".") else f"{module}{node.id}"), target
    return qual, target


