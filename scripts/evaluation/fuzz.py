"""Fault and fuzz campaign (issue 24): real legacy files, mutated in the shapes that broke
volfix before (line endings, comments at the ends of statements, encodings and BOMs, form
feeds, a missing final newline), checked and fixed in place through `fileproc.process_file`
(the CLI's per-file path: read, decode, fix, encode, write).

    python scripts/evaluation fuzz [--files 302] [--mutants 11] [--seed 24] [--jobs 2]
        [--corpus /work/evalrepos] [--out findings.json]

Files: the legacy-looking .py files (a Variable or volatile mention, under 60 KB) of the
corpus directory, plus fixtures/*/*.in.py and examples/legacy, drawn with the seed. Every
mutant is written to a temporary file and goes through:

  1. check       no internal error; a file CPython cannot compile gets no fix
  2. fix         no internal error, no "volfix bug" note, nothing applicable left ([*]);
                 the written file compiles when the mutant did, and is untouched otherwise;
                 no comment lost (suppression comments aside, VF010 may drop them)
  3. fix again   changes nothing (idempotent)
  4. oracle      a mutant that differs from its file only in line endings (or a BOM) is
                 fixed exactly as the file is, line endings (and BOM) aside

Each violation is a finding (the file, the mutation, the step, the detail). Exit 1 when
there is one.
"""
from __future__ import annotations

import argparse
import datetime
import io
import json
import multiprocessing
import os
import random
import re
import sys
import tempfile
import time
import tokenize
import warnings
from collections import Counter
from typing import List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from volfix.settings.config import DEFAULT_CONFIG  # noqa: E402
from volfix.run.fileproc import process_file  # noqa: E402

BOM = b"\xef\xbb\xbf"
MAX_BYTES = 60_000
MUTATIONS = ("crlf", "cr", "mixed", "trailing-comments", "cr+trailing-comments", "mixed+trailing-comments",
             "bom", "latin-1-cookie", "bom+utf8-cookie", "double-bom", "form-feeds", "no-final-newline",
             "cr-in-comment", "tabs-to-crlf-cr")


def corpus_files(corpus: str, count: int, seed: int) -> List[str]:
    found = []
    for top in (corpus, os.path.join(ROOT, "examples", "legacy")):
        for directory, subdirs, names in os.walk(top):
            subdirs.sort()
            for name in sorted(names):
                if name.endswith(".py"):
                    found.append(os.path.join(directory, name))
    fixtures = os.path.join(ROOT, "fixtures")
    for code in sorted(os.listdir(fixtures)):
        for name in sorted(os.listdir(os.path.join(fixtures, code))):
            if name.endswith(".in.py"):
                found.append(os.path.join(fixtures, code, name))
    legacy = []
    for path in found:
        try:
            with open(path, "rb") as handle:
                data = handle.read(MAX_BYTES + 1)
        except OSError:
            continue
        if len(data) <= MAX_BYTES and (b"volatile" in data or b"Variable" in data) and compiles(data):
            legacy.append(path)
    random.Random(seed).shuffle(legacy)
    return sorted(legacy[:count])


def compiles(data: bytes) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the corpus's own `is not 0` and friends
        try:
            compile(data, "<fuzz>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return False
    return True


def lines_of(data: bytes) -> List[bytes]:
    return re.findall(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", data)


def with_endings(data: bytes, choose) -> bytes:
    out = []
    lines = lines_of(data.replace(b"\r\n", b"\n").replace(b"\r", b"\n"))
    previous = b""
    for line in lines:
        body = line.rstrip(b"\n")
        end = choose() if line.endswith(b"\n") else b""
        # CR then an empty line ending in LF would read as one CRLF: a line fewer
        if previous == b"\r" and not body and end.startswith(b"\n"):
            out[-1] = out[-1][:-1] + b"\r\n"
        out.append(body + end)
        previous = end
    return b"".join(out)


def statement_ends(data: bytes) -> List[int]:
    """Rows (1-based) that end a simple statement and hold no comment: a trailing comment
    can go there."""
    try:
        text = data.decode("utf-8")
        tokens = list(tokenize.generate_tokens(io.StringIO(re.sub(r"\r(?!\n)", "\n", text)).readline))
    except (UnicodeDecodeError, tokenize.TokenError, SyntaxError, IndentationError):
        return []
    commented = {t.start[0] for t in tokens if t.type == tokenize.COMMENT}
    return [t.start[0] for t in tokens if t.type == tokenize.NEWLINE and t.start[0] not in commented
            and t.string]


def add_trailing_comments(data: bytes, rng: random.Random) -> bytes:
    rows = statement_ends(data)
    if not rows:
        return data
    chosen = set(rng.sample(rows, min(len(rows), max(1, len(rows) // 3))))
    out = []
    for row, line in enumerate(lines_of(data), start=1):
        if row in chosen:
            body = line.rstrip(b"\r\n")
            line = body + b"  # fz" + line[len(body):]
        out.append(line)
    return b"".join(out)


def mutate(data: bytes, mutation: str, rng: random.Random) -> bytes:
    lf = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if mutation == "crlf":
        return with_endings(lf, lambda: b"\r\n")
    if mutation == "cr":
        return with_endings(lf, lambda: b"\r")
    if mutation == "mixed":
        return with_endings(lf, lambda: rng.choice([b"\n", b"\r\n", b"\r"]))
    if mutation == "trailing-comments":
        return add_trailing_comments(lf, rng)
    if mutation.endswith("+trailing-comments"):
        return mutate(add_trailing_comments(lf, rng), mutation.split("+")[0], rng)
    if mutation == "bom":
        return BOM + lf
    if mutation == "latin-1-cookie":
        try:
            return b"# -*- coding: latin-1 -*-\n" + lf.decode("utf-8").encode("latin-1")
        except (UnicodeDecodeError, UnicodeEncodeError):
            return b"# -*- coding: latin-1 -*-\n" + lf if lf.isascii() else lf
    if mutation == "bom+utf8-cookie":
        return BOM + b"# coding: utf8\n" + lf
    if mutation == "double-bom":
        return BOM + BOM + lf
    if mutation == "form-feeds":
        lines = lines_of(lf)
        for _ in range(3):
            at = rng.randrange(len(lines) + 1)
            if at == len(lines) or not lines[at - 1:at] or lines[at - 1].endswith(b"\n"):
                lines.insert(at, b"\x0c\n")
        return b"".join(lines)
    if mutation == "no-final-newline":
        return lf.rstrip(b"\n")
    if mutation == "cr-in-comment":
        return re.sub(rb"(#[^\n]*?) ", lambda m: m.group(1) + b"\r", lf, count=2)
    if mutation == "tabs-to-crlf-cr":
        return with_endings(lf, lambda: rng.choice([b"\r\n", b"\r"]))
    raise ValueError(mutation)


def comments(data: bytes) -> Counter:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    try:
        tokens = tokenize.generate_tokens(io.StringIO(re.sub(r"\r(?!\n)", "\n", text)).readline)
        return Counter(t.string for t in tokens if t.type == tokenize.COMMENT
                       and not re.search(r"noqa|volfix", t.string, re.I))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return Counter()


def normalised(data: bytes) -> bytes:
    return (data[len(BOM):] if data.startswith(BOM) else data).replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def fix_in(directory: str, name: str, data: bytes) -> Tuple[object, bytes]:
    path = os.path.join(directory, name)
    with open(path, "wb") as handle:
        handle.write(data)
    result = process_file(path, config=DEFAULT_CONFIG, mode="fix", unsafe_fixes=True, display_path=name)
    with open(path, "rb") as handle:
        return result, handle.read()


def run_file(job) -> dict:
    path, mutants, seed = job
    with open(path, "rb") as handle:
        original = handle.read()
    rng = random.Random(f"{seed}:{os.path.basename(path)}")
    findings, runs, count = [], 0, 0
    shown = os.path.relpath(path, "/work") if path.startswith("/work/") else path
    with tempfile.TemporaryDirectory(prefix="volfix-fuzz-") as tmp:
        base_result, base_fixed = fix_in(tmp, "base.py", original.replace(b"\r\n", b"\n").replace(b"\r", b"\n"))
        runs += 1
        chosen = list(MUTATIONS)
        rng.shuffle(chosen)
        for mutation in chosen[:mutants]:
            data = mutate(original, mutation, rng)
            count += 1

            def finding(step: str, detail: str) -> None:
                findings.append({"file": shown, "mutation": mutation, "step": step, "detail": detail[:400]})

            checked = process_file(_write(tmp, "check.py", data), config=DEFAULT_CONFIG, mode="check",
                                   display_path="check.py")
            runs += 1
            if checked.error:
                finding("check", checked.error.splitlines()[0])
            result, written = fix_in(tmp, "mutant.py", data)
            runs += 1
            if result.error:
                finding("fix", result.error.splitlines()[0])
                continue
            bugs = [d.message + " " + (d.note or "") for d in result.diagnostics if "volfix bug" in (d.note or "") + d.message]
            if bugs:
                finding("fix", "volfix bug: " + bugs[0])
            left = [f"{d.code}@{d.location.row}" for d in result.diagnostics if d.is_applicable(True)]
            if left:
                finding("fix", "applicable findings left after fix: " + ", ".join(left))
            if compiles(data):
                if not compiles(written):
                    finding("fix", "the fixed file does not compile")
            elif written != data:
                finding("fix", "a file CPython refuses was rewritten")
            lost = comments(data) - comments(written)
            if lost:
                finding("fix", f"comments lost: {sorted(lost)[:3]}")
            again, rewritten = fix_in(tmp, "mutant.py", written)
            runs += 1
            if again.error:
                finding("fix again", again.error.splitlines()[0])
            elif rewritten != written:
                finding("fix again", "a second fix changed the file")
            if mutation in ("crlf", "cr", "mixed", "tabs-to-crlf-cr", "bom") and compiles(data):
                if normalised(written) != normalised(base_fixed):
                    finding("oracle", "fixed differently from the LF file (line endings aside)")
    return {"file": shown, "mutants": count, "runs": runs, "findings": findings}


def _write(directory: str, name: str, data: bytes) -> str:
    path = os.path.join(directory, name)
    with open(path, "wb") as handle:
        handle.write(data)
    return path


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="/work/evalrepos")
    parser.add_argument("--files", type=int, default=302)
    parser.add_argument("--mutants", type=int, default=11, help="mutations per file (of %d)" % len(MUTATIONS))
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", default=None, help="write the summary and findings as JSON here")
    args = parser.parse_args(argv)
    started = time.monotonic()
    files = corpus_files(args.corpus, args.files, args.seed)
    jobs = [(path, args.mutants, args.seed) for path in files]
    with multiprocessing.get_context("fork").Pool(args.jobs, maxtasksperchild=20) as pool:
        results = []
        for done in pool.imap_unordered(run_file, jobs):
            results.append(done)
            for f in done["findings"]:
                print(f"FINDING {f['file']} [{f['mutation']}] {f['step']}: {f['detail']}", flush=True)
            if len(results) % 25 == 0:
                print(f"... {len(results)}/{len(files)} files", file=sys.stderr, flush=True)
    findings = [f for r in results for f in r["findings"]]
    summary = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "files": len(results), "mutants": sum(r["mutants"] for r in results),
        "runs": sum(r["runs"] for r in results), "findings": len(findings),
        "seconds": round(time.monotonic() - started), "seed": args.seed,
        "mutations": list(MUTATIONS),
    }
    print(json.dumps(summary))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump({**summary, "findings_detail": findings}, handle, indent=1)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
