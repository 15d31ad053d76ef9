"""Benchmark volfix against ruff and grep (SPEC §8). A benchmark, not a test.

    python benchmarks/bench.py [--runs 5] [--lines 120000] [--skip-torch] [--jobs N]
                               [--big-lines 120000] [--skip-big]
                               [--tainted-lines 30000] [--skip-tainted] [--volfix EXE]

Builds its inputs, then times each command several times and prints medians and ratios:

  (a) the installed `torch` package (~2,300 Python files, ~1.2M lines, no legacy code);
  (b) a generated legacy tree (`gen_legacy_tree.py`, >= 100k lines, `volatile` sites in a
      third of its files);
  (c) one 120k-line module-level script with a single finding (`gen_big_module.py`, the
      shape of exported notebooks and generated code): wall time and peak memory of
      `volfix check` against the targets (BIG_TARGET_SECONDS, BIG_TARGET_MB on 2 cores);
  (d) a 30k-line script whose every line computes with one volatile value: the flow
      analysis and the region must stay linear (it took over a minute when they were not).
  (e) a folder of 30 legacy repositories under one git root (`gen_repos_tree.py`: ~184k
      lines, 100 notebooks, helpers across files, star imports between sibling modules), and
      its 2x and 4x copies (`--repos-copies 1,2,4`): each doubling must cost <= 2.2x;
  (f) a synthetic monorepo (`gen_monorepo.py`: 20,000 files, 3M lines, 5% legacy code calling
      helpers across packages; `--monorepo-scale 0.1` for a quick run).
  (g) one script with many findings (`gen_many_sites.py`: N sites at module level and N in
      functions, `--many-sites 100,300,1000`): check, fix and `--format json` must stay
      near-linear in N.

Commands: `volfix check --no-cache` (and, on (b), (e) and (f), a warm-cache re-run), `ruff check
--isolated --no-cache --select E9`, and `grep -rl volatile`. On (a) grep is also run on the
same file set as the two linters (`--include=*.py --include=*.pyi`): the torch package also
holds ~700 MB of shared libraries that plain `grep -r` reads and the linters never open.
Peak memory is the child's maximum RSS (`wait4`); start-up is `volfix --version`.
Every tool is run through its real executable, not a pyenv/asdf shim script. `--volfix EXE`
times another installation (e.g. `pip install .` in a virtualenv of its own, as users get
it; a development checkout installed with `-e` starts a few ms later).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
BIG_TARGET_SECONDS = 5.0
BIG_TARGET_MB = 500
REPOS_TARGET_SECONDS = 2.0  # (e) at 1x, cold, 2 cores
DOUBLING_TARGET = 2.2  # (e) each doubling of the tree
MONOREPO_TARGETS = (10.0, 3.0, 500)  # (f) cold s, warm s, peak MB
MANY_SITES_JSON_UP_TO = 100  # (g): `--format json` is timed up to this many sites (quadratic: see RESULTS.md)


@dataclass
class Measure:
    label: str
    times: List[float] = field(default_factory=list)
    rss_kb: List[int] = field(default_factory=list)
    codes: List[int] = field(default_factory=list)
    cpu: List[float] = field(default_factory=list)  # user + sys of the process and its children

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)

    @property
    def peak_mb(self) -> float:
        return max(self.rss_kb) / 1024


def run_once(cmd: Sequence[str], cwd: Optional[str] = None) -> tuple:
    """(wall seconds, max RSS in KB, exit code, CPU seconds) of one run, output discarded.
    CPU counts the process and the workers it waited for (wait4 sums them)."""
    start = time.perf_counter()
    proc = subprocess.Popen(list(cmd), cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_maxrss, proc.returncode, usage.ru_utime + usage.ru_stime


def measure(label: str, cmd: Sequence[str], runs: int, cwd: Optional[str] = None,
            warmup: int = 1) -> Measure:
    m = Measure(label)
    for _ in range(warmup):
        run_once(cmd, cwd)
    for _ in range(runs):
        t, rss, code, cpu = run_once(cmd, cwd)
        m.cpu.append(cpu)
        m.times.append(t)
        m.rss_kb.append(rss)
        m.codes.append(code)
    return m


def real_executable(name: str) -> Optional[str]:
    """The tool next to this interpreter (skipping version-manager shims), else on PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), name)
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    return shutil.which(name)


def volfix_command(given: Optional[str] = None) -> List[str]:
    if given:
        return [given]
    exe = real_executable("volfix")
    if exe:
        return [exe]
    return [sys.executable, "-c", "import sys; from volfix.cli.commands import main; sys.exit(main())"]


def torch_tree() -> Optional[str]:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    return next(iter(spec.submodule_search_locations))


def count_tree(path: str) -> Dict[str, int]:
    files = lines = 0
    for dirpath, dirnames, names in os.walk(path):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in names:
            if name.endswith((".py", ".pyi")):
                files += 1
                with open(os.path.join(dirpath, name), "rb") as fh:
                    lines += fh.read().count(b"\n")
    return {"files": files, "lines": lines}


def run_stats(path: str, cwd: str) -> Dict[str, int]:
    """How many files the prefilter lets through, from the runner itself."""
    code = ("import json, sys, dataclasses; from volfix.settings.config import Config; "
            "from volfix.run.options import RunOptions; from volfix.run.runner import run_with_stats; "
            "res, st = run_with_stats([sys.argv[1]], config=Config(), options=RunOptions(use_cache=False)); "
            "d = dataclasses.asdict(st); d['findings'] = sum(len(r.diagnostics) for r in res); "
            "d['errors'] = sum(1 for r in res if r.error); print(json.dumps(d))")
    out = subprocess.run([sys.executable, "-c", code, path], cwd=cwd, capture_output=True,
                         text=True, check=False)
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "?"}


def row(m: Measure, ref: Dict[str, Measure], extra: str = "") -> str:
    ratios = "  ".join(f"{m.median / r.median:6.2f}x {name}" for name, r in ref.items()
                       if r is not m)
    return (f"  {m.label:<34} {m.median * 1000:7.0f} ms  (min {min(m.times) * 1000:6.0f}, "
            f"max {max(m.times) * 1000:6.0f})  cpu {m.cpu_median * 1000:7.0f} ms  "
            f"peak {m.peak_mb:5.1f} MB  exit {m.codes[-1]}  {ratios}{extra}")


def big_module(work: str, volfix: List[str], lines: int, runs: int) -> Measure:
    """(c): `volfix check` on one huge module-level script with one finding."""
    import gen_big_module

    module = gen_big_module.generate_module(lines)
    folder = os.path.join(work, "big")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "notebook_export.py")
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(module.source)
    print(f"(c) big module {path}: {module.lines:,} lines, one finding at "
          f"{module.finding_row}:{module.finding_column}")
    m = measure("volfix check --no-cache", volfix + ["check", "--no-cache", "--exit-zero", "-q",
                                                      path], runs, cwd=folder, warmup=0)
    verdict = ("within" if m.median <= BIG_TARGET_SECONDS and m.peak_mb <= BIG_TARGET_MB
               else "OVER")
    print(row(m, {}) + f"  {module.lines / m.median:9,.0f} lines/s")
    print(f"    target <= {BIG_TARGET_SECONDS:.0f} s and <= {BIG_TARGET_MB} MB: {verdict}\n")
    return m


def tainted_script(work: str, volfix: List[str], lines: int, runs: int) -> Measure:
    """(d): a script whose every line computes with one volatile value (`y{i} = out * i + x`):
    the flow analysis and the region over all of them must stay linear in the lines."""
    folder = os.path.join(work, "tainted")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "long_eval.py")
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write("from torch.autograd import Variable\nout = model(Variable(x, volatile=True))\n")
        fh.writelines(f"y{i} = out * {i} + x\n" for i in range(lines))
    print(f"(d) tainted script {path}: {lines + 2:,} lines, every line computes with the volatile value")
    m = measure("volfix check --no-cache", volfix + ["check", "--no-cache", "--exit-zero", "-q",
                                                      path], runs, cwd=folder, warmup=0)
    print(row(m, {}) + f"  {lines / m.median:9,.0f} lines/s\n")
    return m


def many_sites(work: str, volfix: List[str], sizes: List[int], runs: int) -> Dict[int, List[Measure]]:
    """(g): one script with N `volatile` sites at module level and N more in functions
    (`gen_many_sites.py`): `volfix check`, `volfix fix` and `volfix check --format json` (every
    fix's edits, as JSON, SARIF and the editors' quick fixes had them) per N. Each tripling of N
    should cost about 3x (issue 24: 150 sites took 14 s and 1,000 took 557 s)."""
    import gen_many_sites

    folder = os.path.join(work, "many")
    os.makedirs(folder, exist_ok=True)
    out: Dict[int, List[Measure]] = {}
    for n in sizes:
        source = gen_many_sites.generate(n)
        path = os.path.join(folder, f"many_{n}.py")
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(source)
        lines = source.count("\n")
        print(f"(g) {n:,} module-level sites and {n:,} in functions: {path}, {lines:,} lines, {len(source):,} bytes")
        check = measure("volfix check --no-cache", volfix + ["check", "--no-cache", "--exit-zero", "-q", path],
                        runs, cwd=folder, warmup=0)
        fixed = os.path.join(folder, f"fixed_{n}.py")
        fix = Measure("volfix fix --no-cache")
        for _ in range(runs):
            shutil.copyfile(path, fixed)
            t, rss, code, cpu = run_once(volfix + ["fix", "--no-cache", "--exit-zero", "-q", fixed], cwd=folder)
            fix.times.append(t), fix.rss_kb.append(rss), fix.codes.append(code), fix.cpu.append(cpu)
        rows = [check, fix]
        if n <= MANY_SITES_JSON_UP_TO:  # each fix's edits re-read the whole file: quadratic, see RESULTS.md
            rows.append(measure("volfix check --format json", volfix + [
                "check", "--no-cache", "--exit-zero", "--format", "json", path], runs, cwd=folder, warmup=0))
        for m in rows:
            print(row(m, {}) + f"  {n / m.median:8,.0f} sites/s")
        out[n] = rows
        print()
    return out


def tree_rows(label: str, tree: str, volfix: List[str], ruff: Optional[str], jobs: List[str],
              runs: int) -> Dict[str, Measure]:
    """Cold (`--no-cache`), warm (a second run over the cache of a first) and ruff, on one tree."""
    lines = count_tree(tree)["lines"]
    cache_dir = os.path.join(tree, ".volfix_cache")
    shutil.rmtree(cache_dir, ignore_errors=True)
    ms = {"volfix": measure("volfix check --no-cache", volfix + [
        "check", "--no-cache", "--exit-zero", "-q"] + jobs + ["."], runs, cwd=tree)}
    subprocess.run(volfix + ["check", "--exit-zero", "-q"] + jobs + ["."], cwd=tree,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    ms["volfix-warm"] = measure("volfix check (warm cache)", volfix + [
        "check", "--exit-zero", "-q"] + jobs + ["."], runs, cwd=tree)
    shutil.rmtree(cache_dir, ignore_errors=True)
    if ruff:
        ms["ruff"] = measure("ruff check --select E9", [
            ruff, "check", "--isolated", "--no-cache", "--select", "E9", "--exit-zero", "-q", "."],
            runs, cwd=tree)
    ref = {k: ms[k] for k in ("ruff",) if k in ms}
    print(f"  {label}: {lines:,} lines")
    for key, m in ms.items():
        extra = f"  {lines / m.median:9,.0f} lines/s" if key.startswith("volfix") else ""
        print(row(m, ref, extra))
    return ms


def repos_tree(work: str, volfix: List[str], ruff: Optional[str], jobs: List[str], runs: int,
               copies: Sequence[int]) -> None:
    """(e): 30 legacy repositories under one git root, and copies of them."""
    import gen_repos_tree

    cold: Dict[int, float] = {}
    cold_cpu: Dict[int, float] = {}
    for n in copies:
        tree = os.path.join(work, f"repos_x{n}")
        if not os.path.isdir(tree):
            stats = gen_repos_tree.generate(tree, copies=n)
        else:
            stats = {"projects": "?"}
        print(f"(e) {n}x the 30-repository tree {tree}: {stats}")
        print(f"    prefilter: {run_stats(tree, work)}")
        ms = tree_rows(f"{n}x", tree, volfix, ruff, jobs, runs)
        cold[n] = ms["volfix"].median
        cold_cpu[n] = ms["volfix"].cpu_median
        if n == 1:
            verdict = "within" if cold[n] <= REPOS_TARGET_SECONDS else "OVER"
            print(f"    target <= {REPOS_TARGET_SECONDS:.0f} s cold: {verdict}")
        half = n // 2
        if half in cold:
            growth = cold[n] / cold[half]
            verdict = "within" if growth <= DOUBLING_TARGET else "OVER"
            print(f"    {half}x -> {n}x: {growth:.2f}x the time (target <= {DOUBLING_TARGET}x): {verdict}; "
                  f"{cold_cpu[n] / cold_cpu[half]:.2f}x the cpu time (less sensitive to a busy machine)")
        print()


def monorepo(work: str, volfix: List[str], ruff: Optional[str], jobs: List[str], runs: int,
             scale: float) -> None:
    """(f): a 20,000-file monorepo with 5% legacy code (`scale` shrinks it)."""
    import gen_monorepo

    tree = os.path.join(work, f"monorepo_{scale:g}")
    if not os.path.isdir(tree):
        stats = gen_monorepo.generate(tree, int(20_000 * scale), int(3_000_000 * scale))
    else:
        stats = {}
    print(f"(f) monorepo {tree} (scale {scale:g}): {stats}")
    print(f"    prefilter: {run_stats(tree, work)}")
    ms = tree_rows("monorepo", tree, volfix, ruff, jobs, runs)
    cold_s, warm_s, peak = MONOREPO_TARGETS
    if scale == 1:
        ok = (ms["volfix"].median <= cold_s and ms["volfix-warm"].median <= warm_s
              and max(ms["volfix"].peak_mb, ms["volfix-warm"].peak_mb) <= peak)
        print(f"    target <= {cold_s:.0f} s cold, <= {warm_s:.0f} s warm, <= {peak} MB: "
              f"{'within' if ok else 'OVER'}")
    print()


def compile_volfix() -> str:
    """Write the volfix package's bytecode, as `pip install` does: an editable install run
    with PYTHONDONTWRITEBYTECODE=1 (set on some CI images) would otherwise compile every
    module on every start, ~100 ms that no installed copy pays."""
    import compileall

    spec = importlib.util.find_spec("volfix")
    if spec is None or not spec.submodule_search_locations:
        return "volfix not importable here: not compiled"
    package = list(spec.submodule_search_locations)[0]
    ok = compileall.compile_dir(package, quiet=1)
    flag = " (PYTHONDONTWRITEBYTECODE is set)" if os.environ.get("PYTHONDONTWRITEBYTECODE") else ""
    return f"compiled {package}{flag}" if ok else f"compiling {package} failed{flag}"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--lines", type=int, default=120_000)
    parser.add_argument("--jobs", "-j", type=int, default=None, help="passed to volfix")
    parser.add_argument("--skip-torch", action="store_true")
    parser.add_argument("--skip-legacy", action="store_true")
    parser.add_argument("--big-lines", type=int, default=120_000,
                        help="lines of the big module-level script of (c)")
    parser.add_argument("--skip-big", action="store_true")
    parser.add_argument("--tainted-lines", type=int, default=30_000,
                        help="lines of the script of (d), every one computing with the volatile value")
    parser.add_argument("--skip-tainted", action="store_true")
    parser.add_argument("--skip-repos", action="store_true", help="skip (e)")
    parser.add_argument("--many-sites", default="100,300,1000", metavar="N,N,...",
                        help="(g): the sizes of the many-sites script (sites at module level)")
    parser.add_argument("--skip-many-sites", action="store_true", help="skip (g)")
    parser.add_argument("--repos-copies", default="1,2,4",
                        help="copies of the 30-repository tree to time in (e), comma-separated")
    parser.add_argument("--skip-monorepo", action="store_true", help="skip (f)")
    parser.add_argument("--monorepo-scale", type=float, default=1.0,
                        help="size of the monorepo of (f) (1: 20,000 files, 3M lines)")
    parser.add_argument("--keep", metavar="DIR", help="build the generated trees here and keep them")
    parser.add_argument("--volfix", metavar="EXE", help="the volfix executable to time (default: "
                        "the one beside this interpreter, else on PATH)")
    args = parser.parse_args(argv)
    sys.path.insert(0, HERE)
    import gen_legacy_tree

    volfix = volfix_command(args.volfix)
    ruff = real_executable("ruff")
    grep = shutil.which("grep")
    jobs = ["-j", str(args.jobs)] if args.jobs else []
    work = args.keep or tempfile.mkdtemp(prefix="volfix-bench-")
    os.makedirs(work, exist_ok=True)
    print(f"volfix bench  {time.strftime('%Y-%m-%d %H:%M')}  {platform.platform()}  "
          f"python {platform.python_version()}  cores {os.cpu_count()}  "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"  volfix: {' '.join(volfix)}\n  ruff:   {ruff}\n  runs:   {args.runs} (median)")
    print(f"  bytecode: {compile_volfix()}\n")

    version = measure("volfix --version", volfix + ["--version"], args.runs * 2)
    print(f"start-up: volfix --version median {version.median * 1000:.0f} ms "
          f"(min {min(version.times) * 1000:.0f}, cpu {version.cpu_median * 1000:.0f}), "
          f"peak {version.peak_mb:.1f} MB")
    bare = measure("python -c pass", [sys.executable, "-c", "pass"], args.runs * 2)
    print(f"          python -c pass   median {bare.median * 1000:.0f} ms\n")

    try:
        if not args.skip_torch:
            tree = torch_tree()
            if tree is None:
                print("(a) torch is not installed: skipped\n")
            else:
                counts = count_tree(tree)
                print(f"(a) torch tree {tree}: {counts['files']} files, {counts['lines']:,} lines")
                print(f"    prefilter: {run_stats(tree, work)}")
                ms = {
                    "volfix": measure("volfix check --no-cache", volfix + [
                        "check", "--no-cache", "--exit-zero", "-q"] + jobs + [tree], args.runs,
                        cwd=work),
                    "ruff": measure("ruff check --select E9", [
                        ruff, "check", "--isolated", "--no-cache", "--select", "E9",
                        "--exit-zero", "-q", tree], args.runs, cwd=work) if ruff else None,
                    "grep-py": measure("grep -rl volatile (*.py, *.pyi)", [
                        grep, "-rl", "--include=*.py", "--include=*.pyi", "volatile", tree],
                        args.runs),
                    "grep": measure("grep -rl volatile (whole dir)", [grep, "-rl", "volatile", tree],
                                    args.runs),
                }
                ms = {k: v for k, v in ms.items() if v is not None}
                ref = {k: ms[k] for k in ("ruff", "grep-py", "grep") if k in ms}
                for m in ms.values():
                    print(row(m, ref))
                print()

        if not args.skip_big:
            big_module(work, volfix, args.big_lines, max(1, args.runs // 2))
        if not args.skip_tainted:
            tainted_script(work, volfix, args.tainted_lines, max(1, args.runs // 2))
        if not args.skip_many_sites:
            many_sites(work, volfix, [int(n) for n in args.many_sites.split(",") if n.strip()],
                       max(1, args.runs // 2))
        if not args.skip_repos:
            repos_tree(work, volfix, ruff, jobs, args.runs,
                       [int(n) for n in args.repos_copies.split(",") if n.strip()])
        if not args.skip_monorepo:
            monorepo(work, volfix, ruff, jobs, args.runs, args.monorepo_scale)
        if args.skip_legacy:
            return 0
        legacy = os.path.join(work, "legacy")
        if not os.path.isdir(legacy):
            stats = gen_legacy_tree.generate(legacy, args.lines)
        else:
            stats = count_tree(legacy)
        lines = count_tree(legacy)["lines"]
        print(f"(b) legacy tree {legacy}: {stats}")
        print(f"    prefilter: {run_stats(legacy, work)}")
        cache_dir = os.path.join(legacy, ".volfix_cache")
        shutil.rmtree(cache_dir, ignore_errors=True)
        cold = measure("volfix check --no-cache", volfix + [
            "check", "--no-cache", "--exit-zero", "-q"] + jobs + ["."], args.runs, cwd=legacy)
        subprocess.run(volfix + ["check", "--exit-zero", "-q"] + jobs + ["."], cwd=legacy,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        warm = measure("volfix check (warm cache)", volfix + [
            "check", "--exit-zero", "-q"] + jobs + ["."], args.runs, cwd=legacy)
        shutil.rmtree(cache_dir, ignore_errors=True)
        ms = {"volfix": cold, "volfix-warm": warm}
        if ruff:
            ms["ruff"] = measure("ruff check --select E9", [
                ruff, "check", "--isolated", "--no-cache", "--select", "E9", "--exit-zero", "-q",
                "."], args.runs, cwd=legacy)
        ms["grep"] = measure("grep -rl volatile", [grep, "-rl", "volatile", "."], args.runs,
                             cwd=legacy)
        ref = {k: ms[k] for k in ("ruff", "grep") if k in ms}
        for key, m in ms.items():
            extra = (f"  {lines / m.median:9,.0f} lines/s ({lines / m.cpu_median:,.0f} per cpu-s)"
                     if key.startswith("volfix") else "")
            print(row(m, ref, extra))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
