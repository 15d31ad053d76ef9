#!/usr/bin/env python3
"""Build the real-world evaluation corpus of volfix from its manifest.

    python scripts/evaluation corpus export [--manifest docs/eval-corpus.json] [--mirror /work/.mirror]
                                         [--out /work/evalrepos] [--human-out /work/evalhuman]
                                         [--repo OWNER/NAME ...]
    python scripts/evaluation corpus migrations GIT_DIR [GIT_DIR ...]
    python scripts/evaluation corpus list [--manifest ...]

The manifest (docs/eval-corpus.json) holds metadata only: repository, snapshot commit, the
commits of a human migration (`pre`: the tree before it, `post`: the tree after it), kind,
whether notebooks carry legacy code, and why the repository was chosen. The code itself never
enters volfix's tree: `export` writes working-tree exports of the `*.py` and `*.ipynb` files of
each commit OUTSIDE it, from git directories fetched beforehand (one per repository, at
MIRROR/<owner>+<name>/repo or MIRROR/<owner>+<name>/repo/.git):

    OUT/<owner>+<name>/                  the snapshot commit (what `evaluate.py` measures)
    HUMAN_OUT/<owner>+<name>@<post>/pre  the parent side of a human migration
    HUMAN_OUT/<owner>+<name>@<post>/post the human migration itself (`compare_human.py`)

An export is only rewritten when its commit changed (a `.commit` file records it), so rerunning
is cheap. `migrations` lists the commits of a git directory that removed more lines mentioning
`volatile` than they added, with the `no_grad`/`set_grad_enabled` lines they added: the
candidates for a human migration (read them before adding one to the manifest).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Iterator, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MANIFEST = os.path.join(ROOT, "docs", "eval-corpus.json")
KEEP = (".py", ".ipynb")


def load_manifest(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def dir_name(repo: str) -> str:
    """`owner/name` -> `owner+name`, the directory naming shared by all evaluation scripts."""
    return repo.replace("/", "+")


def human_dir_name(repo: str, migration: dict) -> str:
    return f"{dir_name(repo)}@{migration['post'][:8]}"


def git_dir(mirror: str, repo: str) -> Optional[str]:
    base = os.path.join(mirror, dir_name(repo), "repo")
    for cand in (os.path.join(base, ".git"), base):
        if os.path.isfile(os.path.join(cand, "HEAD")):
            return cand
    return None


def git(gdir: str, *args: str, text: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "--git-dir", gdir, *args], capture_output=True, text=text)


def export_tree(gdir: str, commit: str, dest: str) -> Tuple[int, List[str]]:
    """Write the `*.py`/`*.ipynb` files of `commit` into `dest` (replaced).

    Returns (files written, paths whose blob the snapshot lacks: stores keep the largest files
    of a snapshot out, so a few big notebooks may be missing; they are listed in `.missing`).
    Reads the tree with `ls-tree` and the blobs with one `cat-file --batch`, so that a missing
    blob elsewhere in the commit (a dataset, a gif) does not fail the export as `git archive` would.
    """
    marker = os.path.join(dest, ".commit")
    if os.path.isfile(marker):
        with open(marker, encoding="utf-8") as fh:
            if fh.read().strip() == commit:
                return sum(1 for _ in iter_exported(dest)), _read_missing(dest)
    tree = git(gdir, "ls-tree", "-r", "-z", "--full-tree", commit, text=False)
    if tree.returncode != 0:
        raise RuntimeError(f"git ls-tree {commit} failed: {tree.stderr.decode(errors='replace').strip()}")
    wanted = []  # (blob sha, path)
    for rec in tree.stdout.split(b"\0"):
        if not rec:
            continue
        meta, _, path = rec.partition(b"\t")
        mode, kind, sha = meta.split()
        name = path.decode("utf-8", "surrogateescape")
        if kind == b"blob" and mode != b"120000" and name.endswith(KEEP):
            wanted.append((sha.decode(), name))
    tmp = tempfile.mkdtemp(prefix=".export-", dir=os.path.dirname(dest) or ".")
    missing: List[str] = []
    batch = subprocess.run(["git", "--git-dir", gdir, "cat-file", "--batch"],
                           input=b"".join(sha.encode() + b"\n" for sha, _ in wanted), capture_output=True)
    data, pos = batch.stdout, 0
    for sha, name in wanted:
        eol = data.index(b"\n", pos)
        header = data[pos:eol].split()
        pos = eol + 1
        if len(header) < 3 or header[1] == b"missing":
            missing.append(name)
            continue
        size = int(header[2])
        blob, pos = data[pos:pos + size], pos + size + 1  # the blob, then its trailing newline
        target = os.path.normpath(os.path.join(tmp, name))
        if not target.startswith(tmp + os.sep):  # never write outside the export
            continue
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as out:
            out.write(blob)
    with open(os.path.join(tmp, ".commit"), "w", encoding="utf-8") as fh:
        fh.write(commit + "\n")
    if missing:
        with open(os.path.join(tmp, ".missing"), "w", encoding="utf-8") as fh:
            fh.write("".join(m + "\n" for m in missing))
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    os.rename(tmp, dest)
    return len(wanted) - len(missing), missing


def _read_missing(dest: str) -> List[str]:
    path = os.path.join(dest, ".missing")
    if not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8") as fh:
        return [ln.rstrip("\n") for ln in fh if ln.strip()]


def iter_exported(root: str) -> Iterator[str]:
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            if name.endswith(KEEP):
                yield os.path.join(dirpath, name)


def export(args) -> int:
    manifest = load_manifest(args.manifest)
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.human_out, exist_ok=True)
    failed = 0
    for entry in manifest["repos"]:
        repo = entry["repo"]
        if args.repo and repo not in args.repo:
            continue
        gdir = git_dir(args.mirror, repo)
        if gdir is None:
            print(f"MISSING {repo}: no git directory under {args.mirror} (fetch it first)", file=sys.stderr)
            failed += 1
            continue
        jobs = [(entry["commit"], os.path.join(args.out, dir_name(repo)))]
        for mig in entry.get("human_migrations", []):
            base = os.path.join(args.human_out, human_dir_name(repo, mig))
            os.makedirs(base, exist_ok=True)
            jobs += [(mig["pre"], os.path.join(base, "pre")), (mig["post"], os.path.join(base, "post"))]
        for commit, dest in jobs:
            try:
                n, missing = export_tree(gdir, commit, dest)
            except RuntimeError as exc:
                print(f"FAILED {repo} {commit[:8]}: {exc}", file=sys.stderr)
                failed += 1
                continue
            note = f", {len(missing)} missing from the snapshot: {', '.join(missing[:3])}" if missing else ""
            print(f"{repo} {commit[:8]} -> {dest} ({n} files{note})")
    return 1 if failed else 0


def migrations(args) -> int:
    """Print candidate human-migration commits of each git directory."""
    for gdir in args.git_dirs:
        log = git(gdir, "log", "--format=%H %ad %s", "--date=short", "-S", "volatile", "--", "*.py", "*.ipynb")
        for line in log.stdout.splitlines():
            sha = line.split()[0]
            diff = git(gdir, "show", "--format=", "-U0", sha, "--", "*.py", "*.ipynb").stdout
            removed = added = regions = 0
            for ln in diff.splitlines():
                if ln.startswith(("---", "+++")):
                    continue
                if ln.startswith("-") and "volatile" in ln:
                    removed += 1
                elif ln.startswith("+") and "volatile" in ln:
                    added += 1
                if ln.startswith("+") and re.search(r"no_grad|set_grad_enabled|inference_mode", ln):
                    regions += 1
            if removed > added:
                print(f"{gdir}\t{line[:100]}\t-volatile {removed} +volatile {added} +regions {regions}")
    return 0


def list_repos(args) -> int:
    manifest = load_manifest(args.manifest)
    for e in manifest["repos"]:
        migs = ", ".join(f"{m['pre'][:8]}..{m['post'][:8]}" for m in e.get("human_migrations", []))
        print(f"{e['repo']:60} {e['commit'][:8]} {e['source']:10} {e['kind']:8} "
              f"nb={'y' if e.get('notebooks') else 'n'} {migs}")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    ex = sub.add_parser("export", help="export the manifest's commits (outside this tree)")
    ex.add_argument("--manifest", default=DEFAULT_MANIFEST)
    ex.add_argument("--mirror", default="/work/.mirror", help="holds <owner>+<name>/repo git directories")
    ex.add_argument("--out", default="/work/evalrepos")
    ex.add_argument("--human-out", default="/work/evalhuman")
    ex.add_argument("--repo", action="append", help="only this repository (owner/name); repeatable")
    mg = sub.add_parser("migrations", help="list candidate human-migration commits")
    mg.add_argument("git_dirs", nargs="+")
    ls = sub.add_parser("list", help="one line per manifest entry")
    ls.add_argument("--manifest", default=DEFAULT_MANIFEST)
    args = ap.parse_args(argv)
    return {"export": export, "migrations": migrations, "list": list_repos}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
