#!/usr/bin/env python3
"""Measure how volfix handles helpers that thread the volatile flag (SPEC §2.6) on real code.

    python scripts/evaluation helpers [--gt docs/helper-sites.json] [--repos /tmp/evalrepos]
                                        [--json OUT.json] [--repo OWNER/NAME ...] [--keep DIR] [-v]

The ground truth (docs/helper-sites.json, metadata only) lists, per repository, every helper or
wrapper definition that threads a volatile flag and every call site of it. The repositories
themselves live OUTSIDE this tree (default /tmp/evalrepos/<owner>+<name>); nothing is written
inside them: each one is copied to a temporary directory, then

1. `volfix check --format json --no-cache --unsafe-fixes` runs on the copy (the diagnostics
   and their notes, before any fix);
2. `volfix fix --unsafe-fixes --no-cache` rewrites the copy;
3. every labelled call site whose 0.3 volatility is true or decided at run time
   (`"volatile": "true" | "runtime"` in the ground truth) is classified, with `ast` on the fixed
   file:

   * **resolved end to end**: the helper no longer hands a `volatile=` to torch's Variable (for a
     wrapper: the call site no longer passes `volatile=`), and the call site's statement is inside
     a grad-mode region: a `with` on `torch.no_grad()`, `torch.set_grad_enabled(...)`,
     `torch.inference_mode()` (or `X if c else contextlib.nullcontext()` built from them), or a
     function decorated with one of them, looking no further out than the enclosing function;
   * **named unresolved**: not resolved, but a diagnostic (before the fix) says in a negative
     clause ("not covered", "cannot follow", "no fix", "not wrapped", ...) which lines it
     leaves: its own file and the site's line, `path:line` of another file, or it is located at
     the site itself;
   * **missed**: neither.

   Helper definitions are counted as fixed (no volatile left in them; for a `**kwargs` wrapper:
   no labelled call still passes `volatile=`), unfixed, or n/a (the definition never passed
   volatile to torch itself: it only forwards the flag to another helper). Call sites whose
   volatility is false are checked too: "false sites wrapped" counts those the fix put inside a
   new no_grad/set_grad_enabled region (over-covering: training code would stop recording).

Markdown tables (per repository, totals, and the list of sites not resolved) go to stdout;
`--json` writes every site's verdict. Rerun it after engine changes; it never changes the
ground truth. Exit status 0 unless volfix failed to run.
"""
from __future__ import annotations

import argparse
import ast
import collections
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

GRAD_FUNCS = {"no_grad", "set_grad_enabled", "inference_mode"}
NEGATIVE = re.compile(r"not covered|cannot|can't|could not|unresolved|no fix|not follow|manual|elsewhere|"
                      r"not wrapped|not resolved|review", re.I)
LINE_LIST = re.compile(r"\blines?\s+((?:\d+)(?:\s*(?:,|and|,\s*and)\s*\d+)*)")
ASYNC_KW = re.compile(r"\basync(\s*=)")
MAGIC = re.compile(r"^(\s*)([%!?])", re.M)


# ---------------------------------------------------------------------------------------
# running volfix

def volfix_cmd(args) -> List[str]:
    if args.volfix:
        return args.volfix.split()
    return [sys.executable, "-m", "volfix"]


def volfix_env() -> Dict[str, str]:
    env = dict(os.environ)
    if not env.get("PYTHONPATH"):  # the checkout this script belongs to, unless told otherwise
        env["PYTHONPATH"] = ROOT
    env.setdefault("NO_COLOR", "1")
    return env


def run_volfix(cmd: List[str], sub: str, path: str, extra: List[str]) -> Tuple[int, str, str]:
    p = subprocess.run(cmd + [sub, "--no-cache", "--exit-zero", "--color", "never"] + extra + [path],
                       capture_output=True, text=True, env=volfix_env(), timeout=3600)
    return p.returncode, p.stdout, p.stderr


# ---------------------------------------------------------------------------------------
# reading sources (a .py file, or one code cell of a notebook)

def read_unit(repo_dir: str, path: str, cell: Optional[int]) -> Optional[str]:
    full = os.path.join(repo_dir, path)
    try:
        with open(full, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    if cell is None:
        return text
    try:
        nb = json.loads(text)
        src = nb["cells"][cell - 1].get("source", "")
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    return "".join(src) if isinstance(src, list) else src


def parse(text: str, notebook: bool = False) -> Optional[ast.AST]:
    text = ASYNC_KW.sub(r"nonblock_\1", text)
    if notebook:  # IPython magics and shell escapes become comments (same line numbers)
        text = MAGIC.sub(r"\1#\2", text)
    try:
        return ast.parse(text)
    except SyntaxError:
        return None


def parents_of(tree: ast.AST) -> Dict[ast.AST, ast.AST]:
    par = {}
    for n in ast.walk(tree):
        for c in ast.iter_child_nodes(n):
            par[c] = n
    return par


def line_map(old: str, new: str) -> Dict[int, int]:
    """1-based line of `old` -> best line of `new` (indentation changes do not count)."""
    a = [ln.strip() for ln in old.splitlines()]
    b = [ln.strip() for ln in new.splitlines()]
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    res = {}
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        for k in range(i1, i2):
            if tag == "equal":
                res[k + 1] = j1 + (k - i1) + 1
            elif tag == "replace":  # the most similar line of the replacement
                best = max(range(j1, j2), key=lambda j: (difflib.SequenceMatcher(None, a[k], b[j]).ratio(), -abs(j - j1 - (k - i1))))
                res[k + 1] = best + 1
            else:  # delete
                res[k + 1] = max(j1, 1)
    return res


def seg(text: str, node: ast.AST) -> str:
    return ast.get_source_segment(text, node) or ""


# ---------------------------------------------------------------------------------------
# region checks

def is_grad_ctx(expr: ast.AST) -> bool:
    if isinstance(expr, ast.IfExp):
        return is_grad_ctx(expr.body) or is_grad_ctx(expr.orelse)
    if isinstance(expr, ast.Call):
        f = expr.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        return name in GRAD_FUNCS
    return False


def in_region(node: ast.AST, par: Dict[ast.AST, ast.AST]) -> bool:
    p = par.get(node)
    while p is not None:
        if isinstance(p, (ast.With, ast.AsyncWith)) and any(is_grad_ctx(it.context_expr) for it in p.items):
            return True
        if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return any(is_grad_ctx(d) for d in p.decorator_list)
        if isinstance(p, ast.Lambda):
            return False
        p = par.get(p)
    return False


TRAINING = re.compile(r"\.backward\(|\b\w*(?:optim|opt|optimizer)\w*\.step\(|autograd\.grad\(")


def region_leaks(node: ast.AST, par: Dict[ast.AST, ast.AST], text: str) -> List[str]:
    """Names assigned inside the `with` region around `node` and read after it, when the
    enclosing function trains: candidates for a region that switched off recording that a later
    `.backward()` needs (for a reviewer; targets and `.data` reads are fine)."""
    p, region, fn = par.get(node), None, None
    while p is not None:
        if region is None and isinstance(p, (ast.With, ast.AsyncWith)) and any(is_grad_ctx(i.context_expr) for i in p.items):
            region = p
        if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)):
            fn = p
            break
        p = par.get(p)
    scope = fn if fn is not None else None
    if region is None or scope is None or not TRAINING.search(seg(text, scope)):
        return []
    assigned = {n.id for st in region.body for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    later = {n.id for n in ast.walk(scope) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
             and n.lineno > (region.end_lineno or region.lineno)}
    return sorted(assigned & later)


def statement_of(node: ast.AST, par) -> ast.AST:
    while node is not None and not isinstance(node, ast.stmt):
        node = par.get(node)
    return node


def innermost_stmt_at(tree: ast.AST, line: int) -> Optional[ast.AST]:
    best = None
    for n in ast.walk(tree):
        if isinstance(n, ast.stmt) and n.lineno <= line <= (n.end_lineno or n.lineno):
            if best is None or (n.end_lineno - n.lineno) <= (best.end_lineno - best.lineno):
                best = n
    return best


def has_volatile(node: ast.AST) -> bool:
    """A call passing `volatile=` (or a 3rd positional to a *Variable), or a 'volatile' dict key."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            if any(k.arg == "volatile" for k in n.keywords):
                return True
            f = n.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name == "Variable" and len(n.args) >= 3:
                return True
        if isinstance(n, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == "volatile" for k in n.keys):
            return True
    return False


def torch_volatile(node: ast.AST, wrappers: set) -> bool:
    """Like has_volatile, but only calls of Variable / a known wrapper (not the flag handed to a helper)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name == "Variable" or name in wrappers:
                if any(k.arg == "volatile" for k in n.keywords) or (name == "Variable" and len(n.args) >= 3):
                    return True
        if isinstance(n, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == "volatile" for k in n.keys):
            return True
    return False


# ---------------------------------------------------------------------------------------
# locating labelled things in a (possibly rewritten) file

class Unit:
    """One file (or notebook cell) before and after the fix."""

    def __init__(self, orig_dir: str, fixed_dir: str, path: str, cell: Optional[int]):
        self.path, self.cell = path, cell
        self.old = read_unit(orig_dir, path, cell)
        self.new = read_unit(fixed_dir, path, cell)
        self.old_tree = parse(self.old, cell is not None) if self.old is not None else None
        self.new_tree = parse(self.new, cell is not None) if self.new is not None else None
        self.old_par = parents_of(self.old_tree) if self.old_tree else {}
        self.new_par = parents_of(self.new_tree) if self.new_tree else {}
        self.lmap = line_map(self.old, self.new) if self.old is not None and self.new is not None else {}

    def ok(self) -> bool:
        return self.old_tree is not None and self.new_tree is not None

    def old_call(self, line: int, col: int) -> Optional[ast.Call]:
        for n in ast.walk(self.old_tree):
            if isinstance(n, ast.Call) and n.lineno == line and n.col_offset + 1 == col:
                return n
        for n in ast.walk(self.old_tree):
            if isinstance(n, ast.Call) and n.lineno == line:
                return n
        return None

    def old_attr(self, line: int, col: int) -> Optional[ast.Attribute]:
        for n in ast.walk(self.old_tree):
            if isinstance(n, ast.Attribute) and n.lineno == line and n.col_offset + 1 == col:
                return n
        return None

    def new_line(self, line: int) -> int:
        return self.lmap.get(line, line)

    def find_new(self, line: int, pred, window: int = 6, like: str = "") -> Optional[ast.AST]:
        """The node of the fixed file matching `pred` near where `line` went; with `like`, the one
        whose source is most similar to it (the fix may have dropped a keyword), then the nearest."""
        target = self.new_line(line)
        best, key = None, None
        for n in ast.walk(self.new_tree):
            if pred(n) and abs(n.lineno - target) <= window:
                sim = difflib.SequenceMatcher(None, like, seg(self.new, n)).ratio() if like else 0.0
                k = (round(sim, 3), -abs(n.lineno - target))
                if key is None or k > key:
                    best, key = n, k
        return best


def def_node(tree: ast.AST, qualname: str, near: int) -> Optional[ast.AST]:
    parts = qualname.split(".")
    cands = []
    par = parents_of(tree)
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == parts[-1]:
            if len(parts) > 1:
                p = par.get(n)
                if not (isinstance(p, ast.ClassDef) and p.name == parts[-2]):
                    continue
            cands.append(n)
    if not cands:
        return None
    return min(cands, key=lambda n: abs(n.lineno - near))


# ---------------------------------------------------------------------------------------
# diagnostics

def named_lines(message: str) -> List[Tuple[bool, set, List[Tuple[str, int]]]]:
    """Per clause of a message: (negative?, lines it names, path:line pairs it names)."""
    res = []
    for clause in re.split(r";\s+", message):
        lines, refs = set(), []
        for m in LINE_LIST.finditer(clause):
            lines.update(int(x) for x in re.findall(r"\d+", m.group(1)))
        for m in re.finditer(r"([\w./-]+\.(?:py|ipynb)):(\d+)", clause):
            refs.append((m.group(1), int(m.group(2))))
        res.append((bool(NEGATIVE.search(clause)), lines, refs))
    return res


def named_by(diags: List[dict], path: str, cell: Optional[int], line: int) -> Optional[Tuple[str, str]]:
    """("negative" | "claimed", which diagnostic) if some diagnostic names the site.

    negative: a clause saying it is not covered / cannot be followed / no fix names the site's line
    (in its own file), `path:line` (from another file), or the diagnostic sits on the site and has
    such a clause. claimed: the site's line is named only in a clause that does not say so (e.g.
    "call sites at lines 12, 30 get the region") although the fixed file does not cover it."""
    base = os.path.basename(path)
    claimed = None
    for d in diags:
        same = d["_rel"] == path and (cell is None or d.get("cell") == cell)
        here = f"{d['code']} at {d['_rel']}{'#cell' + str(d['cell']) if d.get('cell') else ''}:{d['location']['row']}"
        # `--format json` gives the note (where the lines are named) a field of its own.
        text = "; ".join(part for part in (d.get("message", ""), d.get("note")) if part)
        for negative, lines, refs in named_lines(text):
            hit = (same and line in lines) or any(
                ln == line and (ref == path or ref.endswith("/" + path) or os.path.basename(ref) == base)
                for ref, ln in refs)
            if negative and (hit or (same and d["location"]["row"] == line)):
                return "negative", here
            if hit and claimed is None:
                claimed = ("claimed", here)
    return claimed


# ---------------------------------------------------------------------------------------
# evaluation of one repository

def evaluate_repo(entry: dict, helpers: List[dict], args, cmd: List[str]) -> dict:
    src_dir = os.path.join(args.repos, entry["dir"])
    result = dict(repo=entry["repo"], helpers=[], sites=[], error=None)
    if not os.path.isdir(src_dir):
        result["error"] = f"missing checkout {src_dir}"
        return result
    work = tempfile.mkdtemp(prefix="volfix-helpers-")
    copy = os.path.join(work, entry["dir"])
    try:
        shutil.copytree(src_dir, copy, symlinks=True, ignore=shutil.ignore_patterns(".git", "__pycache__"))
        rc, out, err = run_volfix(cmd, "check", copy, ["--format", "json", "--unsafe-fixes"])
        try:
            diags = json.loads(out or "[]")
        except ValueError:
            result["error"] = f"check output is not JSON (exit {rc}): {err.strip()[-300:]}"
            return result
        for d in diags:
            d["_rel"] = os.path.relpath(d["filename"], copy)
        rc, out, err = run_volfix(cmd, "fix", copy, ["--unsafe-fixes", "--format", "json", "--quiet"])
        if rc not in (0, 1):
            result["error"] = f"fix exited {rc}: {err.strip()[-300:]}"
            return result
        units: Dict[Tuple[str, Optional[int]], Unit] = {}

        def unit(path, cell):
            key = (path, cell)
            if key not in units:
                units[key] = Unit(src_dir, copy, path, cell)
            return units[key]

        wrappers = {h["name"].split(".")[-1] for h in helpers if h["kind"] == "wrapper"}
        for h in helpers:
            hv = judge_helper(h, unit, wrappers)
            result["helpers"].append(hv)
            for s in h["call_sites"]:
                sv = judge_site(h, s, hv, unit, diags)
                result["sites"].append(sv)
            if hv["status"] == "pending":
                # a **kwargs wrapper is fixed when no labelled call still passes volatile=
                left = [sv for sv in result["sites"] if sv["helper"] == hv["name"] and sv["helper_path"] == h["path"]
                        and sv.get("flag_left")]
                hv["status"] = "unfixed" if left else "fixed"
        for sv in result["sites"]:
            sv.pop("flag_left", None)
    finally:
        if args.keep:
            dest = os.path.join(args.keep, entry["dir"])
            shutil.rmtree(dest, ignore_errors=True)
            if os.path.isdir(copy):
                shutil.copytree(copy, dest, symlinks=True)
        shutil.rmtree(work, ignore_errors=True)
    return result


def judge_helper(h: dict, unit, wrappers: set) -> dict:
    hv = dict(name=h["name"], path=h["path"], line=h["line"], kind=h["kind"], status="unknown")
    if h.get("cell"):
        hv["cell"] = h["cell"]
    u = unit(h["path"], h.get("cell"))
    if not u.ok():
        hv["status"] = "unparsable"
        return hv
    if h["kind"] == "attribute":
        old = innermost_stmt_at(u.old_tree, h["line"])
        new = u.find_new(h["line"], lambda n: isinstance(n, ast.Assign) and any(
            seg(u.new, t) == h["name"] for t in n.targets), window=8)
        before = old is not None and has_volatile(old)
        if not before:
            hv["status"] = "n/a"
        else:
            hv["status"] = "unfixed" if new is None or has_volatile(new) else "fixed"
        return hv
    if h["kind"] == "wrapper" and not h.get("default_volatile"):
        hv["status"] = "pending"  # forwards **kwargs: decided from its call sites
        return hv
    old = def_node(u.old_tree, h["name"], h["line"])
    new = def_node(u.new_tree, h["name"], u.new_line(h["line"]))
    if old is None:
        hv["status"] = "not found"
        return hv
    before = torch_volatile(old, wrappers - {h["name"].split(".")[-1]})
    if not before:
        hv["status"] = "n/a"
    elif new is None:
        hv["status"] = "not found after fix"
    else:
        hv["status"] = "unfixed" if torch_volatile(new, wrappers - {h["name"].split(".")[-1]}) else "fixed"
    return hv


def judge_site(h: dict, s: dict, hv: dict, unit, diags: List[dict]) -> dict:
    sv = dict(repo=h["repo"], helper=h["name"], helper_path=h["path"], kind=h["kind"], path=s["path"], line=s["line"],
              col=s["col"], flag=s["flag"], volatile=s["volatile"], same_file=s["same_file"],
              trains=s.get("trains", False), verdict=None, reason="")
    if s.get("cell"):
        sv["cell"] = s["cell"]
    if s.get("passthrough_of"):
        sv["passthrough_of"] = s["passthrough_of"]
    u = unit(s["path"], s.get("cell"))
    if not u.ok():
        sv["verdict"] = "missed" if s["volatile"] in ("true", "runtime") else "not volatile"
        sv["reason"] = "file does not parse (before or after the fix)"
        return sv
    if h["kind"] == "attribute":
        old = u.old_attr(s["line"], s["col"])
        attr = h["name"].split(".")[-1]
        old_stmt = statement_of(old, u.old_par) if old is not None else None
        like = seg(u.old, old_stmt) if old_stmt is not None else ""
        stmt = u.find_new(s["line"], lambda n: isinstance(n, ast.stmt) and not isinstance(n, (ast.With, ast.If, ast.For, ast.While, ast.Try, ast.FunctionDef, ast.ClassDef)), like=like)
        new = None
        if stmt is not None:
            cands = [n for n in ast.walk(stmt) if isinstance(n, ast.Attribute) and n.attr == attr
                     and isinstance(n.value, ast.Name) and n.value.id == "self"]
            new = cands[0] if cands else stmt
    else:
        old = u.old_call(s["line"], s["col"])
        callee = s.get("callee") or ""
        like = seg(u.old, old) if old is not None else ""
        new = u.find_new(s["line"], lambda n: isinstance(n, ast.Call) and seg(u.new, n.func) == callee, like=like)
        if new is None:  # the call itself was rewritten away (a wrapper call unwrapped): find its statement
            old_stmt = statement_of(old, u.old_par) if old is not None else None
            new = u.find_new(s["line"], lambda n: isinstance(n, ast.stmt) and not isinstance(
                n, (ast.With, ast.If, ast.For, ast.While, ast.Try, ast.FunctionDef, ast.ClassDef)),
                like=seg(u.old, old_stmt) if old_stmt is not None else "")
    covered_before = old is not None and in_region(old, u.old_par)
    if new is None:
        new = innermost_stmt_at(u.new_tree, u.new_line(s["line"]))
    covered = new is not None and in_region(new, u.new_par)
    if h["kind"] == "wrapper" and new is not None:
        stmt = statement_of(new, u.new_par) if not isinstance(new, ast.stmt) else new
        node = new if isinstance(new, ast.Call) else stmt
        sv["flag_left"] = node is not None and isinstance(node, ast.Call) and any(
            k.arg == "volatile" for k in node.keywords)
    if s["volatile"] not in ("true", "runtime"):
        sv["verdict"] = "not volatile"
        if covered and not covered_before:
            sv["reason"] = "wrapped in a new grad-mode region although 0.3 recorded here"
            sv["over_covered"] = True
        return sv
    helper_ok = hv["status"] in ("fixed", "n/a", "pending")
    flag_ok = not sv.get("flag_left")
    if covered and helper_ok and flag_ok:
        sv["verdict"] = "resolved"
        sv["reason"] = "already inside a region before the fix" if covered_before else "inside a grad-mode region"
        leaks = [] if covered_before else region_leaks(new, u.new_par, u.new)
        if leaks:
            sv["review"] = ("the new region is in a function that trains and assigns names read after it: "
                            + ", ".join(f"`{x}`" for x in leaks) + " (if one of them needs grad, training breaks)")
        return sv
    why = []
    if not helper_ok:
        why.append(f"helper {hv['status']}")
    if not flag_ok:
        why.append("call still passes volatile=")
    if not covered:
        why.append("statement not in a grad-mode region")
    name = named_by(diags, s["path"], s.get("cell"), s["line"])
    if name:
        sv["verdict"] = "named"
        sv["named"] = name[0]
        sv["reason"] = "; ".join(why) + (f" (named as not covered by {name[1]})" if name[0] == "negative"
                                         else f" (its line is named by {name[1]}, in a clause that does not say it is left)")
    else:
        sv["verdict"], sv["reason"] = "missed", "; ".join(why)
    return sv


# ---------------------------------------------------------------------------------------
# report

def where(s: dict) -> str:
    return f"{s['path']}{'#cell' + str(s['cell']) if s.get('cell') else ''}:{s['line']}"


def report(results: List[dict], out=sys.stdout) -> dict:
    rows = []
    tot = collections.Counter()
    for r in results:
        c = collections.Counter()
        for hv in r["helpers"]:
            c["helpers"] += 1
            c["h_" + hv["status"].replace(" ", "_").replace("/", "")] += 1
        for sv in r["sites"]:
            c["sites"] += 1
            if sv["verdict"] == "not volatile":
                c["over"] += bool(sv.get("over_covered"))
                continue
            c["todo"] += 1
            c[sv["verdict"]] += 1
            c[("same_" if sv["same_file"] else "cross_") + sv["verdict"]] += 1
            c["claimed"] += sv.get("named") == "claimed"
        tot.update(c)
        rows.append((r, c))

    def pct(a, b):
        return f"{a} ({100 * a // b}%)" if b else "-"

    print("| repo | helpers | fixed / unfixed / n.a. | call sites | to resolve | resolved | named unresolved "
          "(of which only in a positive note) | missed | same-file r/n/m | cross-file r/n/m | false sites wrapped |", file=out)
    print("|---|---|---|---|---|---|---|---|---|---|---|", file=out)

    def line(name, c, err=None):
        print(f"| {name}{' (error: ' + err + ')' if err else ''} | {c['helpers']} | {c['h_fixed']} / {c['h_unfixed']} / "
              f"{c['h_na']} | {c['sites']} | {c['todo']} | {pct(c['resolved'], c['todo'])} | {pct(c['named'], c['todo'])} ({c['claimed']}) | "
              f"{pct(c['missed'], c['todo'])} | {c['same_resolved']}/{c['same_named']}/{c['same_missed']} | "
              f"{c['cross_resolved']}/{c['cross_named']}/{c['cross_missed']} | {c['over']} |", file=out)

    for r, c in rows:
        line(r["repo"], c, r.get("error"))
    line("**total**", tot)
    other = {k: v for k, v in tot.items() if k.startswith("h_") and k not in ("h_fixed", "h_unfixed", "h_na")}
    if other:
        print(f"\nOther helper states: {dict(other)}", file=out)

    by_kind = collections.defaultdict(collections.Counter)
    for r in results:
        for sv in r["sites"]:
            if sv["verdict"] != "not volatile":
                by_kind[sv["kind"]]["todo"] += 1
                by_kind[sv["kind"]][sv["verdict"]] += 1
    print("\n| kind | to resolve | resolved | named unresolved | missed |\n|---|---|---|---|---|", file=out)
    for k in sorted(by_kind):
        c = by_kind[k]
        print(f"| {k} | {c['todo']} | {c['resolved']} | {c['named']} | {c['missed']} |", file=out)

    print("\nSites not resolved end to end (and resolved ones to review):\n", file=out)
    for r in results:
        for sv in r["sites"]:
            if sv["verdict"] in ("named", "missed"):
                print(f"- {r['repo']} `{where(sv)}` ({sv['kind']} `{sv['helper']}`, flag {sv['flag']}"
                      f"{', trains' if sv['trains'] else ''}): **{sv['verdict']}**: {sv['reason']}", file=out)
            elif sv.get("review"):
                print(f"- {r['repo']} `{where(sv)}` ({sv['kind']} `{sv['helper']}`, flag {sv['flag']}): **resolved, review**: "
                      f"{sv['review']}", file=out)
            elif sv.get("over_covered"):
                print(f"- {r['repo']} `{where(sv)}` (flag {sv['flag']}): **over-covered**: {sv['reason']}", file=out)
    return dict(tot)


def describe_engine(cmd: List[str]) -> str:
    """Version of the volfix that runs, and the commit of the checkout it is imported from."""
    p = subprocess.run(cmd + ["--version"], capture_output=True, text=True, env=volfix_env())
    version = (p.stdout or p.stderr).strip()
    probe = subprocess.run([sys.executable, "-c", "import volfix, os; print(os.path.dirname(os.path.dirname(volfix.__file__)))"],
                           capture_output=True, text=True, env=volfix_env())
    where_ = probe.stdout.strip()
    info = f"{version} from {where_}"
    head = subprocess.run(["git", "-C", where_, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0:
        dirty = subprocess.run(["git", "-C", where_, "status", "--porcelain", "--", "volfix"],
                               capture_output=True, text=True).stdout.strip()
        info += f", commit {head.stdout.strip()}" + (" + uncommitted changes under volfix/" if dirty else "")
    return info


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gt", default=os.path.join(ROOT, "docs", "helper-sites.json"))
    ap.add_argument("--repos", default="/tmp/evalrepos", help="directory holding the <owner>+<name> checkouts")
    ap.add_argument("--json", help="write every verdict to this file")
    ap.add_argument("--repo", action="append", help="only this repository (owner/name); repeatable")
    ap.add_argument("--keep", help="copy the fixed repositories here for inspection")
    ap.add_argument("--volfix", help="command that runs volfix (default: python -m volfix, "
                                     "with PYTHONPATH=<this checkout> unless PYTHONPATH is set)")
    args = ap.parse_args(argv)
    with open(args.gt, encoding="utf-8") as f:
        gt = json.load(f)
    cmd = volfix_cmd(args)
    engine = describe_engine(cmd)
    print(f"volfix: {engine}\n")
    results = []
    failed = False
    for entry in gt["repos"]:
        if args.repo and entry["repo"] not in args.repo:
            continue
        helpers = [h for h in gt["helpers"] if h["repo"] == entry["repo"]]
        print(f"evaluating {entry['repo']} ({len(helpers)} helpers)", file=sys.stderr)
        r = evaluate_repo(entry, helpers, args, cmd)
        failed |= bool(r["error"])
        results.append(r)
    totals = report(results)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(dict(engine=engine, ground_truth=os.path.relpath(args.gt, ROOT), totals=totals,
                           results=results), f, indent=1)
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
