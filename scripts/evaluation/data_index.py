#!/usr/bin/env python3
"""The `.data[0]` reads `fix --unsafe-fixes` leaves without a finding, against their classification (issue 22).

    python scripts/evaluation data-index [--repos /work/evalrepos] [--human /work/evalhuman]
        [--sites docs/data-index-sites.json] [--repo OWNER/NAME ...] [--keep DIR] [--json OUT.json]
        [--write] [-j N]

Since PyTorch 0.4 a loss or a full reduction is a 0-dim tensor, and `.data[0]` on it raises
`IndexError: invalid index of a 0-dim tensor`. VF401 reports the reads it can show are 0-dim;
this command lists the ones it leaves, on a copy of every repository of REPOS
(<owner>+<name>), and with `--human`, of the tree before every human migration
(HUMAN/<owner>+<name>@<sha>/pre, named `owner/name@sha:pre`), as a user runs it:

1. `volfix fix --unsafe-fixes .` on the copy (a whole-project run), then `volfix check .`;
2. in every fixed `.py` / `.ipynb`, each read `X.data[0]`, and in those that import torch each
   `X[0]` where `X` is named like a loss (`loss`, `total_loss`, `cost`: the shape VF401's
   plain-index case is about), that no finding of the check sits on (same row; same cell for
   notebooks). A module need not import torch to hold tensors (its project's other modules
   hand them over), so `.data[0]` is read everywhere.

Each read is keyed by (repository, path, cell, the expression as written, its occurrence
among the file's reads of the same value: `X.data[0]`, `X[0]` and the `X.item()` VF401 makes of
either), so engine changes that move rows, or rewrite a read of the same value before it, do
not break the key, and compared with the classification in docs/data-index-sites.json (metadata only: a short
expression and a one-line reason per read, no code):

* **A**: certainly 0-dim under torch >= 0.4 (crashes when reached);
* **B**: certainly indexes a tensor with at least one dimension (fine today);
* **C**: cannot be told statically (a value passed in, a model's output of unknown shape).

The report (Markdown, stdout) counts the classes and lists reads that are not classified yet
and classified reads that are no longer left (now reported or fixed, or gone). `--write` adds
the unclassified reads to the file with class "?" (to be read and classified by hand) and
drops the ones no longer left. Exit status 1 when reads are unclassified or stale, 2 when
volfix failed on a repository, else 0.
"""
from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import re
import sys
import tempfile
from typing import Dict, List, Optional, Tuple

from .common import Volfix, copy_tree, iter_sources, parse, read_unit

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
IMPORTS_TORCH = re.compile(r"^\s*(import torch|from torch\b)", re.M)
LOSS_WORDS = {"loss", "losses", "cost"}
WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
CLASSES = {"A": "certainly 0-dim (crashes)", "B": "certainly >= 1 dim (fine)", "C": "cannot tell statically"}
EXPRESSION_MAX = 80

Key = Tuple[str, str, Optional[int], str, int]


def _is_zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value == 0


def _loss_named(node: ast.AST) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return name is not None and name != "data" and any(w.lower() in LOSS_WORDS for w in WORD.findall(name))


def reads_of(tree: ast.AST, loss_named: bool = True) -> List[ast.Subscript]:
    """`X.data[0]`, and (with `loss_named`) `X[0]` with `X` named like a loss, in source order."""
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _is_zero(node.slice)):
            continue
        value = node.value
        if (isinstance(value, ast.Attribute) and value.attr == "data") or (loss_named and _loss_named(value)):
            out.append(node)
    return sorted(out, key=lambda n: (n.lineno, n.col_offset))


def subject_of(node: ast.AST) -> Optional[ast.AST]:
    """The value a read reads: `X` of `X.data[0]` and `X[0]` (a Subscript), and of `X.item()` and
    `X.int().item()` (what VF401 rewrites them to); None for another node."""
    if isinstance(node, ast.Subscript):
        value = node.value
        return value.value if isinstance(value, ast.Attribute) and value.attr == "data" else value
    if isinstance(node, ast.Call) and not node.args and not node.keywords and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "item":
        value = node.func.value
        if isinstance(value, ast.Call) and not value.args and not value.keywords \
                and isinstance(value.func, ast.Attribute) and value.func.attr == "int":
            value = value.func.value
        return value
    return None


def occurrences(tree: ast.AST, loss_named: bool = True) -> List[ast.AST]:
    """The reads (`reads_of`) and the `X.item()` calls of `tree`, in source order: each read's
    occurrence is counted among these, by the value read, so that a rewrite of one read to
    `.item()` leaves the others' keys alone."""
    items = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and subject_of(n) is not None]
    return sorted(reads_of(tree, loss_named) + items, key=lambda n: (n.lineno, n.col_offset))


def expression(text: str, node: ast.AST) -> str:
    """The read as written, on one line, cut at EXPRESSION_MAX characters."""
    segment = ast.get_source_segment(text, node) or ""
    segment = " ".join(segment.split())
    return segment if len(segment) <= EXPRESSION_MAX else segment[:EXPRESSION_MAX - 3] + "..."


def left_reads(repo: str, root: str, diagnostics: List[dict]) -> List[dict]:
    """The reads of the fixed tree `root` no finding sits on."""
    flagged = collections.defaultdict(set)
    for d in diagnostics:
        flagged[d["path"]].add((d.get("cell"), d["location"]["row"]))
    out = []
    for rel in iter_sources(root):
        unit = read_unit(os.path.join(root, rel))
        if unit is None:
            continue
        # `.data[0]` in every file (a project module need not import torch: its tensors come
        # from the others); a loss-named `X[0]` only where torch is imported.
        torch_file = IMPORTS_TORCH.search(unit.text) is not None
        if not torch_file and ".data[0]" not in unit.text:
            continue
        tree = parse(unit.text)
        if tree is None:
            continue
        seen: Dict[Tuple[Optional[int], str], int] = collections.Counter()
        for node in occurrences(tree, loss_named=torch_file):
            cell, row = unit.where(node.lineno)
            value = " ".join((ast.get_source_segment(unit.text, subject_of(node)) or "").split())
            n = seen[(cell, value)]
            seen[(cell, value)] += 1
            if not isinstance(node, ast.Subscript) or (cell, row) in flagged.get(rel, ()):
                continue
            expr = expression(unit.text, node)
            site = dict(repo=repo, path=rel, row=row, expression=expr, occurrence=n)
            if cell is not None:
                site["cell"] = cell
            out.append(site)
    return out


def key_of(site: dict) -> Key:
    return (site["repo"], site["path"], site.get("cell"), site["expression"], site.get("occurrence", 0))


def trees(repos: str, human: Optional[str], only: Optional[List[str]]) -> List[Tuple[str, str]]:
    """(repository label, directory) of every tree to scan."""
    out = []
    for name in sorted(os.listdir(repos)):
        if os.path.isdir(os.path.join(repos, name)):
            out.append((name.replace("+", "/", 1), os.path.join(repos, name)))
    if human:
        for name in sorted(os.listdir(human)):
            pre = os.path.join(human, name, "pre")
            if os.path.isdir(pre):
                out.append((name.replace("+", "/", 1) + ":pre", pre))
    if only:
        out = [(label, path) for label, path in out if label.split("@")[0].split(":")[0] in only]
    return out


def scan(todo: List[Tuple[str, str]], jobs: Optional[int], keep: Optional[str]) -> Tuple[List[dict], List[str]]:
    volfix = Volfix(jobs=jobs)
    print(f"volfix: {volfix.describe()}", file=sys.stderr)
    sites, failures = [], []
    with tempfile.TemporaryDirectory(prefix="volfix-data-index-") as tmp:
        for repo, source in todo:
            work = os.path.join(keep or tmp, repo.replace("/", "+", 1).replace(":", "_"))
            copy_tree(source, work)
            print(f"{repo}", file=sys.stderr)
            fixed = volfix.run("fix", work, ["--unsafe-fixes"])
            checked = volfix.run("check", work)
            if fixed.crashed or checked.crashed:
                failures.append(repo)
                continue
            sites.extend(left_reads(repo, work, checked.diagnostics))
    return sites, failures


def compare(sites: List[dict], known: List[dict], repos: List[str]) -> Tuple[List[dict], List[dict], List[dict]]:
    """(classified reads still left, reads not classified, classified reads no longer left);
    only the repositories scanned count for the last."""
    by_key = {key_of(s): s for s in known}
    left = {key_of(s) for s in sites}
    matched = [dict(by_key[key_of(s)], row=s["row"]) for s in sites if key_of(s) in by_key
               and by_key[key_of(s)].get("class") in CLASSES]
    new = [s for s in sites if key_of(s) not in by_key or by_key[key_of(s)].get("class") not in CLASSES]
    stale = [s for s in known if s["repo"] in repos and key_of(s) not in left]
    return matched, new, stale


def report(matched: List[dict], new: List[dict], stale: List[dict], failures: List[str]) -> str:
    counts = collections.Counter(s["class"] for s in matched)
    per_repo = collections.defaultdict(collections.Counter)
    for s in matched:
        per_repo[s["repo"]][s["class"]] += 1
    out = ["# `.data[0]` reads left after `fix --unsafe-fixes` with no finding on their row", "",
           "| class | meaning | reads |", "|---|---|---:|"]
    for c, meaning in CLASSES.items():
        out.append(f"| {c} | {meaning} | {counts[c]} |")
    out.append(f"| | not classified | {len(new)} |")
    out += ["", "| repository | A | B | C |", "|---|---:|---:|---:|"]
    for repo in sorted(per_repo):
        c = per_repo[repo]
        out.append(f"| {repo} | {c['A']} | {c['B']} | {c['C']} |")
    for title, rows in (("Class A (crash when reached)", [s for s in matched if s["class"] == "A"]),
                        ("Not classified", new), ("Classified, no longer left", stale)):
        if rows:
            out += ["", f"## {title}", ""]
            for s in rows:
                cell = f"#cell{s['cell']}" if s.get("cell") else ""
                reason = f": {s['reason']}" if s.get("reason") else ""
                out.append(f"- {s['repo']}/{s['path']}{cell}:{s['row']} `{s['expression']}`{reason}")
    if failures:
        out += ["", "volfix failed on: " + ", ".join(failures)]
    return "\n".join(out) + "\n"


def write(path: str, known: List[dict], new: List[dict], stale: List[dict], sites: List[dict]) -> None:
    rows = {key_of(s): s["row"] for s in sites}
    gone = {key_of(s) for s in stale}
    kept = [dict(s, row=rows.get(key_of(s), s["row"])) for s in known if key_of(s) not in gone]
    have = {key_of(s) for s in kept}
    kept += [dict(s, **{"class": "?", "reason": ""}) for s in new if key_of(s) not in have]
    kept.sort(key=lambda s: (s["repo"], s["path"], s.get("cell") or 0, s["row"], s["expression"]))
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    doc["sites"] = kept
    doc["counts"] = dict(sorted(collections.Counter(s["class"] for s in kept).items()))
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1, ensure_ascii=False)
        fh.write("\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repos", default="/work/evalrepos", help="directory holding the <owner>+<name> trees")
    ap.add_argument("--human", help="also the pre-migration trees of this directory (<owner>+<name>@<sha>/pre)")
    ap.add_argument("--sites", default=os.path.join(ROOT, "docs", "data-index-sites.json"))
    ap.add_argument("--repo", action="append", help="only this repository (owner/name); repeatable")
    ap.add_argument("--keep", help="keep the fixed copies in this directory")
    ap.add_argument("--json", help="write the reads left (with their class) to this file")
    ap.add_argument("--write", action="store_true", help="add unclassified reads to --sites, drop stale ones")
    ap.add_argument("-j", "--jobs", type=int)
    args = ap.parse_args(argv)
    todo = trees(args.repos, args.human, args.repo)
    with open(args.sites, encoding="utf-8") as fh:
        known = json.load(fh)["sites"]
    sites, failures = scan(todo, args.jobs, args.keep)
    matched, new, stale = compare(sites, known, [label for label, _ in todo])
    print(report(matched, new, stale, failures), end="")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(dict(classified=matched, unclassified=new, stale=stale, failures=failures), fh, indent=1)
    if args.write:
        write(args.sites, known, new, stale, sites)
    if failures:
        return 2
    return 1 if new or stale else 0


if __name__ == "__main__":
    sys.exit(main())
