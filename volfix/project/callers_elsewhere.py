"""Which functions and methods of a file other files of its project call (`Links.called_elsewhere`):
a region's output returned to callers volfix does not see.

Found on quick-nlp: `Cell.one_hidden()` returns `to_gpu(Variable(..., volatile=not
self.training))`, `hidden_state()` hands it back, and `Encoder.reset()` in another file keeps
`self.rnns[l].hidden_state(bs)` for its GRU. In 0.3 the volatile state made the whole
evaluation forward volatile; the fix runs the creation under `set_grad_enabled(self.training)`
and returns a plain tensor, so the other file's forward records again. The caller check
(`flow.escapes.Follower.caller_trains`) reads the callers of this file only: a returned value
whose function another file calls makes the fix unsafe.

Only a project with a root (`discovery.ProjectRoots`) is searched: files in no project (a
folder of unmarked checkouts) would take each other's `.predict(` for calls.

Read from the bytes in the link step (a project may have thousands of files; a notebook of the
run counts by its code cells):

- the names asked are those of the run's files spelling `volatile` (where regions are placed):
  the functions and methods whose body spells it, and those whose body calls one of them
  (`hidden_state()` returning `self.one_hidden(bs)`), but no dunder and no name frameworks call
  (`forward`, `step`: `flow.calls.FRAMEWORK_METHODS`), nor a function nested in another;
- another file calls a method when it spells `.name(`, and a module-level function when it
  spells `name(` (not its own `def`) and the word of the defining module (its import);
- the attributes a method spelling `volatile` stores on `self` (`self.feat = ...`) are asked
  too, under `.feat`: another file reads one when it spells `.feat` as a value (not `self.feat`,
  not called, not assigned) and the defining module's word, and computes with it
  (`computing_read`): `head(enc.feat)` after `enc.run(x)`.
"""
from __future__ import annotations

import ast
import functools
import re
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from ..files.code_words import in_comment
from ..flow.calls import ELSEWHERE_ATTRIBUTE as ATTRIBUTE, FRAMEWORK_METHODS
from .modules import notebook_code
from .words import _WORD, _any_word, _module_word

Reader = Callable[[str], Optional[bytes]]
Shown = Callable[[str], str]

_DEF = re.compile(rb"(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)[ \t]*\(")
_CLASS = re.compile(rb"class[ \t]+[A-Za-z_]")
_RETURNS = re.compile(rb"\b(?:return|yield)[ \t]+[^\s#]")
NEWLINE = b"\n"
MAX_ROUNDS = 3  # defs handing on a def's result, as `flow.escapes.MAX_HANDED`


def may_ask(raw: Optional[bytes]) -> bool:
    """A cheap necessary condition of `asked_names` and `asked_attributes`, for the run's link
    step to decide whether a project is linked at all."""
    return raw is not None and b"volatile" in raw and b"def" in raw and (
        _RETURNS.search(raw) is not None or _SELF_STORE.search(raw) is not None)


# `self.feat = ...` (not `==`), also as the first target of several
_SELF_STORE = re.compile(rb"(?m)^[ \t]*self\.([A-Za-z_]\w*)[ \t]*(?:,[^=\n]*)?=(?!=)")


def asked_attributes(raw: Optional[bytes]) -> List[str]:
    """The attributes a method whose body spells `volatile` stores on `self` (`self.feat =
    self.cnn(Variable(x, volatile=True))`): a region's output kept there is read by whoever
    reads the attribute of the instance, maybe in another file (`head(enc.feat)`)."""
    if raw is None or b"volatile" not in raw or b"self" not in raw:
        return []
    found = {m.group(1).decode("ascii") for name, method, body in _def_blocks(raw)
             if method and b"volatile" in body for m in _SELF_STORE.finditer(body)}
    return sorted(a for a in found if not a.startswith("__"))


def asked_names(raw: Optional[bytes]) -> Dict[str, bool]:
    """name -> whether it is a method: the defs of a file whose result may carry a region's
    output (see the module docstring)."""
    if raw is None or b"volatile" not in raw or b"def" not in raw:
        return {}
    blocks = _def_blocks(raw)
    chosen: Dict[str, bool] = {}
    for name, method, body in blocks:
        if b"volatile" in body and _RETURNS.search(body):
            chosen[name] = method
    calls: Dict[int, set] = {}  # block -> the words it spells, found once
    for _ in range(MAX_ROUNDS):
        if not chosen:
            break
        new = {}
        for i, (name, method, body) in enumerate(blocks):
            if name in chosen or not _RETURNS.search(body):
                continue
            if i not in calls:  # its words (a name it passes on as a value counts as a call)
                calls[i] = {w.decode("ascii") for w in set(_WORD.findall(body))}
            if not calls[i].isdisjoint(chosen):
                new[name] = method
        if not new:
            break
        chosen.update(new)
    raw_ones = {name for name, _, body in blocks if name in chosen and _returns_raw(body)}
    return {n: m for n, m in chosen.items()
            if not n.startswith("__") and n not in FRAMEWORK_METHODS and n not in raw_ones}


_RETURN_LINE = re.compile(rb"(?m)^[ \t]*return[ \t]+(.*?)[ \t]*(?:#.*)?$")
_MADE = rb"(?:[A-Za-z_][\w.]*\.)?Variable\("
_NAMES = re.compile(rb"\(?[ \t]*[A-Za-z_]\w*(?:[ \t]*,[ \t]*[A-Za-z_]\w*)*[ \t]*,?[ \t]*\)?")


def _returns_raw(body: bytes) -> bool:
    """Every `return` of the def hands back a `Variable(...)` it made, or names bound only to
    one (`return data, target`): a helper's raw value, whose callers the helper links follow
    (`project.index`). Its callers in this file that compute with it are asked instead."""
    found = False
    for m in _RETURN_LINE.finditer(body):
        value = m.group(1)
        found = True
        if re.match(_MADE, value):
            continue
        if not _NAMES.fullmatch(value):
            return False
        for name in re.findall(rb"[A-Za-z_]\w*", value):
            stores = re.findall(rb"(?m)^[ \t]*" + re.escape(name) + rb"[ \t]*=(?!=)[ \t]*(.*)$", body)
            if not stores or not all(re.match(_MADE, v) for v in stores):
                return False
    return found


def _open_triple_quote(line: bytes, quote: bytes) -> bytes:
    """The triple quote left open after `line`, given the one open before it (b"" for none):
    each occurrence of the open quote closes it, of either quote outside one opens it."""
    if b'"""' not in line and b"'''" not in line:
        return quote
    at = 0
    while True:
        if quote:
            at = line.find(quote, at)
            if at < 0:
                return quote
            at, quote = at + 3, b""
        else:
            found = [(k, q) for q in (b'"""', b"'''") for k in (line.find(q, at),) if k >= 0]
            if not found:
                return b""
            k, quote = min(found)
            at = k + 3


def _def_blocks(raw: bytes) -> List[Tuple[str, bool, bytes]]:
    """(name, is a method, the def's text) of the module-level functions and the methods of
    module-level classes, by indentation."""
    lines = raw.splitlines(keepends=True)
    out: List[Tuple[str, bool, bytes]] = []
    headers: List[Tuple[int, str]] = []  # the open blocks: (indent, "class" | "def")
    current: Optional[Tuple[str, bool, int, int]] = None  # (name, method, indent, first line)
    quote = b""  # the triple quote of a string the line before left open (a docstring's lines at column 0)
    for i, line in enumerate(lines):
        stripped = line.lstrip(b" \t")
        opened = quote
        quote = _open_triple_quote(line, quote)
        if opened or not stripped.strip() or stripped.startswith(b"#"):
            continue
        indent = len(line) - len(stripped)
        if current is not None and indent <= current[2]:
            out.append((current[0], current[1], b"".join(lines[current[3]:i])))
            current = None
        while headers and headers[-1][0] >= indent:
            headers.pop()
        match = _DEF.match(stripped)
        if match is not None:
            if current is None:
                outer = [kind for _, kind in headers]
                if not outer or outer == ["class"]:
                    current = (match.group(1).decode("ascii"), bool(outer), indent, i)
            headers.append((indent, "def"))
        elif _CLASS.match(stripped):
            headers.append((indent, "class"))
    if current is not None:
        out.append((current[0], current[1], b"".join(lines[current[3]:])))
    return out


def callers_elsewhere_links(run: Iterable[str], read_run: Reader, files: Sequence[str], read: Reader,
                            shown: Shown) -> Dict[str, Tuple[Tuple[str, str], ...]]:
    """Each file of `run` (`read_run` gives its bytes) -> (name, "path:line" of a call in another
    Python file of `files`, read with `read`) for the names it asks (`asked_names`)."""
    asked = {path: names for path in run for names in (asked_names(read_run(path)),) if names}
    attributes = {path: attrs for path in run for attrs in (asked_attributes(read_run(path)),) if attrs}
    if not asked and not attributes:
        return {}
    wanted = {n.encode() for names in asked.values() for n in names} | \
        {a.encode() for attrs in attributes.values() for a in attrs}
    spells_any = _any_word(wanted)
    found: Dict[str, Dict[str, str]] = {path: {} for path in set(asked) | set(attributes)}
    for other in files:
        notebook = other.endswith(".ipynb")
        if not (notebook or other.endswith(".py")):
            continue
        raw = read(other)
        if raw is None or not spells_any(raw):  # one C-level search first, then the whole words
            continue
        sites, called_as = _sites_and_aliases(raw, wanted)
        if sites and notebook:  # its code cells, joined (decoded only now: a notebook's JSON is slow to read)
            raw = notebook_code(raw)
            sites, called_as = _sites_and_aliases(raw, wanted)
        if not sites:
            continue
        judged: Dict[Tuple[str, bool], Optional[int]] = {}  # what this file computes with each name's result
        parsed: List = []  # the file's module index, parsed once for all its names (None: no parse)
        for path, names in asked.items():
            if path == other:
                continue
            word = _module_word(path)
            for name, method in names.items():
                attribute = (name, True) in sites
                if not attribute and (method or (name, False) not in sites
                                      or not (not word or word in raw or b"import *" in raw)):
                    continue
                if name in found[path]:
                    continue
                key = (name, attribute)
                if key not in judged:
                    if not parsed:
                        from .helpers import document_of  # only now: most runs judge no caller

                        doc = document_of(raw)
                        parsed.append(None if doc is None else doc.index())
                    line = raw.count(NEWLINE, 0, sites[key]) + 1
                    judged[key] = line if called_as.get(key) == "" else \
                        computing_call(parsed[0], called_as.get(key, name), attribute, line)
                if judged[key] is not None:
                    site = shown(other) if notebook else f"{shown(other)}:{judged[key]}"
                    found[path][name] = site + (", where it is named as a value" if called_as.get(key) == "" else "")
        for path, attrs in attributes.items():
            if path == other:
                continue
            word = _module_word(path)
            for attr in attrs:
                key = (attr, True)
                if ATTRIBUTE + attr in found[path] or called_as.get(key) != "" or key not in sites \
                        or (word and word not in raw and b"import *" not in raw):
                    continue  # not read as a value here, or the file names nothing of the defining module
                if not parsed:
                    from .helpers import document_of

                    doc = document_of(raw)
                    parsed.append(None if doc is None else doc.index())
                line = computing_read(parsed[0], attr, raw.count(NEWLINE, 0, sites[key]) + 1)
                if line is not None:
                    found[path][ATTRIBUTE + attr] = shown(other) if notebook else f"{shown(other)}:{line}"
    return {path: tuple(sorted(names.items())) for path, names in found.items() if names}


def _sites_and_aliases(raw: bytes, wanted) -> Tuple[Dict[Tuple[str, bool], int], Dict[Tuple[str, bool], str]]:
    """The first call of each of `wanted` (`_uses`), with the calls of a name imported under
    another one (`from pkg.feats import extract as ex`, then `ex(cnn, x)`) counted for the name,
    and a use of a name as a value (`hooks = {'feat': feats.extract}`: its calls are unseen); and
    (name, False) -> the alias its counted call spells ("" for a use as a value)."""
    sites, used = _uses(raw, wanted)
    called_as: Dict[Tuple[str, bool], str] = {}
    for key, at in used.items():
        if key not in sites:
            sites[key], called_as[key] = at, ""
    if b" as " not in raw:
        return sites, called_as
    aliases = {m.group(2): m.group(1).decode("ascii") for m in _ALIAS.finditer(raw) if m.group(1) in wanted}
    if not aliases:
        return sites, called_as
    for (alias, attribute), at in _uses(raw, set(aliases))[0].items():
        key = (aliases[alias.encode("ascii")], False)
        if not attribute and (key not in sites or called_as.get(key) == ""):
            sites[key], called_as[key] = at, alias
    return sites, called_as


_NOT_A_USE = (b"import ", b"from ", b"def ", b"class ", b"async def ")  # lines naming without using
_ALIAS = re.compile(rb"\b(\w+)[ \t]+as[ \t]+(\w+)\b")  # `import extract as ex`, also in a list


def _uses(raw: bytes, wanted) -> Tuple[Dict[Tuple[str, bool], int], Dict[Tuple[str, bool], int]]:
    """(name, spelled as an attribute) -> the offset of the first call of each of `wanted` in
    `raw` (not its `def`, not in a comment); and of the first use of each as a value, neither
    called nor bound, imported, defined, in a comment or in a string (`__all__ = ['extract']`)."""
    sites: Dict[Tuple[str, bool], int] = {}
    used: Dict[Tuple[str, bool], int] = {}
    words = wanted.intersection(_WORD.findall(raw))
    if not words:
        return sites, used
    for m in _uses_of(tuple(sorted(words))).finditer(raw):
        key = (m.group(2).decode("ascii"), m.group(1) is not None)
        after = m.group(3)
        if after and after.endswith(b"("):
            if key not in sites and not _a_definition(raw, m.start()) and not in_comment(raw, m.start()):
                sites[key] = m.start()
            continue
        if after or key in used or raw[m.start() - 1:m.start()] in (b"'", b'"') or in_comment(raw, m.start()):
            continue  # bound (`name =`), read further (`name.x`, `name y`), or named in a string or comment
        line = raw[raw.rfind(b"\n", 0, m.start()) + 1:m.start()].lstrip()
        if not line.startswith(_NOT_A_USE) and not line.endswith(b"def "):
            used[key] = m.start()
    return sites, used


@functools.lru_cache(maxsize=256)
def _uses_of(words: Tuple[bytes, ...]) -> "re.Pattern[bytes]":
    """The uses of `words` (a file's few, the same in many files: compiled once each), with what
    follows each: `(` for a call; `=`, `.` or a word for a use that is no value; else nothing."""
    return re.compile(rb"(\.)?\b(" + b"|".join(re.escape(w) for w in words) + rb")\b([ \t]*(?:\(|=(?!=)|\.|\w))?")


def computing_call(index, name: str, attribute: bool, first: int) -> Optional[int]:
    """The line of a call of `name` (`x.name(...)` when `attribute`) in this file whose result
    the caller computes with as `flow.escapes.Follower.caller_trains` judges a caller of the
    same file: trains on it, meets a value that may require grad, feeds a module; or hands it
    on (returns it, keeps it on an attribute, in a container, a global or a closure), where
    volfix does not follow it. None when every call only reads it (prints it, takes `.data`,
    `.cpu().numpy()`). `first` (the first call in the bytes) when the file did not parse (`index`
    None: not Python 3, or not decodable), so that what it does with the result is unseen."""
    from ..flow.bindings import NameBindings
    from ..flow.consumed import consumed
    from ..flow.taint import TaintAnalysis

    if index is None:
        return first
    names = NameBindings(index)
    for call in ast.walk(index.tree):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        if not (isinstance(func, ast.Attribute) and attribute and func.attr == name
                or isinstance(func, ast.Name) and not attribute and func.id == name):
            continue
        fn = index.function_of(call)
        try:
            taint = TaintAnalysis(fn, index, raw_sources=False, sources=[call]).run()
        except RecursionError:
            return call.lineno
        if taint.escapes or consumed(index, taint, fn, names, False, "", "") is not None:
            return call.lineno
    return None


def computing_read(index, attr: str, first: int) -> Optional[int]:
    """The line of a read `x.attr` (not on `self`) in this file whose value the reader computes
    with as `computing_call` judges a call's result; `first` when the file did not parse."""
    from ..flow.bindings import NameBindings
    from ..flow.consumed import consumed
    from ..flow.taint import TaintAnalysis

    if index is None:
        return first
    names = NameBindings(index)
    for node in index.attributes.get(attr, ()):
        if not isinstance(node.ctx, ast.Load) or isinstance(node.value, ast.Name) and node.value.id == "self":
            continue
        fn = index.function_of(node)
        try:
            taint = TaintAnalysis(fn, index, raw_sources=False, sources=[node]).run()
        except RecursionError:
            return node.lineno
        if taint.escapes or consumed(index, taint, fn, names, False, "", "") is not None:
            return node.lineno
    return None


def _a_definition(raw: bytes, at: int) -> bool:
    """`def name(` or `class name(` at `at`."""
    start = raw.rfind(b"\n", 0, at) + 1
    return re.match(rb"[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+$", raw[start:at]) is not None

