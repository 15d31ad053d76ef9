"""The project index: helpers across files, and the callers of every helper in the project
(SPEC §2.6, §2.9; issue "partial runs never lose a fix").

A legacy helper threads the volatile flag: `data.py` defines `get_batch(source, i,
evaluation=False)` creating `Variable(..., volatile=evaluation)`, and `main.py` calls
`get_batch(val_data, i, evaluation=True)`. Each file alone is undecidable. The index links them
before the per-file analysis runs:

1. **Helpers.** Files of the project whose bytes may define one (`prefilter.HELPER_HINT`: a `volatile=`
   keyword, or a `Variable(*args)` forwarder) are analysed once with the real engine; the
   functions and methods whose flag or raw value goes to their callers are the helpers
   (`get_batch`, `to_var(x, volatile=False)`, a hard-coded `volatile_variable(*args)`, a
   method family `as_tensor(self, ..., for_training)`, a `Variable = lambda *a, **k: ...`
   wrapper).
2. **Callers.** Every Python file of the project that mentions a helper's name is parsed and its
   calls that resolve to a helper are recorded with the flag they pass: by absolute import
   from a directory holding both files, by relative import, by a star import of the helper's
   module, or, for a method, by its name (not for names frameworks call for you, such as
   `forward`). A caller that passes its own parameter on is a helper too: the index iterates
   until no new helper appears. In a check, the worker that parses a caller also analyses it,
   with the links it will have unless other files call its own helpers (`volfix.project.early`);
   the result is kept when its links turn out to be those.
3. **What calls return (VF401).** For each file of the run whose bytes hold a VF401 read
   (`prefilter.TORCH_DATA_INDEX`), the functions, classes' instances and methods of other
   files its reads may need (`flow.returns.asked_returns`: `errD, acc = compute_d_loss(...)`
   of `from miscc.utils import compute_d_loss`, `criterion(...)` with `criterion =
   SplitCrossEntropyLoss(...)` of another module) are looked up in the files defining them,
   also through a package's `__init__` that imports them (`from .ppo import PPO`): what
   each returns (`flow.returns.returns_facts`) goes to the file as `Links.scalar_returns`.
   No other file is read for it.
4. **Grad-mode functions.** A project's own context managers that turn recording off
   (`flow.grad_mode.GradShim`: fastai's `no_grad_context()`, fairseq's `utils.maybe_no_grad()`)
   are found in the files whose bytes may define one (`SHIM_HINT`), and each file that enters
   one in a `with` gets it under the name it calls it: code there is already covered.
5. **Links.** Each file of the run gets the helpers it calls (`Links.helpers`: its calls become
   sources there), the calls of its own helpers in the other files (`Links.external_calls`:
   a helper is unwrapped only when every call passing a true flag gets its region in this
   run), the bindings of project modules it star-imports, and whether other files star-import
   it (then its `from torch.autograd import Variable` stays).

A file's project is the nearest directory above it holding `pyproject.toml`, `setup.py`,
`setup.cfg` or `.git` (`discovery.ProjectRoots`); the runner builds one index per project, so a
folder of 30 repositories is 30 small indexes and helpers never link across them. Files
outside the run are only read, never changed: pre-commit runs on changed files only, and a fix
there must not lose the regions that callers in unchanged files need.

Linking stays linear in the project's size: a module name is looked up among the few files it
can name (`module_candidates`, `ModuleTable`) instead of asking every file for its names; the
per-file facts (helpers, calls, star imports) are cached by content (`volfix.project.facts`),
and so is the whole project's result, under a digest of its files (`build_incrementally`): a
warm run over an unchanged project links nothing.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from ..flow.grad_mode import GradShim
from ..files.prefilter import asks_other_files, helper_hint
from .calls import file_calls
from .early import EarlyPlan, star_guess
from .facts import HOP, ExternalCall, FactStore, HelperSignature, Links, calls_key, links_key, shims_key
from .helpers import CALL_KEY, NameTable, document_of, file_helpers, file_star_modules, helper_names, short_name
from .passing import volatile_param_calls
from .modules import (ModuleTable, module_candidates, module_names, notebook_code,  # noqa: F401 - re-exported
                      resolve_module)
from .returns import calls_a_parameter, imports_project_module
from .scalar_links import scalar_links
from .shims import file_shims, shim_names, shims_called
from .dict_attributes import dict_attribute_links
from .callers_elsewhere import callers_elsewhere_links
from .torchness import torch_project_files
from .stars import (_STAR_IMPORT_IN_JSON, _notebook_document, _notebook_star_modules_using_variable,
                    _uses_variable, exported_torch_names, has_star_import, spelled_star_modules)
from .words import _any_word, _call_filter, _module_word  # noqa: F401 - _any_word re-exported
from ..syntax import names as nm
from ..syntax.document import Document

MAX_ROUNDS = 4
# A function that may return or yield under a grad-mode context: `return torch.no_grad()...`
# on one line, or a `@contextmanager` in a file that spells a grad-mode name.
SHIM_HINT = re.compile(rb"return[ \t][^\n]*(?:no_grad|set_grad_enabled|inference_mode)\s*\(|contextmanager")
_GRAD_WORD = re.compile(rb"no_grad|set_grad_enabled|inference_mode")

Reader = Callable[[str], Optional[bytes]]
Mapper = Callable[[Callable, list], list]  # map(fn, items) -> results in order


class ProjectIndex:
    """Helpers and callers across the files of a project.

    `cache` (a `volfix.run.cache.ResultCache`) keeps each file's facts between runs
    (`volfix.project.facts`); `mapper(fn, items)` runs `fn` over the items, in worker
    processes when the runner has them (the facts of each file are independent). `early`: the
    runner's offer to analyse the files of the run on the parse that finds their calls
    (`volfix.project.early`): its `plan(path, shown)` gives (analyse, extra, candidate) or None,
    and the results kept go into its `results` (path -> result)."""

    def __init__(self, run_files: Sequence[str], data: Dict[str, Optional[bytes]], display: Dict[str, str],
                 read: Reader, project_files: Sequence[str] = (), cache=None, mapper: Optional[Mapper] = None,
                 early=None, whole_project: bool = False):
        self.run = {os.path.abspath(p) for p in run_files}
        self.files = sorted(set(os.path.abspath(p) for p in list(run_files) + list(project_files))
                            - {p for p in project_files if not p.endswith((".py", ".pyi"))})
        self.data = data
        self.candidates = {os.path.abspath(p) for p, raw in data.items() if raw is not None} & self.run
        self.display = display
        self.read = read
        self.project_wide = bool(project_files) or whole_project
        # the run's files and `project_files` are all the project's (a project root holds them)
        self.whole_project = whole_project
        self.facts = FactStore(cache)
        self.map: Mapper = mapper or (lambda fn, items: [fn(item) for item in items])
        self._docs: Dict[str, Optional[Document]] = {}
        self._stars: Dict[str, List[str]] = {}  # path -> modules it star-imports, found with its helpers
        self._asked: Dict[str, List[str]] = {}  # path -> what its VF401 reads ask, found with its calls
        self._imports: Dict[Tuple[str, str], bool] = {}  # (module, directory) -> a project file
        self.helpers: Dict[str, List[HelperSignature]] = {}  # path -> its helpers
        self.calls: Dict[str, Dict[str, List[ExternalCall]]] = {}  # helper path -> name -> calls
        self.imported: Dict[str, Dict[str, HelperSignature]] = {}  # caller path -> qual -> signature
        self.variable_importers: Set[str] = set()  # modules star-imported where `Variable` is used
        self.early = early
        self._early: Dict[str, tuple] = {}  # path -> (the links assumed, its result)
        self._layout: tuple = ([], ModuleTable([]), [])  # the project's .py files, their table, notebooks
        self.shims: Dict[str, List[GradShim]] = {}  # path -> its grad-mode functions
        self._shim_table: NameTable = {}
        self._shim_reach = ""
        self._passing: Optional[Dict[str, Dict[str, List[ExternalCall]]]] = None  # `volatile_param_calls`
        self._torch_project: Optional[FrozenSet[str]] = None  # `torch_project`
        self._dicts: Optional[Dict[str, Tuple[str, ...]]] = None  # `dict_attributes`
        self._elsewhere: Optional[Dict[str, Tuple[Tuple[str, str], ...]]] = None  # `called_elsewhere`

    # ------------------------------------------------------------------ reading
    def bytes_of(self, path: str) -> Optional[bytes]:
        if path not in self.data or self.data[path] is None:
            self.data[path] = self.read(path)
        return self.data[path]

    def version_of(self, path: str) -> Optional[bytes]:
        """What the links key holds of a file: a digest of the bytes the run has read (the
        candidates), else the file's identity and times, which every write changes (st_ctime
        cannot be set back): reading the whole project again would cost a warm run as much
        as the scan. None: unreadable."""
        data = self.data.get(path)
        if data is not None:
            return b"c" + hashlib.blake2b(data, digest_size=16).digest()
        try:
            st = os.stat(path)
        except OSError:
            return None
        return repr(("s", st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)).encode()

    def shown(self, path: str) -> str:
        return self.display.get(path) or os.path.relpath(path)

    def document(self, path: str) -> Optional[Document]:
        if path not in self._docs:
            raw = self.bytes_of(path)
            self._docs[path] = None if raw is None else _notebook_document(raw) if path.endswith(".ipynb") \
                else document_of(raw)
        return self._docs[path]

    # ------------------------------------------------------------------ building
    def build(self) -> Dict[str, Links]:
        py_files = [p for p in self.files if p.endswith((".py", ".pyi"))]
        hinted = []
        for path in py_files:
            raw = self.bytes_of(path) if path in self.run or self.project_wide else self.data.get(path)
            if raw is not None and helper_hint(raw):
                hinted.append((path, raw))
        self.find_helpers(hinted)
        notebooks = [p for p in self.files if p.endswith(".ipynb") and p in self.run]
        modules = ModuleTable(py_files, self.data.get)
        self._layout = (py_files, modules, notebooks)
        self.find_shims(py_files, modules)
        seen: Set[Tuple[str, str]] = set()
        # The callers first: the star imports of the files they parse come with them (without
        # a helper, no file calls one: none is read for it).
        for _ in range(MAX_ROUNDS if self.helpers else 0):
            new = self.link_callers(py_files, seen)
            if not new:
                break
        stars = self.star_links(py_files, modules, notebooks)
        returns = scalar_links(self, py_files, modules, stars, notebooks)
        passing = self.volatile_param_calls()
        if not self.helpers and not stars and not self.variable_importers and not self.shims and not returns \
                and not passing and not any(map(self.torch_project, self.run)) \
                and not any(map(self.dict_attributes, self.run)) and not any(map(self.called_elsewhere, self.run)):
            return {}
        links = self.links(stars, returns)
        for path, (expected, result) in self._early.items():
            if links.get(path) == expected:  # what the file's analysis would see now
                self.early.results[path] = result
        return links

    def build_incrementally(self) -> Dict[str, Links]:
        """`build`, or its result from the cache when no file of the project changed (nor
        which of them the run holds): a warm run links nothing."""
        files = sorted(set(self.files) | self.run)
        # Display paths that follow from the current directory (the runner's) are keyed by it.
        cwd = getattr(self.display, "cwd", None)
        entries = [(path, None if cwd is not None else self.shown(path), path in self.run,
                    self.version_of(path) if path.endswith((".py", ".pyi", ".ipynb")) else None) for path in files]
        key = links_key(entries, self.project_wide, cwd)
        anchor = files[0] if files else ""
        found = self.facts.links(anchor, key)
        if found is not None:
            return found
        links = self.build()
        self.facts.put_links(anchor, key, links)
        return links

    def find_helpers(self, hinted: List[Tuple[str, bytes]]) -> None:
        """The helpers of every file that may define one: from the cache, else from the
        file's own analysis by the engine (`file_helpers`, in the workers). They go into
        `self.helpers` in the files' order, wherever they came from: that order decides which
        of two files a name that can mean either is (`helper_names`), so a warm cache must not
        change it."""
        missing = []
        by_path: Dict[str, list] = {}
        for path, raw in hinted:
            found = self.facts.helpers(path, raw, self.shown(path))
            if found is None:
                missing.append((path, raw))
            else:
                by_path[path] = found
        computed = self.map(file_helpers, [(raw, self.shown(path)) for path, raw in missing])
        for (path, raw), (found, stars) in zip(missing, computed):
            self.facts.put_helpers(path, raw, found)
            if stars is not None:  # the same parse told what the file star-imports
                self.facts.put_stars(path, raw, stars)
                self._stars[path] = stars
            by_path[path] = found
        for path, _ in hinted:
            if by_path.get(path):
                self.helpers[path] = by_path[path]

    def find_shims(self, py_files: List[str], modules: ModuleTable) -> None:
        """The grad-mode functions of every file that may define one, from the cache or from
        the file's own reading (`file_shims`, in the workers). A file that takes `torch` from
        a star import of a project module (fastai's `from .torch_imports import *`) is read
        with that module's bindings, which are part of the fact's key."""
        missing = []
        for path in py_files:
            raw = self.bytes_of(path) if path in self.run or self.project_wide else self.data.get(path)
            if raw is None or not SHIM_HINT.search(raw) or not _GRAD_WORD.search(raw):
                continue
            bindings = self.star_bindings_of(path, {path: self.star_targets(path, raw, modules)})
            found = self.facts.shims(path, raw, repr(bindings))
            if found is None:
                missing.append((path, raw, bindings))
            elif found:
                self.shims[path] = found
        computed = self.map(file_shims, [(raw, bindings) for _, raw, bindings in missing])
        for (path, raw, bindings), found in zip(missing, computed):
            self.facts.put_shims(path, raw, repr(bindings), found)
            if found:
                self.shims[path] = found
        self.shims = {p: self.shims[p] for p in py_files if p in self.shims}  # the files' order
        self._shim_table = shim_names(self.shims)
        self._shim_reach = shims_key(self.shims)

    def star_targets(self, path: str, raw: bytes, modules: ModuleTable) -> Tuple[str, ...]:
        """The project files a file star-imports, from its parse (cached like `star_links`'s:
        the callers are not linked yet, and a grad-mode function's file is read with them)."""
        if not has_star_import(raw):
            return ()
        found = self.known_stars(path, raw)
        if found is None:
            found = file_star_modules(raw)
            self.facts.put_stars(path, raw, found)
            self._stars[path] = found
        return tuple(t for t in (modules.resolve(m, path) for m in found) if t is not None)

    def known_stars(self, path: str, raw: bytes) -> Optional[List[str]]:
        """The modules a file star-imports, if a parse of it this run or the cache told."""
        found = self._stars.get(path)
        return found if found is not None else self.facts.stars(path, raw)

    def known_asked(self, path: str, raw: bytes) -> Optional[List[str]]:
        """The return facts of other files a file's VF401 reads ask about, if its analysis this
        run or the cache told."""
        found = self._asked.get(path)
        return found if found is not None else self.facts.returns_asked(path, raw)

    def shims_entered(self, path: str) -> Tuple[Tuple[str, GradShim], ...]:
        """The grad-mode functions of other files `path` enters, by the name it calls them."""
        if not self.shims:
            return ()
        raw = self.bytes_of(path)
        if raw is None or not _any_word({n.encode() for n in self._shim_table})(raw):
            return ()
        reach = f"{self._shim_reach}:{os.path.dirname(path)}"
        uses = self.facts.shim_uses(path, raw, reach)
        if uses is None:
            doc = self.document(path)
            uses = [] if doc is None else [(key, p, shim.name)
                                           for key, (p, shim) in shims_called(doc.index(), path, self._shim_table)]
            self.facts.put_shim_uses(path, raw, reach, uses)
        out = {}
        for key, helper_path, name in uses:
            shim = next((g for g in self.shims.get(helper_path, ()) if g.name == name), None)
            if shim is not None:
                out[key] = shim
        return tuple(sorted(out.items()))

    def link_callers(self, py_files: List[str], seen: Set[Tuple[str, str]]) -> bool:
        """Record the calls of every known helper; callers passing their own parameter become
        helpers too. Returns whether new helpers appeared."""
        methods: Dict[str, List[Tuple[str, HelperSignature]]] = {}
        by_module: Dict[bytes, Set[bytes]] = {}  # a helper module's last name -> its helpers' names
        for helper_path, sigs in self.helpers.items():
            for sig in sigs:
                if sig.name.startswith(nm.METHOD_PREFIX):
                    methods.setdefault(sig.name, []).append((helper_path, sig))
                else:
                    by_module.setdefault(_module_word(helper_path), set()).add(sig.name.encode())
        # An instance's call spells no method name: a `__call__` helper's callers spell its flag.
        method_names = [(short_name(name) if name != CALL_KEY else sig.param or name).encode()
                        for name, found in methods.items() for _, sig in found[:1]]
        helpers_key = calls_key(self.helpers, methods)
        may_call = _call_filter(by_module, method_names)
        new = False
        work = []
        calls_of: Dict[str, list] = {}
        for path in py_files:
            raw = self.bytes_of(path)
            if raw is None or not may_call(raw):
                continue
            # What a file can reach follows from the helpers and the file's directory.
            key = f"{helpers_key}:{self._shim_reach}:{os.path.dirname(path)}"
            found = self.facts.calls(path, raw, key, self.shown(path), path in self.run)
            resolved = None if found is None else [(q, h, self.signature_of(h, n), c, t) for q, h, n, c, t in found]
            if resolved is None or any(sig is None for _, _, sig, _, _ in resolved):
                work.append((path, raw, key))  # a miss (or an entry that does not fit: recompute)
            else:
                calls_of[path] = resolved
        # The helper tables are the same objects in every item: pickled once a chunk.
        names = helper_names(self.helpers)
        plans = self.early_plans([path for path, _, _ in work]) if not seen else {}
        items = [(path, raw, self.shown(path), path in self.run, names, methods, self._shim_table, plans.get(path),
                  path not in self._asked and self.reads_other_files(path, raw)) for path, raw, _ in work]
        for (path, raw, key), (found, ahead, stars, asked) in zip(work, self.map(file_calls, items)):
            if ahead is not None:
                self._early[path] = ahead
            if stars is not None:  # the same parse told what the file star-imports
                self.facts.put_stars(path, raw, stars)
                self._stars[path] = stars
            if asked is not None:  # and what its VF401 reads ask of other files
                self.facts.put_returns_asked(path, raw, asked)
                self._asked[path] = asked
            self.facts.put_calls(path, raw, key, found)
            calls_of[path] = found
        # Recorded in the files' order, cached or not: the order of the calls and of the
        # helpers they derive is what later rounds and the messages see.
        for path in py_files:
            if path in calls_of:
                new = self.record(path, calls_of[path], seen) or new
        return new

    def early_plans(self, paths: List[str]) -> Dict[str, EarlyPlan]:
        """For the files of the run the runner wants analysed on the parse of their calls: what
        their links will be unless other files call their helpers (`early.expected_links`).
        The star imports are not linked yet: their part is read off the bytes (`early.star_guess`)."""
        plans: Dict[str, EarlyPlan] = {}
        offers = {path: self.early.plan(path, self.shown(path)) for path in paths
                  if self.early is not None and path in self.run}
        if not any(offers.values()):
            return plans
        py_files, modules, notebooks = self._layout
        importers = star_guess(self, py_files, modules, notebooks)
        for path, offer in offers.items():
            if offer is not None:
                table = self.star_table(path, modules)
                exported = path in importers and self.binds_variable(path)
                plans[path] = EarlyPlan(*offer, table, exported, path in self.helpers, self.project_wide)
        return plans

    def star_table(self, path: str, modules: ModuleTable) -> Dict[str, Optional[tuple]]:
        """For each module a file's lines star-import: its `Links.star_bindings` entry (None:
        no project file)."""
        raw = self.bytes_of(path)
        table: Dict[str, Optional[tuple]] = {}
        for module in spelled_star_modules(raw) if raw is not None and has_star_import(raw) else ():
            target = modules.resolve(module, path)
            table[module] = None if target is None else (self.module_key(target, path), self.exported_bindings(target))
        return table

    def signature_of(self, helper_path: str, name: str) -> Optional[HelperSignature]:
        return next((s for s in self.helpers.get(helper_path, ()) if s.name == name), None)

    def record(self, path: str, found, seen: Set[Tuple[str, str]]) -> bool:
        """Add one file's calls of helpers; whether it made a new (derived) helper."""
        new = False
        for qual, helper_path, sig, call, through in found:
            key = (path, f"{call.line}:{call.col}:{helper_path}:{sig.name}")
            if call.flag != HOP:
                self.imported.setdefault(path, {})[qual] = sig
            if key in seen:
                continue
            seen.add(key)
            if call.flag != HOP:
                self.calls.setdefault(helper_path, {}).setdefault(sig.name, []).append(call)
            if through is not None and through not in self.helpers.setdefault(path, []):
                self.helpers[path].append(through)
                new = True
        return new

    def star_links(self, py_files: List[str], modules: Optional[ModuleTable] = None,
                   notebooks: Sequence[str] = ()) -> Dict[str, Tuple[str, ...]]:
        """Project modules other files star-import: importer -> modules (paths). What a file
        star-imports is a fact about its bytes (`file_star_modules`, cached, in the workers);
        which project file a module is, a lookup. A notebook of the run (`from main import *`
        in a cell) star-imports like a module beside it. Records in `self.variable_importers`
        the modules star-imported by a file that uses `Variable` (a `.py` file, or a notebook
        of the run)."""
        modules = modules if modules is not None else ModuleTable(py_files, self.data.get)
        importers = []
        for path in py_files:
            raw = self.bytes_of(path) if (path in self.run or self.project_wide) else self.data.get(path)
            if raw is not None and has_star_import(raw):
                importers.append((path, raw))
        star_modules: Dict[str, List[str]] = self.cached_facts(importers, self.known_stars, file_star_modules,
                                                               self.facts.put_stars)
        for path in notebooks:
            raw = self.bytes_of(path)
            if raw is None or not _STAR_IMPORT_IN_JSON.search(raw):
                continue
            doc = self.document(path)
            if doc is not None:
                importers.append((path, raw))
                star_modules[path] = list(doc.index().module_names.star_modules)
        out: Dict[str, Tuple[str, ...]] = {}
        for path, raw in importers:
            targets = []
            for module in star_modules[path]:
                target = modules.resolve(module, path)
                if target is not None:
                    targets.append(target)
            if targets:
                out[path] = tuple(targets)
                if not path.endswith(".ipynb") and _uses_variable(raw):
                    self.variable_importers.update(targets)
        for path in sorted(self.run):
            if path.endswith(".ipynb"):
                named = _notebook_star_modules_using_variable(self.bytes_of(path))
                self.variable_importers.update(
                    t for t in (modules.resolve(m, path) for m in named) if t is not None)
        return out

    def reads_other_files(self, path: str, raw: Optional[bytes]) -> bool:
        """Whether VF401's reads in a file of the run may ask what another file's functions
        return: a candidate of the run (its bytes came with it) with a VF401 read that imports
        a module of the project, or whose read calls a function's parameter (`f(True).data[0]`:
        whether other files name that function)."""
        if raw is None or path not in self.candidates or not asks_other_files(raw):
            return False
        code = notebook_code(raw) if path.endswith(".ipynb") else raw
        return imports_project_module(code, path, self._layout[1], self._imports) \
            or self.whole_project and calls_a_parameter(code)

    def cached_facts(self, files: List[Tuple[str, bytes]], known: Callable[[str, bytes], Any],
                     worker: Callable[[bytes], Any], put: Callable[[str, bytes, Any], None]) -> Dict[str, Any]:
        """path -> each file's fact: `known(path, raw)` (this run's or the cache's), else what
        `worker(raw)` finds in the workers, which `put` stores."""
        out: Dict[str, Any] = {}
        missing = []
        for path, raw in files:
            found = known(path, raw)
            if found is None:
                missing.append((path, raw))
            else:
                out[path] = found
        for (path, raw), found in zip(missing, self.map(worker, [raw for _, raw in missing])):
            put(path, raw, found)
            out[path] = found
        return out

    # ------------------------------------------------------------------ links
    def links(self, stars: Dict[str, Tuple[str, ...]],
              returns: Optional[Dict[str, Tuple[Tuple[str, Tuple[str, ...]], ...]]] = None) -> Dict[str, Links]:
        returns = returns or {}
        out: Dict[str, Links] = {}
        passing = self.volatile_param_calls()
        for path in self.run:
            helpers = tuple(sorted(self.imported.get(path, {}).items()))
            calls_of = {**self.calls.get(path, {}), **passing.get(path, {})}
            external = tuple(sorted((name, tuple(sorted(calls, key=lambda c: (c.path, c.line))))
                                    for name, calls in calls_of.items()))
            star_bindings, is_exported = self.star_part(path, stars)
            # A file with nothing to fix (not a candidate, calling no helper) needs none.
            shims = self.shims_entered(path) if path in self.data or helpers or external else ()
            scalars = returns.get(path, ())
            torch_project = self.torch_project(path)
            dicts = self.dict_attributes(path)
            elsewhere = self.called_elsewhere(path)
            if helpers or external or star_bindings or is_exported or path in self.helpers or shims or scalars \
                    or torch_project or dicts or elsewhere:
                out[path] = Links(helpers, external, star_bindings, is_exported, self.project_wide, shims, scalars,
                                  torch_project, dicts, elsewhere)
        return out

    def volatile_param_calls(self) -> Dict[str, Dict[str, List[ExternalCall]]]:
        """`project.passing.volatile_param_calls` of this project, once."""
        if self._passing is None:
            self._passing = volatile_param_calls(self.run, self.data, self.files, self.bytes_of, self.shown)
        return self._passing

    def torch_project(self, path: str) -> bool:
        """`Links.torch_project` of a file of the run (`project.torchness`), computed once."""
        if self._torch_project is None:
            self._torch_project = torch_project_files(self.run, self.data.get, self.files, self.bytes_of)
        return path in self._torch_project

    def dict_attributes(self, path: str) -> Tuple[str, ...]:
        """`Links.dict_attributes` of a file of the run (`project.dict_attributes`), computed once."""
        if self._dicts is None:
            self._dicts = dict_attribute_links(self.run, self.data.get, self.files, self.bytes_of)
        return self._dicts.get(path, ())

    def called_elsewhere(self, path: str) -> Tuple[Tuple[str, str], ...]:
        """`Links.called_elsewhere` of a file of the run (`project.callers_elsewhere`), computed once;
        only in a project with a root: files in no project (a folder of unmarked checkouts)
        would take each other's `.predict(` for calls."""
        if self._elsewhere is None:
            self._elsewhere = {} if not self.whole_project else \
                callers_elsewhere_links(self.run, self.data.get, self.files, self.bytes_of, self.shown)
        return self._elsewhere.get(path, ())

    def star_part(self, path: str, stars: Dict[str, Tuple[str, ...]]) -> Tuple[tuple, bool]:
        """A file's `Links.star_bindings` and `Links.star_exported`."""
        return self.star_bindings_of(path, stars), path in self.variable_importers and self.binds_variable(path)

    def star_bindings_of(self, path: str, stars: Dict[str, Tuple[str, ...]]
                         ) -> Tuple[Tuple[str, Tuple[Tuple[str, str], ...]], ...]:
        """`Links.star_bindings` of `path`: what the project modules it star-imports bind of torch."""
        found = tuple((self.module_key(t, path), self.exported_bindings(t)) for t in stars.get(path, ()))
        return tuple(s for s in found if s[1])

    def module_key(self, target: str, importer: str) -> str:
        names = module_names(target, importer)
        return names[0] if names else target

    def exported_bindings(self, path: str) -> Tuple[Tuple[str, str], ...]:
        return exported_torch_names(path, self.document, self._layout[1].resolve)

    def binds_variable(self, path: str) -> bool:
        return any(nm.is_variable(q) for _, q in self.exported_bindings(path))


def link(run_files: Sequence[str], data: Dict[str, Optional[bytes]], display: Dict[str, str],
         read: Reader, project_files: Sequence[str] = (), cache=None, mapper: Optional[Mapper] = None,
         early=None, light: bool = False, whole_project: bool = False) -> Dict[str, Links]:
    """The links of every file of the run that has any. `data` holds the bytes already read
    (read bytes are added to it); `project_files`: the other files of the project, read only;
    `cache`, `mapper` and `early`: see `ProjectIndex`. `light`: no file hints a helper, a star
    import or a grad-mode function, so only what VF401's reads need of other files is linked
    (`project.scalar_links`, its facts cached by content): the project's other files
    are read only when a read calls a function's parameter (do they name that function?).
    `whole_project`: the files given are all of a project's (it has a root)."""
    index = ProjectIndex(run_files, data, display, read, project_files, cache, mapper, early, whole_project)
    if light:
        py_files = [p for p in index.files if p.endswith((".py", ".pyi"))]
        modules = ModuleTable(py_files, index.data.get)
        notebooks = [p for p in index.files if p.endswith(".ipynb") and p in index.run]
        index._layout = (py_files, modules, notebooks)
        out = {path: Links(project_wide=index.project_wide, scalar_returns=returns)
               for path, returns in scalar_links(index, py_files, modules, notebooks=notebooks).items()}
        for path, calls in index.volatile_param_calls().items():
            external = tuple(sorted((name, tuple(found)) for name, found in calls.items()))
            out[path] = Links(external_calls=external, project_wide=index.project_wide,
                              scalar_returns=out[path].scalar_returns if path in out else ())
        for path in index.run:
            extra = {name: value for name, value in (("torch_project", index.torch_project(path)),
                                                     ("dict_attributes", index.dict_attributes(path)),
                                                     ("called_elsewhere", index.called_elsewhere(path))) if value}
            if extra:
                out[path] = dataclasses.replace(out.get(path) or Links(project_wide=index.project_wide), **extra)
        return out
    if cache is None:
        return index.build()
    return index.build_incrementally()
