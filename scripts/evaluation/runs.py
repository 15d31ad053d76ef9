#!/usr/bin/env python3
"""The `.data[0]` reads only a run can tell: `volfix verify --fix` on programs of the evaluated trees (issue 22).

    python scripts/evaluation runs [--repos /work/evalrepos] [--holdout /work/holdout_all]
        [--human /work/evalhuman] [--runs docs/verify-runs.json] [--sites INDEX.json ...]
        [--keep DIR] [--json OUT.json]

Some `.data[0]` reads are 0-dim only by what the data makes them (a model's output rank, an
environment's observation), so `volfix fix --unsafe-fixes` leaves them and `check` is silent.
`volfix verify` runs the program: for each run of RUNS, on two copies of the tree (the
original, and the working copy, each marked a project root as a checkout is):

1. `volfix fix --unsafe-fixes .` on the working copy;
2. `volfix verify --fix --format json --against ORIGINAL -- python COMMAND` from its root, with
   the run's stubs (scripts/evaluation/stubs/) on PYTHONPATH: the original under volfix.legacy,
   the fixed copy under torch, every read the original made on a one-element value rewritten
   to `.item()`, and the fixed copy run again.

Each rewritten read is looked up in the data index (docs/data-index-sites.json and
docs/data-index-holdout-sites.json: class A, certainly 0-dim; B, certainly not; C, cannot be
told) by repository, path and expression. The report (Markdown, stdout) lists per run the reads
rewritten, their classes, and whether the runs agree after the rewrite. Exit status 1 when a run
rewrote a read classified B (a rewrite the run should never make) or ended in disagreement,
2 when volfix failed, else 0.
"""
from __future__ import annotations

import argparse
import difflib
import json
import os
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Tuple

from .common import Volfix, copy_tree

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
STUBS = os.path.join(HERE, "stubs")
INDEXES = ("docs/data-index-sites.json", "docs/data-index-holdout-sites.json")


def tree_of(run: dict, dirs: Dict[str, Optional[str]]) -> Optional[str]:
    """The exported tree a run names: corpus and held-out trees are <owner>+<name>, a human
    migration's tree before it is <owner>+<name>@<sha>/pre."""
    base = dirs.get(run["tree"])
    if base is None:
        return None
    name = run["repo"].replace("/", "+", 1)
    if run["tree"] == "human":
        name, _, side = name.partition(":")
        return os.path.join(base, name, side)
    return os.path.join(base, name)


def classes(indexes: List[str]) -> Dict[Tuple[str, str, str], List[Tuple[int, str]]]:
    """(repository, path, expression) -> (row, class) of each of the data index's reads of it."""
    out: Dict[Tuple[str, str, str], List[Tuple[int, str]]] = {}
    for path in indexes:
        with open(path, encoding="utf-8") as handle:
            for site in json.load(handle)["sites"]:
                out.setdefault((site["repo"], site["path"], site["expression"]), []).append(
                    (site["row"], site["class"]))
    return out


def classes_of(sites: List[Tuple[int, str]], original: str, work: str, read: dict) -> List[str]:
    """The class of the data index's read a rewritten read is: the expression's, or, where the
    index holds it at several rows of different classes (the negotiator's `p_agree.data[0]`),
    the class at the row nearest to where the read stands in the original (its line is the
    fixed copy's: the lines are matched with difflib)."""
    if len({c for _, c in sites}) <= 1:
        return [c for _, c in sites]
    row = _original_row(os.path.join(original, read["file"]), os.path.join(work, read["file"]), read["line"])
    return [min(sites, key=lambda site: abs(site[0] - row))[1]]


def _original_row(original: str, fixed: str, line: int) -> int:
    try:
        with open(original, encoding="utf-8", errors="replace") as a, open(fixed, encoding="utf-8",
                                                                           errors="replace") as b:
            before, after = a.read().splitlines(), b.read().splitlines()
    except OSError:
        return line
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if j1 <= line - 1 < j2 or (tag == "delete" and j1 == line - 1):
            return i1 + min(line - 1 - j1, max(i2 - i1 - 1, 0)) + 1
    return line


def verify(volfix: Volfix, work: str, original: str, run: dict) -> Tuple[Optional[dict], str]:
    """`volfix verify --fix` of the run in the fixed copy: (its JSON, stderr)."""
    env = dict(volfix.env)
    paths = [os.path.join(STUBS, stub) for stub in run.get("stubs", [])]
    if paths:  # a stub is a package directory: its parent goes on the path
        env["PYTHONPATH"] = os.pathsep.join([STUBS, *filter(None, [env.get("PYTHONPATH")])])
    args = volfix.cmd + ["verify", "--fix", "--format", "json", "--against", original, "--",
                         sys.executable, *run["command"]]
    p = subprocess.run(args, cwd=work, capture_output=True, text=True, env=env, timeout=3600)
    try:
        return json.loads(p.stdout), p.stderr
    except ValueError:
        return None, (p.stderr or "") + p.stdout[-2000:]


def measure(runs: List[dict], dirs: Dict[str, Optional[str]], indexes: List[str],
            keep: Optional[str]) -> List[dict]:
    volfix = Volfix()
    print(f"volfix: {volfix.describe()}", file=sys.stderr)
    known = classes(indexes)
    results = []
    with tempfile.TemporaryDirectory(prefix="volfix-runs-") as tmp:
        for number, run in enumerate(runs, 1):
            source = tree_of(run, dirs)
            result = {"repo": run["repo"], "command": _shown(run["command"]), "why": run["why"]}
            results.append(result)
            if source is None or not os.path.isdir(source):
                result["error"] = f"no tree for {run['repo']} (give --{run['tree']})"
                continue
            print(f"{run['repo']}: {result['command']}", file=sys.stderr)
            base = os.path.join(keep or tmp, str(number))
            original, work = os.path.join(base, "original"), os.path.join(base, "work")
            copy_tree(source, original)
            copy_tree(source, work)
            fixed = volfix.run("fix", work, ["--unsafe-fixes"])
            if fixed.crashed:
                result["error"] = f"volfix fix failed: {fixed.stderr.strip()[-300:]}"
                continue
            data, stderr = verify(volfix, work, original, run)
            if data is None:
                result["error"] = f"volfix verify failed: {stderr.strip()[-300:]}"
                continue
            result.update(agree=data["agree"], exit_before=data["before"]["exit_status"],
                          exit_after=data["after"]["exit_status"],
                          findings=[f["message"] for f in data["findings"]],
                          fixed=[dict(read, classes=classes_of(
                                     known.get((run["repo"], read["file"], read["before"]), []), original, work, read))
                                 for read in data["fixed"]])
    return results


def _shown(command: List[str]) -> str:
    if command[0] == "-c":
        return "python -c DRIVER"
    return "python " + " ".join(command)


def report(results: List[dict]) -> Tuple[str, int]:
    lines = ["| repository | command | reads rewritten (data-index class) | exit before / after | after the rewrite |",
             "|---|---|---|---|---|"]
    status, counts = 0, {"A": 0, "B": 0, "C": 0, "unclassified": 0}
    for r in results:
        if "error" in r:
            lines.append(f"| {r['repo']} | `{r['command']}` | {r['error']} | | |")
            status = max(status, 2)
            continue
        reads = []
        for read in r["fixed"]:
            kind = "/".join(sorted(set(read["classes"]))) or "unclassified"
            for c in set(read["classes"]) or {"unclassified"}:
                counts[c] += 1
            if "B" in read["classes"]:
                status = max(status, 1)
            reads.append(f"`{read['before']}` -> `{read['after']}` at {read['file']}:{read['line']} ({kind})")
        if not r["agree"]:
            status = max(status, 1)
        verdict = "the runs agree" if r["agree"] else "; ".join(r["findings"])[:300]
        lines.append(f"| {r['repo']} | `{r['command']}` | {'<br>'.join(reads) or 'none'} | "
                     f"{r['exit_before']} / {r['exit_after']} | {verdict} |")
    lines.append("")
    lines.append(f"Reads rewritten by class: A {counts['A']}, B {counts['B']}, C {counts['C']}, "
                 f"unclassified {counts['unclassified']}.")
    return "\n".join(lines) + "\n", status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="evaluation runs", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", default="/work/evalrepos", help="the corpus (<owner>+<name>)")
    parser.add_argument("--holdout", default="/work/holdout_all", help="the held-out trees (<owner>+<name>)")
    parser.add_argument("--human", default="/work/evalhuman", help="the human migrations (<owner>+<name>@<sha>/pre)")
    parser.add_argument("--runs", default=os.path.join(ROOT, "docs", "verify-runs.json"))
    parser.add_argument("--sites", action="append", help="a data index (repeat; default: the corpus's and "
                        "the held-out trees')")
    parser.add_argument("--keep", help="keep the copies here")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    with open(args.runs, encoding="utf-8") as handle:
        runs = json.load(handle)["runs"]
    indexes = args.sites or [os.path.join(ROOT, rel) for rel in INDEXES]
    results = measure(runs, {"corpus": args.repos, "holdout": args.holdout, "human": args.human}, indexes,
                      args.keep)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=1)
    text, status = report(results)
    print(text, end="")
    return status


if __name__ == "__main__":
    sys.exit(main())
