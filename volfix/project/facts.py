"""What the project index learns about one file, cached by the file's content (`volfix.project.index`).

Linking a project costs a full analysis of every file that may define a helper and a parse of
every file that may call one: on a 700-file legacy tree, more than the per-file analyses
themselves. Both are facts about one file's bytes, so both are stored in the result cache
(`volfix.run.cache`) next to the results, and a warm run, or a pre-commit run that changed two
files, recomputes only what changed:

- a file's **helpers** depend on its bytes alone;
- a file's **calls of helpers** depend on its bytes and on the helpers it can reach (their
  names, modules and signatures): `calls_key` digests those;
- a file's **grad-mode functions** (`flow.grad_mode.GradShim`: `def no_grad_context(): return
  torch.no_grad() if IS_TORCH_04 else ...`) depend on its bytes alone;
- which of them a file **calls in a `with`** depends on its bytes and on the project's
  grad-mode functions (`shims_key`);
- what a file's **functions, classes' instances and methods return** (`flow.returns.returns_facts`:
  one element, a list of them, a tuple with a one-element item) and the names it imports
  (another file may import them from it), and which of those of other files a VF401 read
  **asks** about (`flow.returns.asked_returns`), depend on its bytes alone;
- a project's **links** (`project.Links` of every file of the run) depend on the bytes of
  all its Python files, which of them the run holds and how they are shown: `links_key`
  digests those, so a warm run over an unchanged project does no linking work at all.

Display paths and "is the file part of this run" are never stored: they depend on the run,
and are filled in when an entry is read.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..flow.grad_mode import GradShim
from ..syntax.names import LOCAL, ModuleNames

FACTS_FORMAT = 15  # bump when an entry's layout changes
VOLATILE_PARAM = "volatile-param:"  # `Links.external_calls` key: calls passing `volatile=` to a def
# `Links.external_calls` key of a caller: the defs of that name in the project's other files whose
# `volatile` parameter has no default (`ExternalCall.path`/`line`: the def).
REQUIRED_VOLATILE = "volatile-required:"


@dataclass(frozen=True)
class HelperSignature:
    """A function (or wrapper) of another file whose callers decide about volatility."""

    name: str  # function name, or METHOD_PREFIX + method name
    path: str  # as shown to the user
    line: int
    param: Optional[str]  # the flag parameter; None: always volatile (or a wrapper)
    negated: bool = False  # volatile when the parameter is false (`volatile=not for_training`)
    wrapper: bool = False  # forwards *args/**kwargs to Variable: callers' `volatile=` keywords count
    computes: bool = False  # computes with the value itself: a call passing a true flag records
    positional: Tuple[str, ...] = ()
    defaults: Tuple[Tuple[str, str], ...] = ()  # param -> "true" | "false" | "none" | "expr"


@dataclass(frozen=True)
class ExternalCall:
    """A call of a file's helper in another file of the project."""

    path: str
    line: int
    flag: str  # "true" | "false" | "none" | "expr" | "unknown" (already negated for the helper)
    covered: bool  # already inside a grad-mode region there
    in_run: bool  # the file is part of this run (its region will be placed)
    col: int = 0

HOP = "hop"  # ExternalCall.flag of a same-file call that only passes its caller's flag on

# A file's call of a helper: (qualified name as called, helper file, helper signature name,
# line, column, flag kind, covered by a grad-mode region, the caller's own derived helper).
CallFact = Tuple[str, str, str, int, int, str, bool, Optional[Any]]


def signature_to_json(sig) -> list:
    return [sig.name, sig.line, sig.param, sig.negated, sig.wrapper, sig.computes,
            list(sig.positional), [list(d) for d in sig.defaults]]


def signature_from_json(raw: Any, shown: str):
    name, line, param, negated, wrapper, computes, positional, defaults = raw
    if not (isinstance(name, str) and isinstance(line, int) and (param is None or isinstance(param, str))):
        raise TypeError("not a helper signature")
    return HelperSignature(name, shown, line, param, bool(negated), bool(wrapper), bool(computes),
                           tuple(str(p) for p in positional), tuple((str(k), str(v)) for k, v in defaults))


@dataclass(frozen=True)
class Links:
    """One file's links to the rest of the project."""

    helpers: Tuple[Tuple[str, HelperSignature], ...] = ()  # qualified name -> signature
    external_calls: Tuple[Tuple[str, Tuple[ExternalCall, ...]], ...] = ()
    star_bindings: Tuple[Tuple[str, Tuple[Tuple[str, str], ...]], ...] = ()  # module -> bindings
    star_exported: bool = False  # another file star-imports this module
    project_wide: bool = True
    # Grad-mode functions of other files the file enters (`with utils.maybe_no_grad():`), by
    # the name its index resolves the call to (a bare name for a star import).
    grad_shims: Tuple[Tuple[str, GradShim], ...] = ()
    # What functions, classes' instances and methods of other files return (`flow.scalars`:
    # `Cls()()`, `Cls().method`), by the qualified name the file calls them.
    scalar_returns: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    # The file reads `x.volatile` without naming torch, and another file of its project imports
    # torch: the attribute is a tensor's flag (`rules.context.RuleContext.tensor_file`).
    torch_project: bool = False
    # Attributes the file keys by a tensor element (`lang.index2word[ni]`) that the project's
    # other files assign dicts only (`project.dict_attributes`, VF405).
    dict_attributes: Tuple[str, ...] = ()
    # The file's functions and methods another file of the project calls, each with a call
    # ("path:line"): a region's output they return leaves for code volfix does not see
    # (`project.callers_elsewhere`).
    called_elsewhere: Tuple[Tuple[str, str], ...] = ()

    def external_calls_of(self, key: str) -> Tuple[ExternalCall, ...]:
        return dict(self.external_calls).get(key, ())

    def helper_map(self) -> Dict[str, HelperSignature]:
        return dict(self.helpers)

    def bind_star_imports(self, module_names: ModuleNames) -> None:
        """Resolve `from .torch_imports import *` to what that project module binds."""
        for module, bindings in self.star_bindings:
            row = 0
            for name, qual in bindings:
                if not module_names.bound(name) or all(q == LOCAL for q in module_names.every(name)):
                    module_names.set(name, row, qual)

    def digest(self) -> bytes:
        """For the result cache: a file's result depends on its links."""
        return hashlib.sha256(repr((self.helpers, self.external_calls, self.star_bindings,
                                    self.star_exported, self.grad_shims, self.scalar_returns,
                                    self.torch_project, self.dict_attributes, self.called_elsewhere)).encode()).digest()


class FactStore:
    """The index's per-file facts in a `ResultCache` (or nowhere: `cache=None`)."""

    def __init__(self, cache) -> None:
        self.cache = cache

    def _key(self, kind: str, path: str, data: bytes, extra: str = "") -> str:
        return self.cache.key(path, data, f"facts-{FACTS_FORMAT}-{kind}", extra)

    # ------------------------------------------------------------------ helpers
    def helpers(self, path: str, data: bytes, shown: str) -> Optional[list]:
        if self.cache is None:
            return None
        raw = self.cache.get_json(self._key("helpers", path, data))
        if not isinstance(raw, list):
            return None
        try:
            return [signature_from_json(item, shown) for item in raw]
        except (TypeError, ValueError):
            return None

    def put_helpers(self, path: str, data: bytes, sigs: Sequence) -> None:
        if self.cache is not None:
            self.cache.put_json(self._key("helpers", path, data), [signature_to_json(s) for s in sigs])

    # ------------------------------------------------------------------ calls
    def calls(self, path: str, data: bytes, reach: str, shown: str, in_run: bool
              ) -> Optional[List[Tuple[str, str, str, Any, Any]]]:
        """(qual, helper path, signature name, ExternalCall, derived signature or None) for
        every call of a reachable helper in the file, or None on a miss."""
        if self.cache is None:
            return None
        raw = self.cache.get_json(self._key("calls", path, data, reach))
        if not isinstance(raw, list):
            return None
        out = []
        try:
            for qual, helper_path, sig_name, line, col, flag, covered, through in raw:
                call = ExternalCall(shown, int(line), str(flag), bool(covered), in_run, int(col))
                derived = signature_from_json(through, shown) if through is not None else None
                out.append((str(qual), str(helper_path), str(sig_name), call, derived))
        except (TypeError, ValueError):
            return None
        return out

    # ------------------------------------------------------------------ grad-mode functions
    def shims(self, path: str, data: bytes, extra: str) -> Optional[List[GradShim]]:
        """The grad-mode functions a file defines (None: a miss); `extra`: what it was read
        with besides its bytes (the torch names its star imports bind)."""
        if self.cache is None:
            return None
        raw = self.cache.get_json(self._key("shims", path, data, extra))
        if not isinstance(raw, list):
            return None
        try:
            return [GradShim.from_json(item) for item in raw]
        except (TypeError, ValueError):
            return None

    def put_shims(self, path: str, data: bytes, extra: str, shims: Sequence[GradShim]) -> None:
        if self.cache is not None:
            self.cache.put_json(self._key("shims", path, data, extra), [s.to_json() for s in shims])

    def shim_uses(self, path: str, data: bytes, reach: str) -> Optional[List[Tuple[str, str, str]]]:
        """(name as the file calls it, defining file, function name) for every grad-mode
        function of another file the file enters, or None on a miss."""
        if self.cache is None:
            return None
        raw = self.cache.get_json(self._key("shim-uses", path, data, reach))
        if not isinstance(raw, list) or not all(
                isinstance(r, list) and len(r) == 3 and all(isinstance(x, str) for x in r) for r in raw):
            return None
        return [tuple(r) for r in raw]  # type: ignore[misc]

    def put_shim_uses(self, path: str, data: bytes, reach: str, uses: Sequence[Tuple[str, str, str]]) -> None:
        if self.cache is not None:
            self.cache.put_json(self._key("shim-uses", path, data, reach), [list(u) for u in uses])

    # ------------------------------------------------------------------ what calls return (VF401)
    def returns(self, path: str, data: bytes) -> Optional[Tuple[Dict[str, Tuple[str, ...]], Dict[str, str]]]:
        """What a file's functions, instances and methods return, and the names it imports
        (name -> qualified name), or None on a miss."""
        if self.cache is None:
            return None
        raw = self.cache.get_json(self._key("returns", path, data))
        try:
            returns, imported = raw  # type: ignore[misc]
            return (dict(_returns_from_json(returns)),
                    {str(name): str(qual) for name, qual in imported})
        except (TypeError, ValueError):
            return None

    def put_returns(self, path: str, data: bytes, returns: Dict[str, Tuple[str, ...]],
                    imported: Dict[str, str]) -> None:
        if self.cache is not None:
            self.cache.put_json(self._key("returns", path, data),
                                [[[k, list(v)] for k, v in sorted(returns.items())], sorted(imported.items())])

    def returns_asked(self, path: str, data: bytes) -> Optional[List[str]]:
        """The returns of other files' functions a file's VF401 reads ask about (None: a miss)."""
        return self._strings("returns-asked", path, data)

    def put_returns_asked(self, path: str, data: bytes, keys: Sequence[str]) -> None:
        self._put_strings("returns-asked", path, data, keys)

    # ------------------------------------------------------------------ star imports
    def stars(self, path: str, data: bytes) -> Optional[List[str]]:
        """The modules the file star-imports, as it spells them (None: a miss)."""
        return self._strings("stars", path, data)

    def put_stars(self, path: str, data: bytes, modules: Sequence[str]) -> None:
        self._put_strings("stars", path, data, modules)

    def _strings(self, kind: str, path: str, data: bytes) -> Optional[List[str]]:
        """A list of strings stored for the file under `kind` (None: a miss, or not such a list)."""
        if self.cache is None:
            return None
        raw = self.cache.get_json(self._key(kind, path, data))
        if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
            return None
        return raw

    def _put_strings(self, kind: str, path: str, data: bytes, items: Sequence[str]) -> None:
        if self.cache is not None:
            self.cache.put_json(self._key(kind, path, data), list(items))

    # ------------------------------------------------------------------ links
    def links(self, anchor: str, key: str) -> Optional[Dict[str, Any]]:
        """A project's links (path -> `project.Links`) as `put_links` stored them, or None."""
        if self.cache is None:
            return None
        raw = self.cache.get_json(self.cache.key(anchor, b"", f"facts-{FACTS_FORMAT}-links", key))
        if not isinstance(raw, dict):
            return None
        try:
            return {str(path): Links(tuple((str(q), _signature_from_list(s)) for q, s in helpers),
                                     tuple((str(n), tuple(_call_from_list(c) for c in calls)) for n, calls in external),
                                     tuple((str(m), tuple((str(a), str(b)) for a, b in binds)) for m, binds in stars),
                                     bool(exported), bool(wide),
                                     tuple((str(n), GradShim.from_json(g)) for n, g in shims),
                                     _returns_from_json(returns), bool(torch_project),
                                     tuple(str(name) for name in dicts),
                                     tuple((str(name), str(site)) for name, site in elsewhere))
                    for path, (helpers, external, stars, exported, wide, shims, returns, torch_project, dicts,
                               elsewhere) in raw.items()}
        except (TypeError, ValueError):
            return None

    def put_links(self, anchor: str, key: str, links: Dict[str, Any]) -> None:
        if self.cache is None:
            return
        entry = {path: [[[q, _signature_to_list(s)] for q, s in link.helpers],
                        [[n, [_call_to_list(c) for c in calls]] for n, calls in link.external_calls],
                        [[m, [list(b) for b in binds]] for m, binds in link.star_bindings],
                        link.star_exported, link.project_wide,
                        [[n, g.to_json()] for n, g in link.grad_shims],
                        [[n, list(shape)] for n, shape in link.scalar_returns], link.torch_project,
                        list(link.dict_attributes), [list(c) for c in link.called_elsewhere]]
                 for path, link in links.items()}
        self.cache.put_json(self.cache.key(anchor, b"", f"facts-{FACTS_FORMAT}-links", key), entry)

    def put_calls(self, path: str, data: bytes, reach: str, found: Sequence[Tuple[str, str, Any, Any, Any]]) -> None:
        if self.cache is None:
            return
        entry = [[qual, helper_path, sig.name, call.line, call.col, call.flag, call.covered,
                  signature_to_json(through) if through is not None else None]
                 for qual, helper_path, sig, call, through in found]
        self.cache.put_json(self._key("calls", path, data, reach), entry)


def _returns_from_json(raw: Any) -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
    out = []
    for key, shape in raw:
        if not isinstance(key, str) or not isinstance(shape, list):
            raise TypeError("not a return fact")
        out.append((key, tuple(str(s) for s in shape)))
    return tuple(out)


def _signature_to_list(sig) -> list:
    return [sig.path] + signature_to_json(sig)


def _signature_from_list(raw: Any) -> HelperSignature:
    if not isinstance(raw, list) or not raw or not isinstance(raw[0], str):
        raise TypeError("not a helper signature")
    return signature_from_json(raw[1:], raw[0])


def _call_to_list(call: ExternalCall) -> list:
    return [call.path, call.line, call.flag, call.covered, call.in_run, call.col]


def _call_from_list(raw: Any) -> ExternalCall:
    path, line, flag, covered, in_run, col = raw
    if not isinstance(path, str):
        raise TypeError("not a call")
    return ExternalCall(path, int(line), str(flag), bool(covered), bool(in_run), int(col))


def links_key(files: Sequence[Tuple[str, Optional[str], bool, Optional[bytes]]], project_wide: bool,
              cwd: Optional[str] = None) -> str:
    """A digest of what a project's links depend on: every file's path, how it is shown (or
    the directory display paths are relative to), whether the run holds it, and its version
    (`ProjectIndex.version_of`; None: unreadable)."""
    h = hashlib.sha256(repr((FACTS_FORMAT, project_wide, cwd)).encode("utf-8", "surrogateescape"))
    for path, shown, in_run, version in files:
        h.update(repr((path, shown, in_run, version)).encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def calls_key(helpers: Dict[str, List[Any]], methods: Dict[str, List[Tuple[str, Any]]]) -> str:
    """A digest of the project's helpers (path -> signatures): with a file's directory, it
    decides what the file can reach, so it is part of its calls' cache key."""
    h = hashlib.sha256()
    for path in sorted(helpers):
        h.update(repr((path, [signature_to_json(s) for s in helpers[path]])).encode("utf-8", "surrogateescape"))
    h.update(repr(sorted(methods)).encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def shims_key(shims: Dict[str, List[GradShim]]) -> str:
    """A digest of the project's grad-mode functions (path -> functions): with a file's
    directory, it decides which of them the file can enter."""
    h = hashlib.sha256()
    for path in sorted(shims):
        h.update(repr((path, [g.to_json() for g in shims[path]])).encode("utf-8", "surrogateescape"))
    return h.hexdigest()
