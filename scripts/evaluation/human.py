#!/usr/bin/env python3
"""Compare volfix with the humans who migrated real repositories, site by site (issue 13).

    PYTHONPATH=/tmp/volfix-<sha> python scripts/evaluation human [--manifest docs/eval-corpus.json]
        [--human /work/evalhuman] [--repo OWNER/NAME ...] [--judgments docs/human-comparison.json]
        [--json OUT.json] [--markdown OUT.md] [--write-judgments] [--work DIR]

For every human migration of the manifest, eval_corpus.py exported the tree before it (`pre`) and
the migration commit itself (`post`). volfix runs on two copies of `pre`, from their root, as a
user would (`volfix fix --unsafe-fixes .` and `volfix fix .`), after a `volfix check .` whose
notes are kept. Every volatile-family site of `pre` (legacy_sites.py: `Variable(...,
volatile=...)`, `.volatile` reads and writes, dynamic access, and calls handing a volatile flag to
a project helper) is then looked up, through a line map of its file, in three versions: the
human's (`post`), volfix's unsafe run (`U`) and volfix's safe run (`S`).

Evidence, per version (automatic):

* `state`:
  - **restored**: the legacy flag is gone and the site's statement runs inside a grad-mode region
    (`with torch.no_grad()`, `set_grad_enabled(...)`, `inference_mode()`, a decorator, a project
    shim whose name says no_grad, or every call of the enclosing function in the file running in
    such a region: `with torch.no_grad(): self.visualize_results(epoch)`), with no problem below;
    "the statement" is the first one that computes with the value (eval_common.probe_row: the site
    itself, a later statement reading the name it assigned, or a read of the `self.<attr>` it
    assigned in another method of the class); when nothing computes with the value and it does not
    leave the function (it is only moved, or read through `.data`), no region is needed and
    unwrapping restores the site;
  - **restored-with-issues**: restored, but the region contains a training step, computes nothing
    (empty), is nested in another region, or the leftover scanner reports something on the site's
    rows or at the region's header;
  - **unwrapped**: the flag is gone, no region covers the statement: graphs are recorded again
    (right only when the value feeds training or leaves through `.data`; the manual judgment says);
  - **left**: the legacy code is still there (for volfix: with its diagnostic; for a human: the
    warning stays, or a version-gated branch kept it);
  - **gone**: the human deleted the file or the function (the site is not judged);
  - for `.volatile` reads and writes, **rewritten** (the flag is gone; `text` shows the new row);
  - for non-volatile sites (`volatile=False`, a helper called with a false flag) and for sites
    that only pass a helper's flag on (`volatile=not for_training` inside `as_tensor(...,
    for_training)`: the region belongs at the helper's call sites, judged on their own):
    **clean** (flag gone, no new region) or **over-covered** (a new region now stops recording).
* `region`: form (with / decorator), header, rows covered, statements; `trains`, `empty`,
  `nested`; `leftovers` on the site or the region header.

Rubric (the automatic verdict; a manual judgment in --judgments overrides it and says why):

* a version is **good** when its state is `restored` (volatile sites), `clean` (non-volatile
  sites) or, for `.volatile` reads/writes, `rewritten` into what the read meant;
* **better**: volfix (unsafe run) good, the human not (a human who only deleted `volatile=True`
  keeps recording graphs: worse than a correct volfix region);
* **equal**: both good, or both `restored-with-issues` with the same issues;
* **worse**: the human good, volfix not (including volfix restoring with issues the human avoided);
* **both-unresolved**: neither good (an `unwrapped` value that only feeds training counts as
  good for whoever did it: that is the manual judgment's call);
* **n/a**: the human removed the code;
* `.volatile` reads and writes always need a manual judgment (`undecided` until then).

The target of issue 13: volfix equal or better at >= 90% of the judged sites, i.e.
(better + equal) / (better + equal + worse + both-unresolved).

`--write-judgments` merges the automatic verdicts into the judgments file (metadata only: repo,
migration, path, cell, row, column, code, automatic verdict, verdict, one-line reason), keeping
every reviewed verdict (one with a reason) and refreshing the automatic ones.
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
from typing import Dict, List, Optional, Tuple

from .common import (UnitText, Volfix, call_at, copy_tree, covered_through_callers, enclosing_region,  # noqa: E402
                         function_of, innermost_stmt_at, iter_sources, line_map, parents_of, parse, probe_row,
                         read_unit, region_header)
from .corpus import DEFAULT_MANIFEST, human_dir_name, load_manifest  # noqa: E402
from .sites import CTOR_CODES, Site, flag_helpers, sites_of, torch_tree  # noqa: E402
from .leftovers import scan_units  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_JUDGMENTS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "docs", "human-comparison.json")
VERSIONS = ("human", "unsafe", "safe")
GOOD = {"restored", "clean", "rewritten"}


def family(code: str) -> str:
    return "ctor" if code in CTOR_CODES else code


class Version:
    """One version of one file (`pre` mapped into it), parsed once."""

    def __init__(self, pre: UnitText, unit: Optional[UnitText], changed: bool, helpers: dict, defined: set,
                 torch_project: bool = False):
        self.helpers, self.defined = helpers, defined
        self.pre = pre
        self.unit = unit
        self.changed = changed
        self.tree = parse(unit.text) if unit is not None else None
        self.par = parents_of(self.tree) if self.tree is not None else {}
        self.map = line_map(pre.text, unit.text) if unit is not None and changed else {}
        self.back = line_map(unit.text, pre.text) if unit is not None and changed else {}
        # the helpers of this version's whole tree: a helper call stays legacy while its callee
        # (in whatever file) still turns the flag into `volatile=`
        self.sites = sites_of(unit, helpers, torch_project) if unit is not None else None
        self.leftovers = scan_units(pre, unit) if unit is not None and changed else []

    def row(self, pre_row: int) -> int:
        return self.map.get(pre_row, pre_row)

    def legacy_left(self, site: Site) -> bool:
        if self.sites is None:
            return False
        if site.code != "helper":
            pool = self.sites.sites
        else:  # a call still passing `volatile=True` is legacy only while its callee still uses the flag
            pool = [h for h in self.sites.helpers if _callee(h) in self.helpers or _callee(h) not in self.defined]
        return any(family(s.code) == family(site.code) and self.back.get(s.row, s.row) == site.row for s in pool)

    def function_names(self) -> set:
        if self.tree is None:
            return set()
        return {n.name for n in ast.walk(self.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _callee(site: Site) -> str:
    m = re.match(r"\s*([\w.]+)\s*\(", site.snippet)
    return m.group(1).split(".")[-1] if m else ""


def _defined_functions(units) -> set:
    out = set()
    for unit in units:
        tree = parse(unit.text)
        if tree is not None:
            out |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return out


def _region_info(version: Version, region: ast.AST, site_rows: Tuple[int, int]) -> dict:
    text = version.unit.text
    if isinstance(region, (ast.With, ast.AsyncWith)):
        form, header = "with", " ".join(ast.get_source_segment(text, it.context_expr) or "" for it in region.items)
        head_row = region.lineno
    else:
        form, header = "decorator", " ".join(ast.get_source_segment(text, d) or "" for d in region.decorator_list)
        head_row = min(d.lineno for d in region.decorator_list)
    first, last = region.body[0].lineno, max(s.end_lineno or s.lineno for s in region.body)
    kinds = collections.Counter()
    for item in version.leftovers:
        row = version.unit.row_of(item.cell, item.row)
        if row == head_row or site_rows[0] <= row <= site_rows[1]:
            kinds[item.kind] += 1
    nested = False
    p = version.par.get(region)
    while p is not None:
        if region_header(p, human=True):
            nested = True
            break
        p = version.par.get(p)
    return {"form": form, "header": header.strip()[:80], "row": head_row, "rows": last - first + 1,
            "statements": len(region.body), "trains": kinds["region-trains"] > 0, "empty": kinds["empty-region"] > 0,
            "nested": nested, "leftovers": sorted(kinds)}


def outcome(version: Version, site: Site, probe: Optional[int], pre_fn: Optional[str], who: str) -> dict:
    """What one version did with a site of `pre` (`probe`: the row of `pre` whose coverage tells
    whether the site is restored, see eval_common.probe_row)."""
    if version.unit is None:
        return {"state": "gone" if who == "human" else "missing", "why": "file not in this version"}
    if version.tree is None:
        return {"state": "unparsable", "why": "this version of the file does not parse"}
    if who == "human" and pre_fn and pre_fn not in version.function_names():
        return {"state": "gone", "why": f"function `{pre_fn}` not in this version"}
    row = version.row(site.row)
    stmt = innermost_stmt_at(version.tree, version.row(probe if probe is not None else site.row))
    region = None
    if stmt is not None:
        region = stmt if region_header(stmt, human=True) else enclosing_region(stmt, version.par, human=True)
    lines = version.unit.text.splitlines()
    out = {"row": version.unit.where(row)[1], "text": lines[row - 1].strip()[:100] if 0 < row <= len(lines) else ""}
    left = version.legacy_left(site)
    if region is not None:
        span = (stmt.lineno, stmt.end_lineno or stmt.lineno) if stmt is not None else (row, row)
        out["region"] = _region_info(version, region, span)
        out["new_region"] = bool(version.changed and region is not None and _is_new(version, region))
    elif stmt is not None and covered_through_callers(version.tree, version.par, function_of(stmt, version.par)):
        fn = function_of(stmt, version.par)
        region = fn
        out["region"] = {"form": "callers", "header": f"every call of `{fn.name}` runs in a region", "row": fn.lineno,
                         "rows": (fn.end_lineno or fn.lineno) - fn.lineno + 1, "statements": len(fn.body),
                         "trains": False, "empty": False, "nested": False, "leftovers": []}
    site_leftovers = sorted({i.kind for i in version.leftovers
                             if abs(version.unit.row_of(i.cell, i.row) - row) <= 1 and not i.kind.startswith("region")})
    if site_leftovers:
        out["leftovers"] = site_leftovers
    if site.code in ("VF201", "VF202", "VF203"):
        out["state"] = "left" if left else "rewritten"
        return out
    if not site.volatile:  # volatile=False, a false flag, or a helper passing its caller's flag on
        out["state"] = "left" if left else ("over-covered" if out.get("new_region") else "clean")
        return out
    if left:
        out["state"] = "left"
    elif probe is None and region is None:  # nothing computes with the value: unwrapping is the fix
        out["state"] = "restored"
        out["region"] = {"form": "none needed", "header": "", "row": row, "rows": 0, "statements": 0,
                         "trains": False, "empty": False, "nested": False, "leftovers": []}
    elif region is None:
        out["state"] = "unwrapped"
    else:
        r = out["region"]
        issues = r["trains"] or r["empty"] or r["nested"] or r["leftovers"] or site_leftovers
        out["state"] = "restored-with-issues" if issues else "restored"
    return out


def _is_new(version: Version, region: ast.AST) -> bool:
    """The region's header row is not an unchanged row of `pre`."""
    head = region.lineno if isinstance(region, (ast.With, ast.AsyncWith)) else min(d.lineno for d in region.decorator_list)
    return head not in version.back or version.pre.text.splitlines()[version.back[head] - 1].strip() != \
        version.unit.text.splitlines()[head - 1].strip()


def auto_verdict(site: Site, outs: Dict[str, dict]) -> str:
    h, v = outs["human"], outs["unsafe"]
    if h["state"] == "gone":
        return "n/a"
    if site.code in ("VF201", "VF202", "VF203"):
        return "undecided"
    hg, vg = h["state"] in GOOD, v["state"] in GOOD
    if vg and not hg:
        return "better"
    if hg and not vg:
        return "worse"
    if hg and vg:
        return "equal"
    if h["state"] == v["state"] == "restored-with-issues":
        return "equal" if h["region"]["leftovers"] == v["region"]["leftovers"] else "undecided"
    if v["state"] == "restored-with-issues" and h["state"] in ("unwrapped", "left"):
        return "undecided"
    return "both-unresolved"


# ---------------------------------------------------------------------------------------
# one migration


def compare_migration(repo: str, mig: dict, base: str, volfix: Volfix, work: str) -> List[dict]:
    pre_dir, post_dir = os.path.join(base, "pre"), os.path.join(base, "post")
    copies = {"unsafe": os.path.join(work, "unsafe"), "safe": os.path.join(work, "safe")}
    for c in copies.values():
        copy_tree(pre_dir, c)
    check = volfix.run("check", copies["unsafe"], ["--unsafe-fixes"])
    notes = collections.defaultdict(list)
    for d in check.diagnostics:
        notes[d["path"]].append(d)
    volfix.run("fix", copies["unsafe"], ["--unsafe-fixes"])
    volfix.run("fix", copies["safe"])
    rows = []
    roots = {"pre": pre_dir, "human": post_dir, **copies}
    units = {who: [u for u in (read_unit(os.path.join(root, rel)) for rel in iter_sources(root)) if u]
             for who, root in roots.items()}
    helpers = {who: flag_helpers(units[who]) for who in roots}
    defined = {who: _defined_functions(units[who]) for who in roots}
    torch_project = {who: torch_tree(units[who]) for who in roots}
    for rel in iter_sources(pre_dir):
        pre = read_unit(os.path.join(pre_dir, rel))
        if pre is None:
            continue
        sites = sites_of(pre, helpers["pre"], torch_project["pre"])
        todo = sites.sites + sites.helpers
        if not todo:
            continue
        pre_tree = parse(pre.text)
        pre_par = parents_of(pre_tree) if pre_tree is not None else {}
        versions = {}
        for who, root in (("human", post_dir), ("unsafe", copies["unsafe"]), ("safe", copies["safe"])):
            unit = read_unit(os.path.join(root, rel))
            versions[who] = Version(pre, unit, unit is not None and unit.text != pre.text, helpers[who], defined[who],
                                    torch_project[who])
        for site in sorted(todo, key=lambda s: (s.row, s.col)):
            stmt = innermost_stmt_at(pre_tree, site.row) if pre_tree is not None else None
            fn = function_of(stmt, pre_par) if stmt is not None else None
            cell, row = pre.where(site.row)
            node = call_at(pre_tree, pre.text, site.row, site.col) if pre_tree is not None else None
            probe = probe_row(pre_tree, pre_par, site.row, node) if pre_tree is not None else site.row
            outs = {who: outcome(versions[who], site, probe, fn.name if fn else None, who) for who in VERSIONS}
            note = [d["message"] for d in notes.get(rel, [])
                    if pre.row_of(d.get("cell"), d["location"]["row"]) == site.row and d["code"].startswith("VF")]
            rows.append({"repo": repo, "migration": mig["post"][:8], "path": rel, "cell": cell, "row": row, "col": site.col,
                         "code": site.code, "kind": site.kind, "flag": site.flag, "volatile": site.volatile,
                         "pass_through": site.pass_through,
                         "snippet": site.snippet[:100], "function": fn.name if fn else "<module>",
                         "volfix_note": note[0][:300] if note else None, **{who: outs[who] for who in VERSIONS},
                         "auto": auto_verdict(site, outs)})
    return rows


# ---------------------------------------------------------------------------------------
# judgments and report


def site_key(r: dict) -> Tuple:
    return (r["repo"], r["migration"], r["path"], r.get("cell"), r["row"], r.get("col"), r["code"])


def load_judgments(path: str) -> Dict[Tuple, dict]:
    if not path or not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    return {site_key(j): j for j in data.get("sites", [])}


def write_judgments(path: str, rows: List[dict], old: Dict[Tuple, dict], engine: str) -> None:
    sites = []
    for r in rows:
        prev = old.get(site_key(r), {})
        manual = bool(prev.get("reason"))  # a reviewed verdict always comes with its reason
        item = {"repo": r["repo"], "migration": r["migration"], "path": r["path"], "cell": r.get("cell"),
                "row": r["row"], "col": r["col"], "code": r["code"], "auto": r["auto"],
                "verdict": prev["verdict"] if manual else r["auto"], "reason": prev.get("reason", "")}
        if prev.get("human"):
            item["human"] = prev["human"]
        sites.append(item)
    doc = {"description": "Site-by-site comparison of volfix with human migrations (scripts/evaluation/human.py). "
                          "Metadata only. `auto` is the script's verdict from the evidence, `verdict` the "
                          "reviewed one (better / equal / worse / both-unresolved / n/a), `reason` says why "
                          "in one line; `human` the reviewer's short description of what the human did.",
           "engine": engine, "sites": sites}
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1, ensure_ascii=False)
        fh.write("\n")


def report(rows: List[dict], judgments: Dict[Tuple, dict]) -> str:
    per = collections.defaultdict(collections.Counter)
    for r in rows:
        j = judgments.get(site_key(r)) or {}
        r["verdict"] = j["verdict"] if j.get("reason") else r["auto"]  # reviewed verdicts carry a reason
        r["reason"] = j.get("reason", "")
        per[f"{r['repo']}@{r['migration']}"][r["verdict"]] += 1
    cols = ["better", "equal", "worse", "both-unresolved", "undecided", "n/a"]
    out = ["| migration | sites | " + " | ".join(cols) + " | equal or better |", "|" + "---|" * (len(cols) + 3)]
    tot = collections.Counter()
    for name, c in sorted(per.items()):
        tot.update(c)
        out.append(_line(name, c, cols))
    out.append(_line("**total**", tot, cols))
    out.append("\n| version | " + " | ".join(["restored", "restored-with-issues", "unwrapped", "left", "rewritten",
                                               "clean", "over-covered", "gone"]) + " |")
    out.append("|" + "---|" * 9)
    for who in VERSIONS:
        c = collections.Counter(r[who]["state"] for r in rows)
        out.append(f"| {who} | " + " | ".join(str(c[s]) for s in ["restored", "restored-with-issues", "unwrapped",
                                                                   "left", "rewritten", "clean", "over-covered",
                                                                   "gone"]) + " |")
    out.append("\nSites where volfix is worse, both are unresolved, or the verdict is undecided:\n")
    for r in rows:
        if r["verdict"] in ("worse", "both-unresolved", "undecided"):
            cell = f"#cell{r['cell']}" if r.get("cell") else ""
            out.append(f"- {r['verdict']}: {r['repo']}@{r['migration']} {r['path']}{cell}:{r['row']} {r['code']} "
                       f"(human {r['human']['state']}, volfix {r['unsafe']['state']}/{r['safe']['state']})"
                       + (f": {r['reason']}" if r["reason"] else ""))
    return "\n".join(out) + "\n"


def _line(name: str, c: collections.Counter, cols: List[str]) -> str:
    judged = c["better"] + c["equal"] + c["worse"] + c["both-unresolved"]
    ok = c["better"] + c["equal"]
    rate = f"{ok}/{judged} ({100 * ok / judged:.0f}%)" if judged else "-"
    return f"| {name} | {sum(c.values())} | " + " | ".join(str(c[k]) for k in cols) + f" | {rate} |"


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--manifest", default=DEFAULT_MANIFEST)
    ap.add_argument("--human", default="/work/evalhuman")
    ap.add_argument("--repo", action="append", help="only this repository (owner/name); repeatable")
    ap.add_argument("--judgments", default=DEFAULT_JUDGMENTS)
    ap.add_argument("--write-judgments", action="store_true", help="merge the automatic verdicts into --judgments")
    ap.add_argument("--json", help="write every site's evidence here")
    ap.add_argument("--markdown", help="write the report here instead of stdout")
    ap.add_argument("--work", help="keep the fixed copies here")
    ap.add_argument("--evidence", help="reuse the sites of an earlier --json run instead of running volfix "
                                       "(to re-report after reviewing verdicts)")
    args = ap.parse_args(argv)
    if args.evidence:
        with open(args.evidence, encoding="utf-8") as fh:
            saved = json.load(fh)
        return finish(args, saved["engine"], saved["sites"])
    volfix = Volfix()
    engine = volfix.describe()
    print(engine, file=sys.stderr)
    work = args.work or tempfile.mkdtemp(prefix="volfix-human-")
    rows: List[dict] = []
    try:
        for e in load_manifest(args.manifest)["repos"]:
            if args.repo and e["repo"] not in args.repo:
                continue
            for mig in e.get("human_migrations", []):
                name = human_dir_name(e["repo"], mig)
                base = os.path.join(args.human, name)
                if not os.path.isdir(os.path.join(base, "pre")):
                    print(f"missing export {base} (run scripts/evaluation/corpus.py export)", file=sys.stderr)
                    continue
                print(f"comparing {name}", file=sys.stderr, flush=True)
                rows += compare_migration(e["repo"], mig, base, volfix, os.path.join(work, name))
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    return finish(args, engine, rows)


def finish(args, engine: str, rows: List[dict]) -> int:
    """Merge the judgments, print or write the report, keep the evidence."""
    judgments = load_judgments(args.judgments)
    if args.write_judgments:
        write_judgments(args.judgments, rows, judgments, engine)
        judgments = load_judgments(args.judgments)
    text = f"Engine: {engine}\n\n" + report(rows, judgments)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"engine": engine, "sites": rows}, fh, indent=1, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
