#!/usr/bin/env python3
"""The long differential run over generated legacy programs (issue 21).

    nice python scripts/evaluation generated --count 10000 --out /tmp/generated-failures

Draws `--count` programs from tests/generated/programs.py (hypothesis, seeded by `--seed`),
judges each with tests/generated/judge.py (0.3 meaning under `volfix.legacy` against the safe
and the unsafe fix under plain torch), and prints: programs run, safe differences (silent:
no finding remains; reported: some finding remains), unsafe differences (explained by an
"unsafe fix:" note or not), and the share of programs the unsafe fix reproduces exactly: of all programs, and of those
whose original runs under 0.3 (the target of issue 21). A program whose original raised under
0.3 (a volatile value reaching `backward()`, SEMANTICS.md fact 5) never ran as legacy code:
it is counted in its own row (`legacy_raised`, with its unsafe verdicts) and left out of that
share; its safe fix is judged like any other's.

Failing programs (a safe fix changed the behaviour, or an unsafe one did without saying so)
that hold no component of a shape in programs.KNOWN_FAILING, and no minimal program found
earlier in this run, are shrunk (fewer components, then the first choice of each option,
module level off, seed 0) while they keep the same verdict; the distinct minimal programs
are written to `--out` as `NNN-safe-<verdict>-unsafe-<verdict>.py` with the differences,
volfix's notes and the fixed sources, for triage.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "generated"))

import judge as J  # noqa: E402
import programs as P  # noqa: E402


CLASSES = ("exact", "incomplete", "explained", "unexplained", "volfix-error")


def failing(verdict: J.Verdict) -> Tuple[str, str]:
    """The verdict's failure signature, ("", "") when nothing is wrong."""
    safe = "" if verdict.safe_class == "exact" else verdict.safe_class
    unsafe = verdict.unsafe_class if verdict.unsafe_class in ("unexplained", "volfix-error") else ""
    return safe, unsafe


def shrink(program: P.Program, signature: Tuple[str, str]) -> P.Program:
    """A smaller program with the same failure signature (greedy, a few dozen judgements)."""
    def still(candidate: P.Program) -> bool:
        return failing(J.judge(P.render(candidate))) == signature

    changed = True
    while changed:
        changed = False
        for k in range(len(program.components)):
            if len(program.components) > 1:
                candidate = replace(program, components=program.components[:k] + program.components[k + 1:])
                if still(candidate):
                    program, changed = candidate, True
                    break
        for simpler in (replace(program, module_level=False), replace(program, seed=0)):
            if simpler != program and still(simpler):
                program, changed = simpler, True
        for k, component in enumerate(program.components):
            space = P.SHAPES[component.shape][0]
            for option, value in component.options:
                for choice in space[option]:
                    if choice == value:
                        break
                    options = tuple((o, choice if o == option else v) for o, v in component.options)
                    parts = list(program.components)
                    parts[k] = P.Component(component.shape, options)
                    candidate = replace(program, components=tuple(parts))
                    if still(candidate):
                        program, component, changed = candidate, parts[k], True
                        break
    return program


def detail(program: P.Program, verdict: J.Verdict) -> dict:
    """One program's line for `--details`."""
    def side(s: J.Side) -> dict:
        return {"diffs": s.diffs, "left": list(s.remaining),
                "applied": [[d.code, d.fix.applicability.value, d.note] for d in s.fixed.applied if d.fix],
                "error": s.observation.error if s.observation is not None else None}

    return {"shapes": list(program.keys), "module_level": program.module_level,
            "legacy_error": verdict.legacy.error, "safe": verdict.safe_class, "unsafe": verdict.unsafe_class,
            "safe_side": side(verdict.safe), "unsafe_side": side(verdict.unsafe)}


def covered(program: P.Program, found) -> bool:
    """Whether a minimal program already found is part of this one (its components are)."""
    return any(set(small.keys) <= set(program.keys) for small in found)


def main(argv: List[str] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="generated-failures", help="directory for minimal failing programs")
    parser.add_argument("--no-shrink", action="store_true")
    parser.add_argument("--json", help="also write the counts here")
    parser.add_argument("--details", help="write one JSON line per program here (shapes, verdicts, "
                                          "what differs, volfix's notes), for grouping by cause")
    args = parser.parse_args(argv)

    from hypothesis import HealthCheck, given, seed, settings

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    counts: Dict[str, int] = collections.Counter()
    # Failing programs with no component of a known failing shape, to shrink after the run.
    new_failures: Dict[Tuple[str, str], List[P.Program]] = collections.defaultdict(list)
    seen = set()
    by_shape: Dict[str, Dict[str, int]] = collections.defaultdict(collections.Counter)
    by_known: Dict[str, int] = collections.Counter()
    started = time.monotonic()
    details = open(args.details, "w", encoding="utf-8") if args.details else None

    @seed(args.seed)
    @settings(max_examples=args.count, database=None, deadline=None, phases=["generate"],
              suppress_health_check=list(HealthCheck))
    @given(P.programs())
    def one(program: P.Program) -> None:
        source = P.render(program)
        counts["programs"] += 1
        if source in seen:
            counts["repeated"] += 1
        seen.add(source)
        verdict = J.judge(source)
        counts[f"safe {verdict.safe_class}"] += 1
        counts[f"unsafe {verdict.unsafe_class}"] += 1
        if verdict.legacy_raised:
            counts["legacy raised"] += 1
            counts[f"legacy raised, unsafe {verdict.unsafe_class}"] += 1
        for name in {c.shape for c in program.components}:
            by_shape[name]["programs"] += 1
            by_shape[name]["failed"] += verdict.failed
            by_shape[name]["unsafe_exact"] += verdict.unsafe_class == "exact"
            by_shape[name]["legacy_raised"] += verdict.legacy_raised
        if details is not None:
            details.write(json.dumps(detail(program, verdict)) + "\n")
        if verdict.failed:
            counts["failed"] += 1
            matched = sorted({known.found for known in P.KNOWN_FAILING for c in program.components
                              if known.matches(c)})
            for found in matched:
                by_known[found] += 1
            if matched:
                counts["failed, known shape"] += 1
            else:
                new_failures[failing(verdict)].append(program)
        if counts["programs"] % 500 == 0:
            print(f"  {counts['programs']} programs, {time.monotonic() - started:.0f} s: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if k != "programs"),
                  file=sys.stderr, flush=True)

    one()
    if details is not None:
        details.close()
    elapsed = time.monotonic() - started
    n = counts["programs"]
    summary = {
        "programs": n, "distinct": len(seen), "seconds": round(elapsed, 1),
        "safe_exact": counts["safe exact"], "safe_incomplete": counts["safe incomplete"],
        "safe_changed": counts["safe changed"], "safe_volfix_errors": counts["safe volfix-error"],
        "unsafe_exact": counts["unsafe exact"], "unsafe_incomplete": counts["unsafe incomplete"],
        "unsafe_explained": counts["unsafe explained"], "unsafe_unexplained": counts["unsafe unexplained"],
        "unsafe_volfix_errors": counts["unsafe volfix-error"],
        "unsafe_exact_percent": round(100.0 * counts["unsafe exact"] / n, 2) if n else 0.0,
        # Programs whose original raised under 0.3 (a volatile value reached backward()) never
        # ran as legacy code: their own row, outside the share of the programs that did.
        "legacy_raised": counts["legacy raised"],
        "legacy_raised_unsafe": {k: counts[f"legacy raised, unsafe {k}"] for k in CLASSES},
        "runs_under_0_3": n - counts["legacy raised"],
        "runs_under_0_3_unsafe": {k: counts[f"unsafe {k}"] - counts[f"legacy raised, unsafe {k}"] for k in CLASSES},
        "unsafe_exact_percent_of_running": round(
            100.0 * (counts["unsafe exact"] - counts["legacy raised, unsafe exact"]) / (n - counts["legacy raised"]), 2)
        if n > counts["legacy raised"] else 0.0,
        "failed": counts["failed"], "failed_known_shape": counts["failed, known shape"],
    }
    for key, value in summary.items():
        print(f"{key:>22}: {value}")
    print("programs by shape (a program has 1-3 components): failed, unsafe exact, 0.3 raised, of all")
    for name, c in sorted(by_shape.items()):
        print(f"{name:>22}: {c['failed']}, {c['unsafe_exact']}, {c['legacy_raised']} of {c['programs']}")
    print("failed programs holding a known failing shape (found/ program):")
    for found, c in sorted(by_known.items()):
        print(f"{found:>40}: {c}")
    summary["by_shape"] = {name: dict(c) for name, c in sorted(by_shape.items())}
    summary["by_known"] = dict(sorted(by_known.items()))

    minimal: Dict[Tuple[str, ...], P.Program] = {}
    if not args.no_shrink:
        for signature, progs in new_failures.items():
            for program in progs:
                if covered(program, minimal.values()):
                    continue
                small = shrink(program, signature)
                minimal.setdefault((signature,) + small.keys + (str(small.module_level),), small)
    for k, (_key, program) in enumerate(sorted(minimal.items(), key=lambda kv: kv[0])):
        verdict = J.judge(P.render(program))
        name = f"{k:03d}-safe-{verdict.safe_class}-unsafe-{verdict.unsafe_class}.py"
        (out / name).write_text(f"# shapes: {'; '.join(program.keys)} module_level={program.module_level}\n"
                                + verdict.report() + "\n", encoding="utf-8")
    print(f"{len(minimal):>22} minimal failing programs written to {out}{os.sep}")
    if args.json:
        summary["minimal_failing"] = [list(key) for key in sorted(minimal)]
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
