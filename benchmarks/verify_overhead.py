"""`volfix verify` overhead: the program on its own against the program under the tracer, and
against a whole `volfix verify` (two traced runs, the original unpacked from git).

    python benchmarks/verify_overhead.py [--runs 3]

Two programs, each in a throwaway git repository (original committed, `volfix fix` applied):
- examples: every program of examples/legacy/ run one after the other by a driver (the
  test suite's run_all.py): many small modules, ~200 top-level forwards.
- loop: a training loop and a volatile evaluation of a 3-layer MLP, 500 top-level forwards
  (the per-call cost of the tracer: frame walk, saved-tensor hooks, one JSON line).

Times are medians of wall-clock and of CPU (user + sys of the child processes); the machine
is shared, so CPU time is the steadier number. The ratios the issue asks about: traced run /
plain run (target <= 2x), and whole verify / one plain run.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

LOOP = '''\
import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10))
optimizer = optim.SGD(model.parameters(), lr=0.01)
criterion = nn.CrossEntropyLoss()
for step in range(200):
    x, y = Variable(torch.randn(32, 64)), Variable(torch.LongTensor(32).random_(0, 10))
    loss = criterion(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
correct = 0
for step in range(100):
    out = model(Variable(torch.randn(32, 64), volatile=True))
    correct += int(out.data.max(1)[1].eq(0).sum())
print(correct)
'''


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=b@example.com", "-c", "user.name=b", *args], cwd=repo,
                   check=True, capture_output=True)


def _prepare(work: Path) -> dict:
    from test_verify import RUN_ALL  # the driver the tests use

    examples = work / "examples"
    shutil.copytree(ROOT / "examples" / "legacy", examples)
    (examples / "run_all.py").write_text(RUN_ALL)
    names = sorted(p.stem for p in (ROOT / "examples" / "legacy").glob("*.py")) + ["main"]
    loop = work / "loop"
    loop.mkdir()
    (loop / "loop.py").write_text(LOOP)
    for repo in (examples, loop):
        _git(repo, "init", "-q")
        _git(repo, "add", ".")
        _git(repo, "commit", "-qm", "original")
        subprocess.run([sys.executable, "-m", "volfix", "fix", "."], cwd=repo, capture_output=True)
    return {"examples": (examples, ["run_all.py", *names]), "loop": (loop, ["loop.py"])}


def _timed(argv, cwd) -> tuple:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv} failed: {done.stderr.decode()[-2000:]}")
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="verify-bench-") as scratch:
        programs = _prepare(Path(scratch))
        load = os.getloadavg()[0]
        print(f"verify overhead  {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}  "
              f"cores {os.cpu_count()}  load {load:.2f}  runs {args.runs} (median)")
        for name, (repo, program) in programs.items():
            trace = os.path.join(scratch, f"{name}.jsonl")
            variants = {
                "plain run": [py, *program],
                "traced run": [py, "-m", "volfix.verify._trace", "--out", trace, "--root", str(repo),
                               "--", *program],
                "traced run, 0.3": [py, "-m", "volfix.verify._trace", "--out", trace, "--root",
                                    str(repo), "--legacy", "--", *program],
                "volfix verify": [py, "-m", "volfix", "verify", *program],
            }
            results = {}
            for label, argv in variants.items():
                samples = [_timed(argv, repo) for _ in range(args.runs)]
                results[label] = (statistics.median(s[0] for s in samples),
                                  statistics.median(s[1] for s in samples))
            base_wall, base_cpu = results["plain run"]
            print(f"\n{name}:")
            for label, (wall, cpu) in results.items():
                print(f"  {label:18s} wall {wall:6.2f} s ({wall / base_wall:4.2f}x)   "
                      f"cpu {cpu:6.2f} s ({cpu / base_cpu:4.2f}x)")


if __name__ == "__main__":
    main()
