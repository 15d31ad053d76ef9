"""The project index's table of helpers (by module and name) and what a helper's signature
says about a call of it; `document_of` parses a file's bytes for the per-file facts, and
`file_helpers`, `file_star_modules` find two of them (here or in a worker).
"""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from ..flow.calls import FRAMEWORK_METHODS, bound_positional, flag_kind, parameter_defaults, passed_argument
from ..flow.grad_mode import covered as grad_covered, reads_covered
from ..syntax import names as nm
from ..syntax.document import Document, parse_document
from .facts import ExternalCall, HelperSignature
from .modules import module_candidates
from .stars import has_star_import


def document_of(raw: bytes) -> Optional[Document]:
    from ..files import sourcefile

    try:
        parsed = parse_document(sourcefile.decode_source(raw).text)
    except sourcefile.SourceDecodeError:
        return None
    return parsed if isinstance(parsed, Document) else None


NameTable = Dict[str, Dict[str, Tuple[int, HelperSignature]]]  # name -> helper path -> (order, signature)


def helper_names(helpers: Dict[str, List[HelperSignature]]) -> NameTable:
    """The project's function helpers by name, then by file, with the file's position in
    `helpers` (a name two files can be imported under goes to the first: the order the
    index found them in) and its first signature of that name."""
    out: NameTable = {}
    for order, (helper_path, sigs) in enumerate(helpers.items()):
        for sig in sigs:
            if not sig.name.startswith(nm.METHOD_PREFIX):
                out.setdefault(sig.name, {}).setdefault(helper_path, (order, sig))
    return out


def helper_called(names: NameTable, module: str, name: str, importer: str
                  ) -> Optional[Tuple[str, HelperSignature]]:
    """The helper `importer` reaches as `name` of `module` (as it spells the module), by
    looking its few candidate files up (`module_candidates`)."""
    files = names.get(name)
    if not files:
        return None
    best: Optional[Tuple[int, str, HelperSignature]] = None
    for path in module_candidates(module, importer):
        hit = files.get(path)
        if hit is not None and (best is None or hit[0] < best[0]):
            best = (hit[0], path, hit[1])
    return (best[1], best[2]) if best is not None else None


def helper_of_qual(names: NameTable, qual: str, importer: str) -> Optional[Tuple[str, HelperSignature]]:
    """`helper_called` for a qualified name as the importer's index resolves a call
    (`utils.to_var`, `.to_var`, `..lib.helpers.to_variable`)."""
    head, dot, name = qual.rpartition(".")
    if not dot:
        return None
    if not head.strip("."):
        head += "."  # `.to_var`: `to_var` of the package `.`
    return helper_called(names, head, name, importer)


def describe_call(index, call: ast.Call, sig: HelperSignature, shown: str, in_run: bool):
    """(ExternalCall, a derived helper signature when the call passes its caller's own
    parameter on, else None)."""
    if sig.wrapper:
        kw = next((k for k in call.keywords if k.arg == "volatile"), None)
        arg, known = (kw.value if kw is not None else None), True
    elif sig.param is None:
        arg, known = ast.Constant(value=True), True
    else:
        arg, known = signature_argument(call, sig)
    kind = flag_kind(arg, known)
    if sig.negated:
        kind = {"true": "false", "false": "true", "none": "true"}.get(kind, kind)
    through = None
    scope = index.function_of(call)
    if kind == "expr" and isinstance(arg, ast.Name) and isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) \
            and arg.id in nm.function_params(scope):
        owner = index.parents.get(scope)
        method = isinstance(owner, ast.ClassDef)
        key = (nm.METHOD_PREFIX if method else "") + scope.name
        if not (method and scope.name in FRAMEWORK_METHODS and scope.name != "__call__"):
            through = signature(scope, key, shown, arg.id, sig.negated, method, computes=True)
    covered = grad_covered(index, call, any_grad_mode=kind == "expr") or \
        reads_covered(index, call, any_grad_mode=kind == "expr")
    return ExternalCall(shown, call.lineno, kind, covered, in_run, call.col_offset), through


def signature(fn: ast.AST, key: str, shown: str, param: Optional[str], negated: bool, method: bool,
              computes: bool = False) -> HelperSignature:
    defaults = {name: flag_kind(node) for name, node in parameter_defaults(fn).items()}
    return HelperSignature(key, shown, fn.lineno, param, negated, False, computes,  # type: ignore[attr-defined]
                           tuple(bound_positional(fn, method)), tuple(sorted(defaults.items())))


def signature_argument(call: ast.Call, sig: HelperSignature) -> Tuple[Optional[ast.AST], bool]:
    """The expression a call passes for `sig.param`: the argument, a default as a constant, or
    known=False (`*args`/`**kwargs`, a default computed at run time)."""
    arg, known = passed_argument(call, list(sig.positional), sig.param)  # type: ignore[arg-type]
    if arg is not None or not known:
        return arg, known
    default = dict(sig.defaults).get(sig.param)  # type: ignore[arg-type]
    if default in ("true", "false", "none"):
        return ast.Constant(value={"true": True, "false": False, "none": None}[default]), True
    return None, default is None


CALL_KEY = nm.METHOD_PREFIX + "__call__"


def short_name(name: str) -> str:
    return name[len(nm.METHOD_PREFIX):] if name.startswith(nm.METHOD_PREFIX) else name


def file_star_modules(raw: bytes) -> List[str]:
    """Runs here or in a worker: the modules a file star-imports, as it spells them."""
    doc = document_of(raw)
    return [] if doc is None else list(doc.index().module_names.star_modules)


def file_helpers(item: Tuple[bytes, str]) -> Tuple[List[HelperSignature], Optional[List[str]]]:
    """Runs here or in a worker: the helpers a file defines, from its own analysis by the
    engine (functions and methods whose flag or raw value goes to their callers, and
    wrappers of `Variable`); and, from the same parse, the modules it star-imports when it
    has a star import (else None)."""
    raw, shown = item
    doc = document_of(raw)
    if doc is None:
        return [], None
    from ..engine.analyse import Options, detect

    try:
        ctx = detect(doc, Options(frozenset()))
    except RecursionError:
        return [], None
    stars = list(ctx.index.module_names.star_modules) if has_star_import(raw) else None
    out: Dict[str, HelperSignature] = {}
    index = ctx.index
    for record in ctx.helpers:
        fn = record.fn
        owner = index.parents.get(fn)
        method = isinstance(owner, ast.ClassDef) and isinstance(index.parents.get(owner), ast.Module)
        if not (isinstance(owner, ast.Module) or method):
            continue
        key = (nm.METHOD_PREFIX if method else "") + fn.name
        if method and fn.name in FRAMEWORK_METHODS and not (fn.name == "__call__" and record.flag.param):
            continue  # `iterator(instances, for_training=False)` runs `DataIterator.__call__`: its callers are linked
        out.setdefault(key, signature(fn, key, shown, record.flag.param, record.flag.negated, method,
                                      computes=bool(getattr(record.source, "computing", False))))
    for name, line in ctx.wrappers().items():
        out.setdefault(name, HelperSignature(name, shown, line, None, wrapper=True))
    return list(out.values()), stars
