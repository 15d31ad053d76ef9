"""Helpers across the files of one run (SPEC §2.6, "later the same package").

A legacy helper threads the volatile flag: `data.py` defines
`get_batch(source, i, evaluation=False)` creating `Variable(..., volatile=evaluation)`, and
`main.py` calls `get_batch(val_data, i, evaluation=True)`. Each file alone is undecidable:
the helper does not know its callers, the caller holds no `volatile` at all. The index
links them before the per-file analysis runs:

1. **Helpers.** Candidate files whose bytes may define one (a `volatile=<name>` keyword, or
   a `Variable(*args, **kwargs)` forwarder) are analysed once; the module-level functions
   whose parameter reaches `volatile=` (directly or through another such function) and the
   module-level wrappers of `Variable` are the helpers.
2. **Callers.** Every other Python file of the run that mentions a helper's name is parsed;
   its calls that resolve to a helper -- by absolute import from a directory that holds
   both files (scripts importing a sibling module, a package imported from the project
   root) or by relative import inside a package -- are recorded with the flag they pass.
3. **Contexts.** A caller gets the signatures it imports (`ModuleContext.helpers`): its true
   flags become volatile sources placed with the §2 rules in the caller. A helper's file
   gets its calls in other files (`ModuleContext.external_calls`): it is unwrapped only
   when some caller in the run passes a true flag, and the diagnostic names them.

Only the files of the run are linked: run volfix on the whole project (as CI does) to
follow every caller. Notebooks calling a helper module are not linked yet.
"""
from __future__ import annotations

import ast
import hashlib
import os
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from .analysis.imports import METHOD_PREFIX

from .prefilter import HELPER_HINT

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class HelperSignature:
    """A function (or wrapper) of another file whose parameter `param` becomes `volatile=`."""

    name: str
    path: str  # as shown to the user
    line: int
    param: Optional[str]  # None: forwards *args/**kwargs to Variable (a wrapper)
    positional: Tuple[str, ...] = ()
    defaults: Tuple[Tuple[str, str], ...] = ()  # param -> "true" | "false" | "none" | "expr"


@dataclass(frozen=True)
class ExternalCall:
    """A call of this file's helper in another file of the run."""

    path: str
    line: int
    flag: str  # "true" | "false" | "none" | "expr" | "unknown"
    covered: bool  # already inside a grad-mode region there


@dataclass(frozen=True)
class Links:
    """One file's links to the others."""

    helpers: Tuple[Tuple[str, HelperSignature], ...] = ()  # qualified name -> signature
    external_calls: Tuple[Tuple[str, Tuple[ExternalCall, ...]], ...] = ()

    def digest(self) -> bytes:
        """For the result cache: a file's result depends on its links."""
        return hashlib.sha256(repr((self.helpers, self.external_calls)).encode()).digest()


def link(files: Sequence[str], data: Dict[str, Optional[bytes]], display: Dict[str, str],
         read=None) -> Dict[str, Links]:
    """The links of every file of the run that has any. `data` holds the bytes already read
    (the prefilter's candidates); `read(path)` reads the others when callers are looked for,
    and the bytes of the callers found that way are added to `data` (read once)."""
    helper_files: Dict[str, List[HelperSignature]] = {}
    for path in files:
        raw = data.get(path)
        if raw is None or not path.endswith((".py", ".pyi")) or not HELPER_HINT.search(raw):
            continue
        found = _helpers_of(raw, display.get(path, path))
        if found:
            helper_files[path] = found
    if not helper_files:
        return {}
    names = {_short(sig.name).encode() for sigs in helper_files.values() for sig in sigs}
    # A method is followed by its name only when one class of the run defines it.
    method_defs: Dict[str, int] = {}
    for sigs in helper_files.values():
        for sig in sigs:
            if sig.name.startswith(METHOD_PREFIX):
                method_defs[sig.name] = method_defs.get(sig.name, 0) + 1
    calls: Dict[str, Dict[str, List[ExternalCall]]] = {}
    out: Dict[str, Links] = {}
    for path in files:
        if not path.endswith((".py", ".pyi")):
            continue
        raw = data.get(path)
        if raw is None and read is not None:
            raw = read(path)
        if raw is None or not any(name in raw for name in names):
            continue
        quals = _reachable(path, helper_files)
        methods = {sig.name: (helper_path, sig) for helper_path, sigs in helper_files.items()
                   if os.path.abspath(helper_path) != os.path.abspath(path)
                   for sig in sigs if method_defs.get(sig.name) == 1}
        if not quals and not methods:
            continue
        used = _calls_in(raw, quals, methods, display.get(path, path))
        if used is None:
            continue
        imported: Dict[str, HelperSignature] = {}
        for qual, (helper_path, sig), call in used:
            imported[qual] = sig
            calls.setdefault(helper_path, {}).setdefault(sig.name, []).append(call)
        if imported:
            out[path] = Links(helpers=tuple(sorted(imported.items())))
            data[path] = raw
    for helper_path, by_name in calls.items():
        external = tuple(sorted((name, tuple(sorted(cs, key=lambda c: (c.path, c.line))))
                                for name, cs in by_name.items()))
        previous = out.get(helper_path, Links())
        out[helper_path] = Links(helpers=previous.helpers, external_calls=external)
    for helper_path in helper_files:
        # A helper file with no caller elsewhere still runs in project mode: its diagnostic
        # then says that no call *in the run* passes a true flag.
        out.setdefault(helper_path, Links(external_calls=()))
    return out


def _short(name: str) -> str:
    return name[len(METHOD_PREFIX):] if name.startswith(METHOD_PREFIX) else name


def _parse(raw: bytes) -> Optional[Tuple[str, ast.Module]]:
    from . import sourcefile
    from .analysis.async_kw import PLACEHOLDER, find_async_keywords, replace_keywords

    try:
        text = sourcefile.decode_source(raw).text
        masked = replace_keywords(text, find_async_keywords(text), PLACEHOLDER)
        return masked, ast.parse(masked)
    except (sourcefile.SourceDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _helpers_of(raw: bytes, shown: str) -> List[HelperSignature]:
    from .analysis.legacy import LegacyAnalysis

    parsed = _parse(raw)
    if parsed is None:
        return []
    text, tree = parsed
    analysis = LegacyAnalysis(text, tree, external_calls={})
    try:
        analysis.run()
    except RecursionError:
        return []
    defs = {stmt.name: stmt for stmt in tree.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))}
    methods: Dict[str, List[ast.AST]] = {}
    for cls in (stmt for stmt in tree.body if isinstance(stmt, ast.ClassDef)):
        for stmt in cls.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                methods.setdefault(stmt.name, []).append(stmt)
    out = []
    for name, param in analysis.exported.items():
        if name.startswith(METHOD_PREFIX):
            found = methods.get(name[len(METHOD_PREFIX):], [])
            if len(found) == 1:  # one class of this file defines it
                out.append(_signature(found[0], shown, param, method=True))
            continue
        fn = defs.get(name)
        if fn is not None:
            out.append(_signature(fn, shown, param))
    for name, line in analysis.variable_wrappers().items():
        if line:
            out.append(HelperSignature(name, shown, line, None))
    return out


def _signature(fn: ast.AST, shown: str, param: str, method: bool = False) -> HelperSignature:
    from .analysis.legacy import bound_positional, flag_kind, parameter_defaults

    # "expr" for a default computed at run time ("unknown" is never a default's kind).
    defaults = {name: flag_kind(node) for name, node in parameter_defaults(fn).items()}
    name = (METHOD_PREFIX if method else "") + fn.name  # type: ignore[attr-defined]
    return HelperSignature(name, shown, fn.lineno, param, tuple(bound_positional(fn, method)),  # type: ignore[attr-defined]
                           tuple(sorted(defaults.items())))


def module_names(target: str, importer: str) -> List[str]:
    """How `importer` can name the module in file `target`: absolute dotted names from every
    directory holding both files, and relative names (`.utils`, `..pkg.utils`) from the
    importer's package."""
    target = os.path.abspath(target)
    importer = os.path.abspath(importer)
    stem, _ = os.path.splitext(target)
    parts = stem.split(os.sep)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    importer_dir = os.path.dirname(importer).split(os.sep)

    def inside(base: int) -> bool:  # is parts[:base] a directory holding the importer?
        return base <= len(importer_dir) and parts[:base] == importer_dir[:base]

    out: List[str] = []
    # Absolute: from each directory that also holds the importer (sys.path[0] when it runs
    # as a script, or the project root it is run from), nearest first.
    for base in range(len(parts) - 1, 0, -1):
        rel = parts[base:]
        if inside(base) and all(_IDENTIFIER.match(p) for p in rel):
            out.append(".".join(rel))
    # Relative: level 1 is the importer's own package (`from . import f` names __init__).
    for level in range(1, len(importer_dir)):
        base = len(importer_dir) - (level - 1)
        rel = parts[base:]
        if base <= len(parts) and inside(base) and all(_IDENTIFIER.match(p) for p in rel):
            out.append("." * level + ".".join(rel))
    return out


def _reachable(path: str, helper_files: Dict[str, List[HelperSignature]]
               ) -> Dict[str, Tuple[str, HelperSignature]]:
    """Qualified names (as `imports.qualified_name` spells them) under which `path` may call
    a helper of another file."""
    out: Dict[str, Tuple[str, HelperSignature]] = {}
    for helper_path, sigs in helper_files.items():
        if os.path.abspath(helper_path) == os.path.abspath(path):
            continue
        for module in module_names(helper_path, path):
            for sig in sigs:
                if sig.name.startswith(METHOD_PREFIX):
                    continue
                # `from . import f` -> '.f'; `from .utils import f` -> '.utils.f'
                qual = module + sig.name if not module.strip(".") else f"{module}.{sig.name}"
                # The nearest definition wins (names are tried nearest first).
                out.setdefault(qual, (helper_path, sig))
    return out


def _calls_in(raw: bytes, quals: Dict[str, Tuple[str, HelperSignature]],
              methods: Dict[str, Tuple[str, HelperSignature]], shown: str
              ) -> Optional[List[Tuple[str, Tuple[str, HelperSignature], ExternalCall]]]:
    from .analysis.legacy import LegacyAnalysis, flag_kind, signature_argument

    parsed = _parse(raw)
    if parsed is None:
        return None
    text, tree = parsed
    analysis = LegacyAnalysis(text, tree)
    # A method name this file defines as well is ambiguous here.
    defined = {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    out = []
    for call in analysis.calls:
        qual = analysis.qual(call.func)
        if qual is not None and qual in quals:
            helper_path, sig = quals[qual]
        elif (isinstance(call.func, ast.Attribute) and METHOD_PREFIX + call.func.attr in methods
              and call.func.attr not in defined and (qual is None or not qual.startswith("torch"))):
            qual = METHOD_PREFIX + call.func.attr
            helper_path, sig = methods[qual]
        else:
            continue
        if sig.param is None:
            kw = next((k for k in call.keywords if k.arg == "volatile"), None)
            arg, known = (kw.value if kw is not None else None), True
        else:
            arg, known = signature_argument(call, sig)
        flag = flag_kind(arg, known)
        covered = analysis.covered(call, analysis.scope_of(call), any_grad_mode=flag == "expr")
        out.append((qual, (helper_path, sig), ExternalCall(shown, call.lineno, flag, covered)))
    return out


def context_for(links: Optional[Links]):
    """The engine's ModuleContext for a file with these links (None: no links)."""
    if links is None:
        return None
    from .engine import ModuleContext

    return ModuleContext(helpers=dict(links.helpers), external_calls=dict(links.external_calls))
