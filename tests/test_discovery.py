"""Directory walking: suffixes, built-in skips, .gitignore (nested), excludes, symlinks."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from volfix.files.discovery import ExcludeMatcher, discover


def make(root, *names, content="x = 1\n"):
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


def rel(root, paths):
    return [os.path.relpath(p, root).replace(os.sep, "/") for p in paths]


def walk(root, *paths, **kwargs):
    kwargs.setdefault("root", str(root))
    return rel(root, discover([str(root / p) for p in (paths or (".",))], **kwargs))


def test_suffixes_and_sorted_order(tmp_path):
    make(tmp_path, "b.py", "a.pyi", "nb.ipynb", "notes.txt", "setup.cfg", "pkg/z.py", "pkg/a.py",
         "script")
    assert walk(tmp_path) == ["a.pyi", "b.py", "nb.ipynb", "pkg/a.py", "pkg/z.py"]


@pytest.mark.parametrize("skipped", [".git", "__pycache__", ".ipynb_checkpoints", "build",
                                     "site-packages", "venv", ".venv", ".tox", ".nox",
                                     "node_modules", ".volfix_cache", ".mypy_cache", ".ruff_cache",
                                     "env"])
def test_builtin_skips(tmp_path, skipped):
    make(tmp_path, f"{skipped}/mod.py", f"src/{skipped}/deep/mod.py", "src/kept.py")
    assert walk(tmp_path) == ["src/kept.py"]


def test_virtualenv_detected_by_pyvenv_cfg(tmp_path):
    make(tmp_path, "myenv/pyvenv.cfg", "myenv/lib/mod.py", "app.py")
    assert walk(tmp_path) == ["app.py"]


def test_gitignore_root_and_nested_relative_semantics(tmp_path):
    make(tmp_path, "a.py", "gen_pb2.py", "data/x.py", "pkg/b.py", "pkg/local.py", "pkg/sub/local.py",
         "pkg/sub/keep_pb2.py", "other/local.py")
    (tmp_path / ".gitignore").write_text("*_pb2.py\ndata/\n")
    # nested: 'local.py' applies below pkg/ only; '!' re-includes what the root ignores
    (tmp_path / "pkg" / ".gitignore").write_text("local.py\n!keep_pb2.py\n")
    assert walk(tmp_path) == ["a.py", "other/local.py", "pkg/b.py", "pkg/sub/keep_pb2.py"]


def test_gitignore_anchored_pattern_is_relative_to_its_directory(tmp_path):
    make(tmp_path, "pkg/gen.py", "pkg/sub/gen.py", "gen.py")
    (tmp_path / "pkg" / ".gitignore").write_text("/gen.py\n")
    assert walk(tmp_path) == ["gen.py", "pkg/sub/gen.py"]


def test_gitignore_not_respected_when_disabled(tmp_path):
    make(tmp_path, "a.py", "ignored.py")
    (tmp_path / ".gitignore").write_text("ignored.py\n")
    assert walk(tmp_path, respect_gitignore=False) == ["a.py", "ignored.py"]


def test_gitignore_of_ancestors_applies_inside_a_repository(tmp_path):
    make(tmp_path, "src/a.py", "src/a_pb2.py")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*_pb2.py\n")
    assert walk(tmp_path, "src") == ["src/a.py"]


def test_gitignore_of_ancestors_ignored_outside_a_repository(tmp_path):
    make(tmp_path, "src/a.py", "src/a_pb2.py")
    (tmp_path / ".gitignore").write_text("*_pb2.py\n")
    assert walk(tmp_path, "src") == ["src/a.py", "src/a_pb2.py"]


def test_explicitly_named_ignored_directory_is_walked(tmp_path):
    # As ruff: naming a directory that a .gitignore above ignores still checks it.
    make(tmp_path, "vendor/a.py", "b.py")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("vendor/\n")
    assert walk(tmp_path) == ["b.py"]
    assert walk(tmp_path, "vendor") == ["vendor/a.py"]


def test_explicit_file_always_checked_unless_force_exclude(tmp_path):
    make(tmp_path, "migrations/0001.py", "gen_pb2.py", "build/tool.py", "run_me")
    (tmp_path / ".gitignore").write_text("gen_pb2.py\n")
    named = ("migrations/0001.py", "gen_pb2.py", "build/tool.py", "run_me")
    exclude = ("migrations",)
    assert walk(tmp_path, *named, exclude=exclude) == sorted(named)
    # force-exclude applies excludes and built-in skips, but (as ruff) not .gitignore:
    # a force-added tracked file is still checked.
    assert walk(tmp_path, *named, exclude=exclude, force_exclude=True) == ["gen_pb2.py", "run_me"]


def test_missing_explicit_path_is_returned_for_the_engine_to_report(tmp_path):
    assert walk(tmp_path, "nope.py") == ["nope.py"]


@pytest.mark.parametrize("pattern, expected", [
    ("legacy", ["a.py", "src/b.py", "x_old.py"]),  # a directory's basename, anywhere
    ("src/legacy", ["a.py", "legacy/c.py", "src/b.py", "x_old.py"]),  # relative to the root
    ("*_old.py", ["a.py", "legacy/c.py", "src/b.py", "src/legacy/d.py"]),  # basename glob
    ("src/**/*.py", ["a.py", "legacy/c.py", "x_old.py"]),
    ("**/legacy", ["a.py", "src/b.py", "x_old.py"]),
    ("./legacy/", ["a.py", "src/b.py", "src/legacy/d.py", "x_old.py"]),
])
def test_exclude_globs_ruff_semantics(tmp_path, pattern, expected):
    make(tmp_path, "a.py", "src/b.py", "legacy/c.py", "src/legacy/d.py", "x_old.py")
    assert walk(tmp_path, exclude=(pattern,)) == expected


def test_exclude_matcher_single_star_does_not_cross_directories(tmp_path):
    matcher = ExcludeMatcher(["src/*.py"], str(tmp_path))
    assert matcher.matches(str(tmp_path / "src" / "a.py"), "a.py")
    assert not matcher.matches(str(tmp_path / "src" / "sub" / "a.py"), "a.py")


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
def test_symlink_loop_terminates_and_files_appear_once(tmp_path):
    make(tmp_path, "pkg/a.py")
    os.symlink(str(tmp_path / "pkg"), str(tmp_path / "pkg" / "loop"))
    os.symlink(str(tmp_path), str(tmp_path / "pkg" / "up"))
    assert walk(tmp_path) == ["pkg/a.py"]


def test_overlapping_paths_are_deduplicated(tmp_path):
    make(tmp_path, "pkg/a.py", "pkg/sub/b.py")
    assert walk(tmp_path, "pkg/sub", "pkg", "pkg/a.py") == ["pkg/a.py", "pkg/sub/b.py"]


def test_walking_does_not_import_libcst_or_rich(tmp_path):
    make(tmp_path, "a.py")
    (tmp_path / ".gitignore").write_text("b.py\n")
    code = ("import sys; from volfix.files.discovery import discover; discover([sys.argv[1]]); "
            "print(sorted(m for m in ('libcst', 'rich', 'volfix.engine') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_directory_that_cannot_be_listed_is_handed_on_not_skipped(tmp_path, monkeypatch):
    # An unreadable folder was skipped in silence ("All checks passed!", exit 0); it now
    # comes out as a path whose reading fails (VF002), between the files around it.
    make(tmp_path, "a.py", "pkg/locked/b.py", "pkg/open/c.py")
    locked = str(tmp_path / "pkg" / "locked")
    real_scandir = os.scandir

    def scandir(path="."):
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert walk(tmp_path) == ["a.py", "pkg/locked", "pkg/open/c.py"]


def _permissions_enforced():
    """preexec_fn under which a child obeys file permissions: root ignores them (CAP_DAC_*),
    so a root test run drops those capabilities from the child's bounding set."""
    if os.geteuid() != 0:
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def drop() -> None:
        for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
            if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")

    return drop


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX permissions, Linux capabilities")
def test_an_unreadable_subdirectory_is_reported_and_fails_the_run(tmp_path):
    make(tmp_path, "pkg/ok.py")
    make(tmp_path, "pkg/secret/a.py", content="from torch.autograd import Variable\nx = Variable(y, volatile=True)\n")
    secret = tmp_path / "pkg" / "secret"
    secret.chmod(0)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    try:
        probe = subprocess.run([sys.executable, "-c", f"import os; os.listdir({str(secret)!r})"],
                               capture_output=True, preexec_fn=_permissions_enforced(), env=env, timeout=60)
        if probe.returncode == 0:
            pytest.skip("this user reads a folder without permissions")
        proc = subprocess.run([sys.executable, "-m", "volfix", "check", "--no-cache", "pkg"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120, preexec_fn=_permissions_enforced(),
                              env=env)
    finally:
        secret.chmod(0o755)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert ("pkg/secret:1:1: VF002 Directory cannot be read, its files are not checked: Permission denied"
            in proc.stdout), proc.stdout
