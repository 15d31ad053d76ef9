#!/usr/bin/env python3
"""Measure volfix on real legacy PyTorch repositories.

    python scripts/evaluation repos DIR [DIR ...] [--out OUTDIR] [--json FILE]

Every DIR is one repository checkout (kept OUTSIDE this repository: third-party code never
lands in volfix's tree). For every `*.py` file (and every `*.ipynb`, whose code cells are
joined into one virtual Python file with IPython magics commented out), the script

1. runs `volfix.api.check_source`;
2. counts the ground truth with its own, independent scanner (`ast`, plus a tokenize pass
   for `async=`): calls of `torch.autograd.Variable` (resolved through the file's imports)
   with a `volatile` keyword or a 3rd positional argument, `.volatile` reads and writes in
   files that import torch (or in a tree some other file of which does: `measure` and
   `human` pass that), `getattr/setattr/hasattr(x, "volatile")`, and `async=` keywords;
   look-alikes (any other callee named `Variable`, `volatile=` passed to other functions,
   `volatile` in dict literals) are counted separately so that a finding on them shows up
   as a false positive;
3. matches the two by (code family, row, column) and lists misses and false positives;
4. fixes the text with `fix_source(..., unsafe_fixes=True)` in memory and checks that the
   result compiles, that a second fix changes nothing, which volatile findings remain (with
   their notes) and what the independent scanner still sees in the fixed text;
5. runs reviewer heuristics on the diff: comments lost, regions that wrap training code
   (`.backward(`, `.step(`, `autograd.grad(`), indentation unit changes, line endings.

Unified diffs of every changed file go to OUTDIR/diffs/<repo>/<path>.diff for manual review;
a per-file JSON record goes to --json. The Markdown summary table is printed on stdout.
Nothing is written inside the scanned directories.
"""
from __future__ import annotations

import argparse
import ast
import collections
import difflib
import io
import json
import os
import re
import sys
import time
import tokenize
import traceback
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional, Tuple

from .common import dotted

VOLATILE_CODES = ("VF101", "VF102", "VF103", "VF201", "VF202", "VF203")
CTOR_CODES = ("VF101", "VF102", "VF103")
SECONDARY_CODES = ("VF110", "VF111", "VF112", "VF301")
SKIP_DIRS = {".git", "__pycache__", ".ipynb_checkpoints", "build", "site-packages", "venv", ".venv"}
# `.step(` only on optimizer-looking receivers: `env.step(action)` is not training
TRAINING_PATTERNS = (re.compile(r"\.backward\("), re.compile(r"\b\w*(?:optim|opt|optimizer)\w*\.step\("),
                     re.compile(r"autograd\.grad\("))
GRAD_REGION = re.compile(r"\b(no_grad|set_grad_enabled|inference_mode|nullcontext)\b")


# ---------------------------------------------------------------------------------------
# ground truth


@dataclass
class Site:
    code: str  # VF101/VF102/VF103/VF201/VF202/VF203/VF301/VF110/VF111/VF112
    row: int
    col: int  # 1-based, in characters
    snippet: str
    kind: str = ""  # free-form detail ("keyword", "positional", "getattr", ...)


@dataclass
class GroundTruth:
    sites: List[Site] = field(default_factory=list)
    lookalikes: List[Site] = field(default_factory=list)  # not torch: must NOT be flagged
    helper_calls: List[Site] = field(default_factory=list)  # f(..., volatile=...) with f not Variable
    parse_error: Optional[str] = None
    imports_torch: bool = False
    rebound_variable: bool = False  # `Variable = ...` / `def Variable` in the file
    wrappers: List[str] = field(default_factory=list)  # names forwarding */** into torch's Variable
    splat_calls: List[Site] = field(default_factory=list)  # torch Variable(*a, **k) without a volatile keyword
    regex_volatile: int = 0  # `volatile` outside comments, for files that do not parse


def _async_sites(text: str) -> Tuple[str, List[Site]]:
    """Find `async=` keywords by tokens; return the text with them renamed to a same-length
    placeholder (so every column stays put) and the sites."""
    sites: List[Site] = []
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return text, sites
    lines = text.splitlines(keepends=True)
    repl: List[Tuple[int, int]] = []
    significant = [t for t in toks if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT,
                                                      tokenize.INDENT, tokenize.DEDENT)]
    for i, tok in enumerate(significant):
        if tok.string != "async" or i == 0 or i + 1 >= len(significant):
            continue
        prev, nxt = significant[i - 1], significant[i + 1]
        if nxt.string == "=" and prev.string in ("(", ","):
            row, col = tok.start
            sites.append(Site("VF301", row, col + 1, lines[row - 1].strip()[:100], "async"))
            repl.append((row, col))
    if repl:
        for row, col in repl:
            line = lines[row - 1]
            lines[row - 1] = line[:col] + "asyn_" + line[col + 5:]
        text = "".join(lines)
    return text, sites


class _Imports:
    def __init__(self, tree: ast.AST):
        self.torch = set()  # names bound to the torch module
        self.autograd = set()  # names bound to torch.autograd
        self.variable_mod = set()  # names bound to torch.autograd.variable
        self.variable = set()  # names bound to torch.autograd.Variable
        self.any_torch = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == "torch" or a.name.startswith("torch."):
                        self.any_torch = True
                    if a.asname is None and (a.name == "torch" or a.name.startswith("torch.")):
                        self.torch.add("torch")
                    elif a.name == "torch":
                        self.torch.add(a.asname)
                    elif a.name == "torch.autograd":
                        self.autograd.add(a.asname)
                    elif a.name == "torch.autograd.variable":
                        self.variable_mod.add(a.asname)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                mod = node.module
                if mod == "torch" or mod.startswith("torch."):
                    self.any_torch = True
                for a in node.names:
                    local = a.asname or a.name
                    if mod == "torch" and a.name == "autograd":
                        self.autograd.add(local)
                    elif mod == "torch.autograd" and a.name == "variable":
                        self.variable_mod.add(local)
                    elif mod in ("torch.autograd", "torch.autograd.variable") and a.name == "Variable":
                        self.variable.add(local)
                    elif mod in ("torch.autograd", "torch.autograd.variable") and a.name == "*":
                        self.variable.add("Variable")

    def is_variable(self, func: ast.AST) -> bool:
        name = dotted(func)
        if name is None:
            return False
        if name in self.variable:
            return True
        for t in self.torch:
            if name in (f"{t}.autograd.Variable", f"{t}.autograd.variable.Variable"):
                return True
        for a in self.autograd:
            if name in (f"{a}.Variable", f"{a}.variable.Variable"):
                return True
        return any(name == f"{m}.Variable" for m in self.variable_mod)


def _wrappers(tree: ast.AST, imp: "_Imports") -> List[str]:
    """Names bound to a lambda or function that forwards `*args`/`**kwargs` into torch's
    Variable (`Variable = lambda *a, **k: autograd.Variable(*a, **k).cuda()`): a `volatile=`
    keyword passed to them reaches torch (SPEC 1 and 2.6)."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            body, targets = node.value, [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body, targets = node, [node.name]
        else:
            continue
        for call in ast.walk(body):
            if isinstance(call, ast.Call) and imp.is_variable(call.func) and (
                    any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args)):
                names.extend(targets)
                break
    return names


def _classify_flag(value: ast.AST) -> str:
    if isinstance(value, ast.Constant) and value.value is True:
        return "VF101"
    if isinstance(value, ast.Constant) and value.value in (False, None):
        return "VF102"
    return "VF103"


def _char_col(lines: List[str], row: int, byte_col: int) -> int:
    line = lines[row - 1] if 0 < row <= len(lines) else ""
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace")) + 1


def scan_ground_truth(text: str, torch_project: bool = False) -> GroundTruth:
    """The sites of one file. `torch_project`: another file of its tree imports torch, so a
    `.volatile` read here is a tensor's flag even if this file imports nothing of torch (a
    test helper asserting `batch.text.volatile`)."""
    gt = GroundTruth()
    parse_text, async_sites = _async_sites(text)
    gt.sites.extend(async_sites)
    try:
        tree = ast.parse(parse_text)
    except SyntaxError as exc:
        gt.parse_error = f"{exc.msg} (line {exc.lineno})"
        gt.regex_volatile = sum(1 for ln in text.splitlines()
                                if re.search(r"volatile\s*=|\.volatile\b", ln.split("#", 1)[0]))
        return gt
    lines = text.splitlines()
    imp = _Imports(tree)
    gt.imports_torch = imp.any_torch
    gt.wrappers = _wrappers(tree, imp)

    def site(code, node, kind="") -> Site:
        seg = ast.get_source_segment(parse_text, node) or ""
        return Site(code, node.lineno, _char_col(lines, node.lineno, node.col_offset),
                    seg.splitlines()[0][:100] if seg else "", kind)

    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == "Variable":
            gt.rebound_variable = True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "Variable" for t in targets):
                gt.rebound_variable = True
        if isinstance(node, ast.Call):
            name = dotted(node.func) or ""
            vol_kw = [k for k in node.keywords if k.arg == "volatile"]
            torch_var = imp.is_variable(node.func)
            via_wrapper = not torch_var and name.split(".")[-1] in gt.wrappers and bool(vol_kw)
            if via_wrapper:
                gt.sites.append(site(_classify_flag(vol_kw[0].value), node, f"via wrapper `{name}`"))
            elif torch_var:
                if vol_kw:
                    gt.sites.append(site(_classify_flag(vol_kw[0].value), node, "keyword"))
                elif len(node.args) >= 3 and not any(isinstance(a, ast.Starred) for a in node.args[:3]):
                    gt.sites.append(site(_classify_flag(node.args[2]), node, "positional"))
                elif any(k.arg is None for k in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
                    gt.splat_calls.append(site("splat", node, "Variable(*args/**kwargs): flag unknown"))
                else:
                    rg = [k for k in node.keywords if k.arg == "requires_grad"]
                    truthy = (rg and not (isinstance(rg[0].value, ast.Constant) and rg[0].value.value is False)) \
                        or (len(node.args) >= 2)
                    gt.sites.append(site("VF111" if truthy else "VF110", node, "wrapper"))
            elif name.split(".")[-1] == "Variable" and (vol_kw or len(node.args) >= 3):
                gt.lookalikes.append(site("lookalike", node, f"non-torch `{name}`"))
            elif vol_kw:
                gt.helper_calls.append(site("helper", node, f"`{name or '<expr>'}(..., volatile=...)`"))
            if name in ("getattr", "setattr", "hasattr") and len(node.args) >= 2 \
                    and isinstance(node.args[1], ast.Constant) and node.args[1].value == "volatile" \
                    and imp.any_torch:
                gt.sites.append(site("VF203", node, name))
            if name == "dict" and vol_kw:
                gt.lookalikes.append(site("dict", node, "dict(volatile=...)"))
            if name in ("isinstance",) and len(node.args) == 2 and imp.is_variable(node.args[1]):
                gt.sites.append(site("VF112", node, "isinstance"))
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 \
                and isinstance(node.ops[0], (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
            left, right = node.left, node.comparators[0]
            for a, b in ((left, right), (right, left)):
                if isinstance(a, ast.Call) and dotted(a.func) == "type" and imp.is_variable(b):
                    gt.sites.append(site("VF112", node, "type-compare"))
                    break
        elif isinstance(node, ast.Attribute) and node.attr == "volatile" and (imp.any_torch or torch_project):
            code = "VF201" if isinstance(node.ctx, ast.Load) else "VF202"
            gt.sites.append(site(code, node, type(node.ctx).__name__))
        elif isinstance(node, ast.Dict):
            for k in node.keys:
                if isinstance(k, ast.Constant) and k.value == "volatile":
                    gt.lookalikes.append(site("dict", node, "{'volatile': ...}"))
    return gt


# ---------------------------------------------------------------------------------------
# comparison


def match_sites(gt_sites: List[Site], diags) -> Tuple[list, list, list]:
    """Match ground-truth sites to diagnostics by code family, then row, then column.

    Returns (matched pairs, misses, false positives)."""
    def family(code):
        return "ctor" if code in CTOR_CODES else code
    pool = list(diags)
    matched, misses = [], []
    for s in sorted(gt_sites, key=lambda s: (s.row, s.col)):
        cands = [d for d in pool if family(d.code) == family(s.code) and d.location.row == s.row]
        exact = [d for d in cands if d.location.column == s.col]
        pick = (exact or cands or [None])[0]
        if pick is None:
            misses.append(s)
        else:
            pool.remove(pick)
            matched.append((s, pick))
    return matched, misses, pool


def comments(text: str) -> collections.Counter:
    out = collections.Counter()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.string.strip()] += 1
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


def indent_unit(text: str) -> str:
    tabs = sum(1 for ln in text.splitlines() if ln.startswith("\t"))
    spaces = sum(1 for ln in text.splitlines() if ln.startswith(" "))
    return "tab" if tabs > spaces else "space"


def added_grad_regions(before: str, after: str) -> List[dict]:
    """Regions (`with` blocks and decorated functions) naming a grad-mode manager that are
    new in `after`; for each, whether its body trains and how many statements it covers."""
    def regions(text):
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return []
        lines = text.splitlines()
        out = []
        for node in ast.walk(tree):
            head = None
            if isinstance(node, (ast.With, ast.AsyncWith)):
                head = " ".join(ast.get_source_segment(text, it.context_expr) or "" for it in node.items)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                decos = [ast.get_source_segment(text, d) or "" for d in node.decorator_list]
                if any(GRAD_REGION.search(d) for d in decos):
                    head = "@" + " @".join(decos)
            if head and GRAD_REGION.search(head):
                body = "\n".join(lines[node.body[0].lineno - 1:node.end_lineno])
                out.append({
                    "row": node.lineno, "head": head.strip(), "statements": len(node.body),
                    "lines": node.end_lineno - node.lineno + 1,
                    "trains": [p.pattern for p in TRAINING_PATTERNS if p.search(body)],
                    "has_return": any(isinstance(n, ast.Return) for n in ast.walk(node))
                    if isinstance(node, (ast.With, ast.AsyncWith)) else False,
                })
        return out
    old = collections.Counter(r["head"] for r in regions(before))
    new = []
    for r in regions(after):
        if old[r["head"]] > 0:
            old[r["head"]] -= 1
        else:
            new.append(r)
    return new


# ---------------------------------------------------------------------------------------
# notebooks (evaluated as one virtual file of their code cells)


def notebook_as_python(data: str) -> Optional[str]:
    try:
        nb = json.loads(data)
    except ValueError:
        return None
    parts = []
    for i, cell in enumerate(nb.get("cells", []), 1):
        if cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        out_lines = []
        for ln in src.splitlines():
            if ln.lstrip().startswith(("%", "!", "?")):
                ln = "#" + ln  # mask magics as comments
            out_lines.append(ln)
        parts.append(f"# --- cell {i} ---\n" + "\n".join(out_lines) + "\n")
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------
# per file


@dataclass
class FileReport:
    repo: str
    path: str
    parse_error: Optional[str] = None
    crash: Optional[str] = None
    found: Dict[str, int] = field(default_factory=dict)  # volfix findings per code
    truth: Dict[str, int] = field(default_factory=dict)  # ground truth per code
    misses: List[dict] = field(default_factory=list)
    false_positives: List[dict] = field(default_factory=list)
    code_mismatches: List[dict] = field(default_factory=list)
    lookalikes: List[dict] = field(default_factory=list)
    splat_reports: List[dict] = field(default_factory=list)  # VF203 on Variable(*a, **k) without volatile
    regex_volatile_unparsable: int = 0
    helper_calls: List[dict] = field(default_factory=list)
    rebound_variable: bool = False
    changed: bool = False
    fixed_compiles: Optional[bool] = None
    compile_error: Optional[str] = None
    idempotent: Optional[bool] = None
    resolved: int = 0  # volatile findings with no remaining finding after the fix
    remaining: List[dict] = field(default_factory=list)  # volatile findings left, with notes
    truth_after: Dict[str, int] = field(default_factory=dict)  # independent scan of the fixed text
    truth_after_sites: List[dict] = field(default_factory=list)
    lost_comments: List[str] = field(default_factory=list)
    new_regions: List[dict] = field(default_factory=list)
    indent_changed: bool = False
    crlf_changed: bool = False
    seconds: float = 0.0


def _is_splat(diag) -> bool:
    """VF203 reported on a `Variable(*args, **kwargs)` call (no `volatile` in sight)."""
    return diag.code == "VF203" and "`*`/`**`" in (diag.note or "")


def _d(diag) -> dict:
    return {"code": diag.code, "row": diag.location.row, "col": diag.location.column,
            "snippet": diag.snippet, "note": diag.note,
            "fix": diag.fix.applicability.value if diag.fix else None}


def evaluate_text(repo: str, rel: str, text: str, diff_dir: Optional[str]) -> FileReport:
    from volfix.api import check_source, fix_source

    rep = FileReport(repo=repo, path=rel)
    t0 = time.perf_counter()
    gt = scan_ground_truth(text)
    rep.parse_error = gt.parse_error
    rep.rebound_variable = gt.rebound_variable
    rep.truth = dict(collections.Counter(s.code for s in gt.sites))
    rep.lookalikes = [asdict(s) for s in gt.lookalikes]
    rep.regex_volatile_unparsable = gt.regex_volatile
    rep.helper_calls = [asdict(s) for s in gt.helper_calls]
    try:
        checked = check_source(text, path=rel)
    except Exception:  # a crash is exactly what we measure
        rep.crash = "check_source: " + traceback.format_exc(limit=3)
        return rep
    if checked.error:
        rep.crash = "check_source error: " + checked.error.splitlines()[0]
    diags = [d for d in checked.diagnostics if d.code in VOLATILE_CODES + SECONDARY_CODES]
    rep.found = dict(collections.Counter(d.code for d in checked.diagnostics))
    measured = [s for s in gt.sites if s.code in VOLATILE_CODES + SECONDARY_CODES]
    matched, misses, fps = match_sites(measured, diags)
    rep.misses = [asdict(s) for s in misses]
    splat_rows = {(c.row, c.col) for c in gt.splat_calls}
    rep.splat_reports = [_d(d) for d in fps if d.code == "VF203" and (d.location.row, d.location.column) in splat_rows]
    rep.false_positives = [_d(d) for d in fps if not (d.code == "VF203" and (d.location.row, d.location.column) in splat_rows)]
    rep.code_mismatches = [{"truth": s.code, "volfix": d.code, "row": s.row, "snippet": s.snippet}
                           for s, d in matched if s.code != d.code]

    try:
        fixed = fix_source(text, path=rel, unsafe_fixes=True)
    except Exception:
        rep.crash = "fix_source: " + traceback.format_exc(limit=3)
        return rep
    if fixed.error:
        rep.crash = "fix_source error: " + fixed.error.splitlines()[0]
    new = fixed.fixed_source if fixed.fixed_source is not None else text
    rep.changed = new != text
    vol_before = [d for d in checked.diagnostics if d.code in VOLATILE_CODES and not _is_splat(d)]
    vol_after = [d for d in fixed.diagnostics if d.code in VOLATILE_CODES and not _is_splat(d)]
    rep.resolved = max(0, len(vol_before) - len(vol_after))
    rep.remaining = [_d(d) for d in vol_after]
    if gt.parse_error is None:
        try:
            compile(new, rel, "exec", dont_inherit=True)
            rep.fixed_compiles = True
        except SyntaxError as exc:
            rep.fixed_compiles = False
            rep.compile_error = f"{exc.msg} (line {exc.lineno})"
    elif rep.changed:
        try:
            compile(new, rel, "exec", dont_inherit=True)
            rep.fixed_compiles = True
        except SyntaxError as exc:
            rep.fixed_compiles = False
            rep.compile_error = f"{exc.msg} (line {exc.lineno}); original did not parse either"
    try:
        again = fix_source(new, path=rel, unsafe_fixes=True)
        rep.idempotent = (again.fixed_source if again.fixed_source is not None else new) == new
    except Exception:
        rep.crash = (rep.crash or "") + " second fix_source: " + traceback.format_exc(limit=3)
    gt_after = scan_ground_truth(new)
    rep.truth_after = dict(collections.Counter(s.code for s in gt_after.sites if s.code in VOLATILE_CODES + ("VF301",)))
    rep.truth_after_sites = [asdict(s) for s in gt_after.sites if s.code in VOLATILE_CODES]
    if rep.changed:
        lost = comments(text) - comments(new)
        rep.lost_comments = sorted(lost.elements())
        rep.new_regions = added_grad_regions(text, new)
        rep.indent_changed = indent_unit(text) != indent_unit(new)
        rep.crlf_changed = text.count("\r\n") != new.count("\r\n") and "\r\n" in text
        if diff_dir:
            out = os.path.join(diff_dir, repo, rel + ".diff")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out, "w", encoding="utf-8") as fh:
                fh.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True),
                                                   f"a/{rel}", f"b/{rel}", n=4))
    rep.seconds = time.perf_counter() - t0
    return rep


def iter_files(root: str):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            if name.endswith((".py", ".ipynb")):
                yield os.path.join(dirpath, name)


def evaluate_repo(root: str, diff_dir: Optional[str]) -> List[FileReport]:
    repo = os.path.basename(os.path.normpath(root))
    reports = []
    for path in iter_files(root):
        rel = os.path.relpath(path, root)
        with open(path, "rb") as fh:
            data = fh.read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("latin-1")
        if path.endswith(".ipynb"):
            text = notebook_as_python(text)
            if text is None:
                continue
            rel += ".py"
        if not re.search(r"volatile|Variable|async", text):
            # cannot match: still counted as a file, and volfix must stay silent on it
            reports.append(evaluate_text(repo, rel, text, None))
            continue
        reports.append(evaluate_text(repo, rel, text, diff_dir))
    return reports


# ---------------------------------------------------------------------------------------
# summary


def summarize(repo: str, reps: List[FileReport]) -> dict:
    def total(attr, codes):
        return sum(getattr(r, attr).get(c, 0) for r in reps for c in codes)
    splat = sum(1 for r in reps for _ in r.splat_reports)
    found = total("found", VOLATILE_CODES) - splat
    truth = total("truth", VOLATILE_CODES)
    truth_after = sum(sum(r.truth_after.get(c, 0) for c in VOLATILE_CODES) for r in reps)
    resolved = truth - truth_after
    remaining = [dict(x, path=r.path) for r in reps for x in r.remaining]
    return {
        "repo": repo,
        "files": len(reps),
        "files_with_findings": sum(1 for r in reps if any(r.found.get(c) for c in VOLATILE_CODES)),
        "unparsable": sum(1 for r in reps if r.parse_error),
        "hidden_in_unparsable": sum(r.regex_volatile_unparsable for r in reps),
        "found": found,
        "found_by_code": {c: total("found", [c]) for c in VOLATILE_CODES + SECONDARY_CODES},
        "splat_reports": splat,
        "truth": truth,
        "truth_by_code": {c: total("truth", [c]) for c in VOLATILE_CODES + SECONDARY_CODES},
        "misses": sum(1 for r in reps for m in r.misses if m["code"] in VOLATILE_CODES),
        "false_positives": sum(1 for r in reps for f in r.false_positives if f["code"] in VOLATILE_CODES),
        "secondary_misses": sum(1 for r in reps for m in r.misses if m["code"] not in VOLATILE_CODES),
        "secondary_fps": sum(1 for r in reps for f in r.false_positives if f["code"] not in VOLATILE_CODES),
        "resolved": resolved,
        "resolved_pct": (100.0 * resolved / truth) if truth else None,
        "volfix_resolved": sum(r.resolved for r in reps),
        "remaining": len(remaining),
        "remaining_reasons": dict(collections.Counter(
            f"{x['code']}: {re.sub(r'`[^`]*`', '`…`', x['note'] or 'no note')[:90]}" for x in remaining)),
        "truth_after": truth_after,
        "async_before": total("truth", ["VF301"]),
        "async_after": sum(r.truth_after.get("VF301", 0) for r in reps),
        "compile_failures": sum(1 for r in reps if r.fixed_compiles is False),
        "idempotence_failures": sum(1 for r in reps if r.idempotent is False),
        "crashes": sum(1 for r in reps if r.crash),
        "changed_files": sum(1 for r in reps if r.changed),
        "new_regions": sum(len(r.new_regions) for r in reps),
        "regions_training": sum(1 for r in reps for g in r.new_regions if g["trains"]),
        "lost_comments": sum(len(r.lost_comments) for r in reps),
        "lookalikes": sum(len(r.lookalikes) for r in reps),
        "helper_calls": sum(len(r.helper_calls) for r in reps),
    }


def markdown_table(rows: List[dict]) -> str:
    head = ("| repo | files | truth | found | miss | FP | `*`/`**` reports | resolved (of truth) | "
            "volfix findings left | async= | compile fail | not idempotent | crash | new regions (training) "
            "| lost comments |")
    out = [head, "|" + "---|" * (head.count("|") - 1)]
    for s in rows:
        pct = "-" if s["resolved_pct"] is None else f"{s['resolved']} ({s['resolved_pct']:.0f}%)"
        out.append(f"| {s['repo']} | {s['files']} | {s['truth']} | {s['found']} | {s['misses']} | "
                   f"{s['false_positives']} | {s['splat_reports']} | {pct} | {s['remaining']} | "
                   f"{s['async_before']}→{s['async_after']} | {s['compile_failures']} | "
                   f"{s['idempotence_failures']} | {s['crashes']} | {s['new_regions']} ({s['regions_training']}) | "
                   f"{s['lost_comments']} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", help="repository checkouts (outside volfix's tree)")
    ap.add_argument("--out", default=None, help="directory for diffs (default: none written)")
    ap.add_argument("--json", default=None, help="write per-file records and summaries here")
    ap.add_argument("--details", action="store_true", help="print every discrepancy and remaining finding")
    args = ap.parse_args(argv)

    import volfix
    print(f"volfix {getattr(volfix, '__version__', '?')} from {os.path.dirname(volfix.__file__)}", file=sys.stderr)
    diff_dir = os.path.join(args.out, "diffs") if args.out else None
    summaries, all_reports = [], []
    for root in args.dirs:
        reps = evaluate_repo(root, diff_dir)
        all_reports.extend(reps)
        summaries.append(summarize(os.path.basename(os.path.normpath(root)), reps))
    keys = ("files", "found", "truth", "misses", "false_positives", "splat_reports", "resolved", "remaining",
            "async_before", "async_after", "compile_failures", "idempotence_failures", "crashes",
            "new_regions", "regions_training", "lost_comments")
    tot = {k: sum(s[k] for s in summaries) for k in keys}
    tot.update(repo="**total**", resolved_pct=(100.0 * tot["resolved"] / tot["truth"]) if tot["truth"] else None)
    print(markdown_table(summaries + [tot]))
    if args.details:
        for r in all_reports:
            items = ([("MISS", m) for m in r.misses] + [("FP", f) for f in r.false_positives]
                     + [("SPLAT", f) for f in r.splat_reports]
                     + [("STILL", x) for x in r.truth_after_sites]
                     + [("CODE", c) for c in r.code_mismatches] + [("LEFT", x) for x in r.remaining]
                     + [("LOOKALIKE", x) for x in r.lookalikes] + [("HELPER", x) for x in r.helper_calls]
                     + [("REGION", g) for g in r.new_regions if g["trains"]]
                     + [("LOSTCOMMENT", c) for c in r.lost_comments])
            flags = []
            if r.crash:
                flags.append(f"CRASH {r.crash.splitlines()[0]}")
            if r.fixed_compiles is False:
                flags.append(f"NOCOMPILE {r.compile_error}")
            if r.idempotent is False:
                flags.append("NOT-IDEMPOTENT")
            if r.parse_error:
                flags.append(f"UNPARSABLE {r.parse_error} volatile-lines={r.regex_volatile_unparsable} "
                             f"volfix={sorted(r.found)}")
            if items or flags:
                print(f"\n## {r.repo}/{r.path}  {' '.join(flags)}")
                for tag, x in items:
                    print(f"  {tag:11} {json.dumps(x, ensure_ascii=False)[:300]}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"summaries": summaries, "files": [asdict(r) for r in all_reports]}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
