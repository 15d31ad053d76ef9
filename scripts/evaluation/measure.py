#!/usr/bin/env python3
"""Measure a volfix checkout on the real-world corpus, the way users run it (issue 13).

    PYTHONPATH=/tmp/volfix-<sha> python scripts/evaluation measure [--manifest docs/eval-corpus.json]
        [--repos /work/evalrepos] [--human /work/evalhuman] [--pre] [--extra NAME=DIR ...]
        [--only-extra] [--repo OWNER/NAME ...] [--work DIR] [--json OUT.json] [--markdown OUT.md] [-j N]

Export the volfix commit to measure first (`git -C <checkout> archive <sha> | tar -x -C
/tmp/volfix-<sha>`): the script runs `python -m volfix` with the caller's PYTHONPATH, so any
checkout can be measured, and never the working tree of a shared checkout by accident (the
engine's location is printed and recorded).

Trees measured: every repository of the manifest (its snapshot, exported by eval_corpus.py to
REPOS/<owner>+<name>); with `--pre`, also the pre-migration tree of every human migration
(HUMAN/<owner>+<name>@<post>/pre, real legacy code of well-known projects); with `--extra`, any
directory (e.g. the installed torch package, for precision on modern code). For each tree,
two copies are made and volfix runs on the whole copy from its root, as a user runs it:

1. `volfix check .` (findings before any fix);
2. copy U: `volfix fix --unsafe-fixes .`, then the same command again (idempotence);
3. copy S: `volfix fix .` (safe fixes only), then again.

Then every `.py` and `.ipynb` (code cells joined, see eval_common) is read before and after, with
the independent ground truth of legacy_sites.py. Columns (per tree and in total):

* **sites**: volatile-family truth sites (`Variable(..., volatile=...)` through any resolved,
  wrapper or unresolved name; `.volatile` reads/writes; `getattr(x, "volatile")`...);
* **found**: sites a volfix finding (VF101-VF203) sits on (same family, same row);
  **FP**: volatile-family findings on no site (VF203 on `Variable(*a, **k)` counted apart);
* **resolved U / S**: sites the independent scanner no longer sees after the unsafe / the safe
  run (a helper left with `volatile=flag` because a caller cannot be covered stays unresolved);
* **helper calls**: calls that hand a true or run-time flag to a project helper
  (`get_batch(..., volatile=True)`, `get_batch(source, i, evaluation=True)`, see
  legacy_sites.flag_helpers), not counting a helper passing its own parameter on; **named**: those
  a volfix finding sits on (volfix reports a helper's volatile call where it is); **covered U**:
  those whose statement is inside a grad-mode region after the unsafe run;
* **no region U**: constructor sites with a true/run-time flag that the unsafe run unwrapped
  without any grad-mode region around their statement (or, when the statement only creates the
  tensor, around the first later statement that computes with it, `eval_common.probe_row`; a
  function whose every call in the file runs in a region counts as covered) (right when the value only feeds
  training or `.data`; otherwise graphs are recorded again: read them);
* **broken**: files that compiled before and do not after (notebooks: a code cell that parsed
  and no longer does, or a notebook that is no longer JSON); **not idem.**: files a second
  identical run changes; **crash**: volfix exited 2 or reported a volfix bug;
* **leftovers U / S**: what scripts/evaluation/leftovers.py finds in the changed files (only what the fix
  created), by kind in the details.

Markdown (tables, failures by pattern) goes to stdout or --markdown; --json keeps every site and
leftover with its path and row for triage. Nothing is written in the measured directories.
"""
from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import re
import shutil
import sys
import tempfile
import time
import warnings
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional, Tuple

from .common import (UnitText, Volfix, call_at, copy_tree, covered_through_callers, enclosing_region,  # noqa: E402
                         function_of, innermost_stmt_at,
                         iter_sources, line_map, mask_async, parents_of, parse, probe_row,
                         read_unit, region_header, tree_digest)
from .corpus import DEFAULT_MANIFEST, dir_name, human_dir_name, load_manifest  # noqa: E402
from .sites import CTOR_CODES, VOLATILE_CODES, FileSites, flag_helpers, sites_of, torch_tree  # noqa: E402
from .leftovers import scan_units  # noqa: E402


@dataclass
class TreeSpec:
    name: str
    path: str
    group: str  # snapshot | pre-migration | extra
    kind: str = ""
    source: str = ""
    patterns: List[str] = field(default_factory=list)


def family(code: str) -> str:
    return "ctor" if code in CTOR_CODES else code


# ---------------------------------------------------------------------------------------
# one file


def _compiles(unit: Optional[UnitText], path: str) -> Tuple[bool, str]:
    if unit is None:
        return False, "not readable (notebook no longer JSON?)"
    try:
        with warnings.catch_warnings():  # legacy code is full of SyntaxWarnings (`x is not 1`)
            warnings.simplefilter("ignore")
            compile(mask_async(unit.text), path, "exec", dont_inherit=True)
        return True, ""
    except (SyntaxError, ValueError) as exc:
        return False, f"{getattr(exc, 'msg', exc)} (line {getattr(exc, 'lineno', '?')})"


def _broken(before: Optional[UnitText], after: Optional[UnitText], path: str) -> Optional[str]:
    """Why the fixed file is broken, if it is (None: fine, or it was broken already)."""
    if before is None:
        return None
    if after is None:
        return "no longer readable"
    if before.cells is not None:
        newly = sorted(set(after.broken_cells) - set(before.broken_cells))
        return f"code cells {newly} no longer parse" if newly else None
    ok_before, _ = _compiles(before, path)
    ok_after, why = _compiles(after, path)
    return why if ok_before and not ok_after else None


_RELEVANT: Dict[tuple, "re.Pattern"] = {}


def _relevant(helpers: dict) -> "re.Pattern":
    """Text a file must contain to hold a site: the words of the ground truth, or a helper's name."""
    key = tuple(sorted(helpers))
    if key not in _RELEVANT:
        _RELEVANT[key] = re.compile(r"volatile|Variable|async" + "".join(r"|\b" + re.escape(n) + r"\b" for n in key))
    return _RELEVANT[key]


def _virtual_row(unit: UnitText, diag: dict) -> int:
    return unit.row_of(diag.get("cell"), diag["location"]["row"])


_PARSED: Dict[int, tuple] = {}


def _covered(fixed: UnitText, row_map: Dict[int, int], row: Optional[int]) -> Optional[bool]:
    """Is the statement at (original) `row` inside a grad-mode region of the fixed text? (`row`
    None: nothing computes with the value, no region is needed.)"""
    if row is None:
        return True
    if id(fixed) not in _PARSED:
        tree = parse(fixed.text)
        _PARSED.clear()  # one file at a time
        _PARSED[id(fixed)] = (fixed, tree, parents_of(tree) if tree else {})
    _unit, tree, par = _PARSED[id(fixed)]
    if tree is None:
        return None
    stmt = innermost_stmt_at(tree, row_map.get(row, row))
    if stmt is None:
        return False
    # the site's own statement may be gone (`x = Variable(x, volatile=True)` is dropped): its row
    # then maps onto the header of the region that replaced it
    return (region_header(stmt, human=True) or enclosing_region(stmt, par, human=True) is not None
            or covered_through_callers(tree, par, function_of(stmt, par)))


def _remaining_rows(before: UnitText, after: Optional[UnitText], after_sites: FileSites) -> collections.Counter:
    """(family, original row) of the truth sites still present after a fix."""
    out: collections.Counter = collections.Counter()
    if after is None:
        return out
    back = line_map(after.text, before.text)
    for s in after_sites.sites:
        out[(family(s.code), back.get(s.row, s.row))] += 1
    return out


def _where(unit: UnitText, row: int) -> dict:
    cell, r = unit.where(row)
    return {"cell": cell, "row": r} if cell is not None else {"row": r}


def evaluate_file(spec: TreeSpec, rel: str, copies: Dict[str, str], diags: Dict[str, Dict[str, List[dict]]],
                  changed: Dict[str, set], helpers: dict, torch_project: bool = False) -> dict:
    before = read_unit(os.path.join(spec.path, rel))
    rec = {"path": rel, "notebook": rel.endswith(".ipynb"), "sites": [], "helpers": [], "false_positives": [],
           "splat_reports": 0, "leftovers": {}, "broken": {}, "parse_error": None, "lookalikes": 0}
    if before is None:
        rec["parse_error"] = "not readable"
        return rec
    untouched = all(rel not in changed[v] for v in copies) and not diags["before"].get(rel)
    if untouched and not _relevant(helpers).search(before.text):
        return rec  # nothing legacy can be in it, and volfix neither reported nor changed anything
    sites = sites_of(before, helpers, torch_project)
    rec["parse_error"] = sites.parse_error
    rec["lookalikes"] = len(sites.lookalikes)
    found = [d for d in diags["before"].get(rel, []) if d["code"] in VOLATILE_CODES]
    pool = [(d, _virtual_row(before, d)) for d in found]
    after_units = {v: (read_unit(os.path.join(copies[v], rel)) if rel in changed[v] else before) for v in copies}
    after_sites = {v: (sites_of(u, torch_project=torch_project) if u is not None and rel in changed[v] else sites) for v, u in after_units.items()}
    remaining = {v: (_remaining_rows(before, after_units[v], after_sites[v]) if rel in changed[v]
                     else collections.Counter((family(s.code), s.row) for s in sites.sites)) for v in copies}
    maps = {v: (line_map(before.text, after_units[v].text) if after_units[v] is not None and rel in changed[v] else {})
            for v in copies}
    btree = parse(before.text)
    bpar = parents_of(btree) if btree is not None else {}

    def probe(row: int, col: int) -> Optional[int]:  # the statement whose coverage says the site is restored
        if btree is None:
            return row
        return probe_row(btree, bpar, row, call_at(btree, before.text, row, col))
    for s in sorted(sites.sites, key=lambda s: (s.row, s.col)):
        match = [p for p in pool if family(p[0]["code"]) == family(s.code) and p[1] == s.row]
        if not match and s.code == "VF203":  # a multi-line dict: volfix points at its `volatile` key
            match = [p for p in pool if p[0]["code"] == "VF203" and s.row < p[1] <= s.row + 5]
        hit = None
        if match:
            exact = [p for p in match if p[0]["location"]["column"] == s.col]
            hit = (exact or match)[0]
            pool.remove(hit)
        site = dict(_where(before, s.row), code=s.code, kind=s.kind, flag=s.flag, snippet=s.snippet,
                    pass_through=s.pass_through,
                    found=hit is not None, volfix_code=hit[0]["code"] if hit else None,
                    applicability=((hit[0].get("fix") or {}).get("applicability") if hit else None),
                    message=hit[0]["message"] if hit else None)
        for v in copies:
            key = (family(s.code), s.row)
            gone = remaining[v][key] == 0
            if not gone:
                remaining[v][key] -= 1
            site[f"resolved_{v}"] = gone
            if s.volatile and gone and after_units[v] is not None:
                site[f"covered_{v}"] = _covered(after_units[v], maps[v], probe(s.row, s.col)) if rel in changed[v] else False
        rec["sites"].append(site)
    helper_found = set()
    for h in sites.helpers:  # volfix names a helper's volatile call site where the call is
        hit = next((p for p in pool if p[1] == h.row), None)
        if hit is not None:
            pool.remove(hit)
            helper_found.add((h.row, h.col))
    for d, row in pool:
        if d["code"] == "VF203" and (row, d["location"]["column"]) in sites.splat_rows:
            rec["splat_reports"] += 1
        else:
            rec["false_positives"].append(dict(_where(before, row), code=d["code"], message=d["message"][:200]))
    for h in sites.helpers:
        if not h.volatile:
            continue
        item = dict(_where(before, h.row), kind=h.kind, flag=h.flag, snippet=h.snippet,
                    found=(h.row, h.col) in helper_found)
        for v in copies:
            item[f"covered_{v}"] = bool(after_units[v] is not None and rel in changed[v]
                                        and _covered(after_units[v], maps[v], probe(h.row, h.col)))
        rec["helpers"].append(item)
    for v in copies:
        if rel not in changed[v]:
            continue
        why = _broken(before, after_units[v], rel)
        if why:
            rec["broken"][v] = why
        if after_units[v] is not None:
            rec["leftovers"][v] = [asdict(x) for x in scan_units(before, after_units[v])]
    rec["new_regions"] = _new_regions(before, after_units.get("unsafe")) if rel in changed.get("unsafe", ()) else 0
    return rec


def _new_regions(before: UnitText, after: Optional[UnitText]) -> int:
    if after is None:
        return 0
    count = []
    for unit in (before, after):
        tree = parse(unit.text)
        count.append(sum(1 for n in ast.walk(tree) if region_header(n)) if tree else 0)
    return max(0, count[1] - count[0])


# ---------------------------------------------------------------------------------------
# one tree


def _by_path(run) -> Dict[str, List[dict]]:
    out: Dict[str, List[dict]] = collections.defaultdict(list)
    for d in run.diagnostics:
        out[d["path"]].append(d)
    return out


def evaluate_tree(spec: TreeSpec, volfix: Volfix, work: str) -> dict:
    t0 = time.perf_counter()
    copies = {"unsafe": os.path.join(work, "unsafe"), "safe": os.path.join(work, "safe")}
    for c in copies.values():
        copy_tree(spec.path, c)
    original = tree_digest(spec.path)
    result = {"name": spec.name, "group": spec.group, "kind": spec.kind, "source": spec.source,
              "patterns": spec.patterns, "crashes": [], "not_idempotent": {}, "remaining": {}}
    before = volfix.run("check", copies["unsafe"], ["--unsafe-fixes"])
    diags = {"before": _by_path(before)}
    changed = {}
    for v, extra in (("unsafe", ["--unsafe-fixes"]), ("safe", [])):
        first = volfix.run("fix", copies[v], extra)
        once = tree_digest(copies[v])
        second = volfix.run("fix", copies[v], extra)
        twice = tree_digest(copies[v])
        changed[v] = {p for p in once if once[p] != original.get(p)}
        result["not_idempotent"][v] = sorted(p for p in twice if twice[p] != once.get(p))
        result["remaining"][v] = [dict(path=d["path"], cell=d.get("cell"), row=d["location"]["row"], code=d["code"],
                                       message=d["message"]) for d in first.diagnostics if d["code"] in VOLATILE_CODES]
        for run, label in ((first, f"fix {v}"), (second, f"fix {v} (again)")):
            if run.crashed or "volfix bug" in run.stderr:
                result["crashes"].append(f"{label}: exit {run.returncode}: {run.stderr.strip()[-400:]}")
    if before.crashed or "volfix bug" in before.stderr:
        result["crashes"].append(f"check: exit {before.returncode}: {before.stderr.strip()[-400:]}")
    units = [u for u in (read_unit(os.path.join(spec.path, rel)) for rel in iter_sources(spec.path)) if u is not None]
    helpers = flag_helpers(units)
    torch_project = torch_tree(units)
    result["files"] = [evaluate_file(spec, rel, copies, diags, changed, helpers, torch_project)
                       for rel in iter_sources(spec.path)]
    result["changed"] = {v: sorted(changed[v]) for v in changed}
    result["seconds"] = round(time.perf_counter() - t0, 1)
    return result


# ---------------------------------------------------------------------------------------
# summaries


def summarize(r: dict) -> dict:
    files = r["files"]
    sites = [s for f in files for s in f["sites"]]
    helpers = [h for f in files for h in f["helpers"]]
    vol = [s for s in sites if s["code"] in ("VF101", "VF103") and not s["pass_through"]]
    left = {v: collections.Counter(x["kind"] for f in files for x in f["leftovers"].get(v, [])) for v in ("unsafe", "safe")}
    return {
        "name": r["name"], "group": r["group"], "kind": r["kind"],
        "files": len(files),
        "unparsable": sum(1 for f in files if f["parse_error"]),
        "sites": len(sites),
        "found": sum(s["found"] for s in sites),
        "fp": sum(len(f["false_positives"]) for f in files),
        "splat": sum(f["splat_reports"] for f in files),
        "resolved_unsafe": sum(s["resolved_unsafe"] for s in sites),
        "resolved_safe": sum(s["resolved_safe"] for s in sites),
        "helpers": len(helpers),
        "helpers_found": sum(h["found"] for h in helpers),
        "helpers_covered": sum(h["covered_unsafe"] for h in helpers),
        "no_region": sum(1 for s in vol if s["resolved_unsafe"] and s.get("covered_unsafe") is False),
        "broken_unsafe": sum(1 for f in files if "unsafe" in f["broken"]),
        "broken_safe": sum(1 for f in files if "safe" in f["broken"]),
        "not_idempotent": len(set(r["not_idempotent"]["unsafe"]) | set(r["not_idempotent"]["safe"])),
        "crashes": len(r["crashes"]),
        "changed": len(r["changed"]["unsafe"]),
        "new_regions": sum(f.get("new_regions", 0) for f in files),
        "leftovers_unsafe": sum(left["unsafe"].values()),
        "leftovers_safe": sum(left["safe"].values()),
        "leftover_kinds": dict(left["unsafe"]),
    }


COLUMNS = [("files", "files"), ("sites", "sites"), ("found", "found"), ("fp", "FP"), ("resolved_unsafe", "resolved U"),
           ("resolved_safe", "resolved S"), ("helpers", "helper calls"), ("helpers_found", "named"),
           ("helpers_covered", "covered U"),
           ("no_region", "no region U"), ("broken_unsafe", "broken U"), ("broken_safe", "broken S"),
           ("not_idempotent", "not idem."), ("crashes", "crash"), ("new_regions", "new regions"),
           ("leftovers_unsafe", "leftovers U"), ("leftovers_safe", "leftovers S")]


def pct(a: int, b: int) -> str:
    return f"{a} ({100 * a / b:.0f}%)" if b else f"{a}"


def table(rows: List[dict], title_total: str = "**total**") -> str:
    head = "| tree | " + " | ".join(label for _k, label in COLUMNS) + " |"
    out = [head, "|" + "---|" * (len(COLUMNS) + 1)]
    total = collections.Counter()
    for s in rows:
        total.update({k: s[k] for k, _ in COLUMNS})
        out.append(_row(s["name"], s))
    out.append(_row(title_total, total))
    return "\n".join(out)


def _row(name: str, s) -> str:
    cells = []
    for k, _label in COLUMNS:
        if k in ("resolved_unsafe", "resolved_safe", "found"):
            cells.append(pct(s[k], s["sites"]))
        elif k in ("helpers_covered", "helpers_found"):
            cells.append(pct(s[k], s["helpers"]))
        else:
            cells.append(str(s[k]))
    return f"| {name} | " + " | ".join(cells) + " |"


def normalize(message: str) -> str:
    """A remaining finding's message with names, numbers and paths blanked, to group reasons."""
    msg = re.sub(r"`[^`]*`", "`…`", message)
    msg = re.sub(r"\b[\w./-]+\.(py|ipynb)(:\d+)?", "<file>", msg)
    return re.sub(r"\d+", "N", msg)[:160]


def failures(results: List[dict]) -> str:
    out = ["### Sites not resolved by `fix --unsafe-fixes`, by volfix's reason\n"]
    reasons: Dict[str, List[str]] = collections.defaultdict(list)
    for r in results:
        for f in r["files"]:
            for s in f["sites"]:
                if not s["resolved_unsafe"]:
                    where = f"{r['name']}/{f['path']}" + (f"#cell{s['cell']}" if s.get("cell") else "") + f":{s['row']}"
                    reasons[normalize(s["message"] or "not found by volfix")].append(where)
    for reason, wheres in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
        out.append(f"- {len(wheres)} × {reason}: " + ", ".join(wheres[:6]) + (" …" if len(wheres) > 6 else ""))
    out.append("\n### Leftovers created by `fix --unsafe-fixes`, by kind\n")
    kinds: Dict[str, List[str]] = collections.defaultdict(list)
    for r in results:
        for f in r["files"]:
            for x in f["leftovers"].get("unsafe", []):
                where = f"{r['name']}/{f['path']}" + (f"#cell{x['cell']}" if x.get("cell") else "") + f":{x['row']}"
                kinds[x["kind"]].append(f"{where} `{x['text'][:60]}`")
    for kind, items in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
        out.append(f"- **{kind}** ({len(items)}): " + "; ".join(items[:5]) + (" …" if len(items) > 5 else ""))
    out.append("\n### Constructor sites unwrapped without a region (`fix --unsafe-fixes`)\n")
    for r in results:
        for f in r["files"]:
            for s in f["sites"]:
                if s["code"] in ("VF101", "VF103") and not s["pass_through"] and s["resolved_unsafe"] \
                        and s.get("covered_unsafe") is False:
                    cell = f"#cell{s['cell']}" if s.get("cell") else ""
                    out.append(f"- {r['name']}/{f['path']}{cell}:{s['row']} `{s['snippet'][:70]}`")
    broken = [(r["name"], f["path"], v, why) for r in results for f in r["files"] for v, why in f["broken"].items()]
    idem = [(r["name"], v, p) for r in results for v, ps in r["not_idempotent"].items() for p in ps]
    if broken or idem or any(r["crashes"] for r in results):
        out.append("\n### Broken, not idempotent, crashes\n")
        out += [f"- broken ({v}): {n}/{p}: {why}" for n, p, v, why in broken]
        out += [f"- not idempotent ({v}): {n}/{p}" for n, v, p in idem]
        out += [f"- crash: {r['name']}: {c}" for r in results for c in r["crashes"]]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------
# corpus


def trees(args) -> List[TreeSpec]:
    manifest = {"repos": []} if args.only_extra else load_manifest(args.manifest)
    out = []
    for e in manifest["repos"]:
        if args.repo and e["repo"] not in args.repo:
            continue
        path = os.path.join(args.repos, dir_name(e["repo"]))
        if os.path.isdir(path):
            out.append(TreeSpec(e["repo"], path, "snapshot", e["kind"], e["source"], e.get("patterns", [])))
        else:
            print(f"missing export {path} (run scripts/evaluation/corpus.py export)", file=sys.stderr)
        if args.pre:
            for mig in e.get("human_migrations", []):
                pre = os.path.join(args.human, human_dir_name(e["repo"], mig), "pre")
                if os.path.isdir(pre):
                    out.append(TreeSpec(f"{e['repo']}@{mig['pre'][:8]}", pre, "pre-migration", "legacy",
                                        e["source"], e.get("patterns", [])))
    for extra in args.extra or []:
        name, _, path = extra.partition("=")
        out.append(TreeSpec(name, path, "extra", "modern"))
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--manifest", default=DEFAULT_MANIFEST)
    ap.add_argument("--repos", default="/work/evalrepos")
    ap.add_argument("--human", default="/work/evalhuman")
    ap.add_argument("--pre", action="store_true", help="also measure the pre-migration trees")
    ap.add_argument("--extra", action="append", metavar="NAME=DIR", help="another directory to measure")
    ap.add_argument("--only-extra", action="store_true", help="measure the --extra directories only")
    ap.add_argument("--repo", action="append", help="only this repository (owner/name); repeatable")
    ap.add_argument("--work", help="keep the fixed copies here (default: a temporary directory)")
    ap.add_argument("--json", help="write every tree's details here")
    ap.add_argument("--markdown", help="write the tables here instead of stdout")
    ap.add_argument("-j", "--jobs", type=int, help="volfix --jobs")
    args = ap.parse_args(argv)
    volfix = Volfix(jobs=args.jobs)
    engine = volfix.describe()
    print(engine, file=sys.stderr)
    work = args.work or tempfile.mkdtemp(prefix="volfix-eval-")
    results = []
    try:
        for spec in trees(args):
            print(f"{spec.group:14} {spec.name}", file=sys.stderr, flush=True)
            results.append(evaluate_tree(spec, volfix, os.path.join(work, spec.name.replace("/", "+"))))
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    summaries = [summarize(r) for r in results]
    parts = [f"Engine: {engine}\n"]
    for group in ("snapshot", "pre-migration", "extra"):
        rows = [s for s in summaries if s["group"] == group]
        if rows:
            parts.append(f"\n## {group} trees ({len(rows)})\n\n" + table(rows))
    parts.append("\n## all trees\n\n" + table([dict(s, name=s["group"]) for s in _group_totals(summaries)]))
    parts.append("\n" + failures(results))
    text = "\n".join(parts) + "\n"
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"engine": engine, "summaries": summaries, "trees": results}, fh, indent=1)
    return 2 if any(r["crashes"] for r in results) else 0


def _group_totals(summaries: List[dict]) -> List[dict]:
    out = []
    for group in ("snapshot", "pre-migration", "extra"):
        rows = [s for s in summaries if s["group"] == group]
        if rows:
            tot = collections.Counter()
            for s in rows:
                tot.update({k: s[k] for k, _ in COLUMNS})
            out.append(dict(tot, group=f"{group} ({len(rows)})"))
    return out


if __name__ == "__main__":
    sys.exit(main())
