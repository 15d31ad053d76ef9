"""runner.run: prefilter, cache, process pool and per-file failure handling.

The engine is replaced by small fake `process` functions (module level, so that the
process pool can pickle them); they report one finding per line mentioning `Variable(`.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from volfix.run import cache as cache_module
from volfix.run import runner, scan
from volfix.run.cache import CACHE_DIR_NAME
from volfix.run.options import RunOptions
from volfix.settings.config import Config
from volfix.model import Diagnostic, FileResult, Location

LEGACY = "from torch.autograd import Variable\nx = Variable(t, volatile=True)\n"
CLEAN = "import torch\n\ndef f(x):\n    return x * 2\n"

CALLS = []  # paths analysed in this process (jobs=1)


def fake_process(path, *, config, mode, unsafe_fixes, display_path):
    CALLS.append(display_path)
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    diags = tuple(
        Diagnostic(code="VF110", message=f"mode={mode}", location=Location(i, 1),
                   end_location=Location(i, 2))
        for i, line in enumerate(text.splitlines(), 1) if "Variable(" in line)
    return FileResult(path=display_path, diagnostics=diags, source=text)


def raising_process(path, *, config, mode, unsafe_fixes, display_path):
    if "boom" in path:
        raise RuntimeError("rule exploded")
    return fake_process(path, config=config, mode=mode, unsafe_fixes=unsafe_fixes,
                        display_path=display_path)


def dying_process(path, *, config, mode, unsafe_fixes, display_path):
    if "die" in os.path.basename(path):
        os._exit(3)  # a segfault / OOM kill, as far as the pool can tell
    return fake_process(path, config=config, mode=mode, unsafe_fixes=unsafe_fixes,
                        display_path=display_path)


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    CALLS.clear()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "legacy.py").write_text(LEGACY)
    (tmp_path / "pkg" / "clean.py").write_text(CLEAN)
    (tmp_path / "b_legacy.py").write_text(LEGACY + "y = Variable(u)\n")
    (tmp_path / "notes.txt").write_text(LEGACY)
    return tmp_path


def run(paths=(".",), config=None, configs=None, _process=fake_process, **options):
    options.setdefault("unsafe_fixes", False)
    options.setdefault("jobs", 1)
    return runner.run_with_stats(list(paths), config=config or Config(), configs=configs, _process=_process,
                                 options=RunOptions(**options))


def test_only_candidates_are_analysed_and_results_are_sorted(tree):
    results, stats = run(use_cache=False)
    assert [r.path for r in results] == ["b_legacy.py", os.path.join("pkg", "legacy.py")]
    assert sorted(CALLS) == [r.path for r in results]
    assert [len(r.diagnostics) for r in results] == [2, 1]
    assert (stats.discovered, stats.candidates, stats.analysed) == (3, 2, 2)


def test_paths_outside_cwd_are_shown_absolute(tree, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "x.py").write_text(LEGACY)
    results, _ = run([str(elsewhere)], use_cache=False)
    assert [r.path for r in results] == [str(elsewhere / "x.py")]


def test_cache_hit_skips_analysis_and_returns_the_same_result(tree):
    first, _ = run()
    assert (tree / CACHE_DIR_NAME / ".gitignore").is_file()
    CALLS.clear()
    second, stats = run()
    assert CALLS == []
    assert stats.cache_hits == 2
    assert second == first


def test_edited_file_is_rechecked(tree):
    run()
    (tree / "pkg" / "legacy.py").write_text(LEGACY + "z = Variable(w)\n")
    CALLS.clear()
    results, stats = run()
    assert CALLS == [os.path.join("pkg", "legacy.py")]
    assert stats.cache_hits == 1
    assert len(results[1].diagnostics) == 2


def test_changed_config_is_rechecked(tree):
    run()
    CALLS.clear()
    run(config=Config(ignore=("VF2",)))
    assert sorted(CALLS) == ["b_legacy.py", os.path.join("pkg", "legacy.py")]


def test_changed_version_is_rechecked(tree, monkeypatch):
    run()
    monkeypatch.setattr(cache_module, "__version__", "999.0")
    CALLS.clear()
    _, stats = run()
    assert stats.cache_hits == 0 and len(CALLS) == 2


def test_changed_engine_is_rechecked(tree, monkeypatch):
    # The same version, other code (a development checkout): the engine's fingerprint differs.
    run()
    monkeypatch.setattr(cache_module, "engine_fingerprint", lambda: "other-engine")
    CALLS.clear()
    _, stats = run()
    assert stats.cache_hits == 0 and len(CALLS) == 2


def test_no_cache_neither_reads_nor_writes(tree):
    run(use_cache=False)
    assert not (tree / CACHE_DIR_NAME).exists()
    run()
    CALLS.clear()
    run(use_cache=False)
    assert len(CALLS) == 2


def test_corrupt_cache_entries_are_rechecked_and_repaired(tree):
    first, _ = run()
    for dirpath, _, names in os.walk(tree / CACHE_DIR_NAME):
        for name in names:
            if name.endswith(".json"):
                with open(os.path.join(dirpath, name), "w") as fh:
                    fh.write('{"path": ')
    CALLS.clear()
    again, stats = run()
    assert len(CALLS) == 2 and stats.cache_hits == 0 and again == first
    CALLS.clear()
    run()
    assert CALLS == []


def test_fix_mode_uses_check_entries_only_for_files_without_findings(tree):
    # a candidate (it binds and uses torch's Variable) without findings
    (tree / "pkg" / "suppressed.py").write_text("from torch.autograd import Variable\nok = isinstance(x, Variable)\n")
    run()  # check: fills the cache
    CALLS.clear()
    results, stats = run(mode="fix")
    # the file without findings comes from the cache; files with findings are fixed
    assert sorted(CALLS) == ["b_legacy.py", os.path.join("pkg", "legacy.py")]
    assert stats.cache_hits == 1
    assert all(d.message == "mode=fix" for r in results for d in r.diagnostics)
    # fix results are never stored: a later check still hits the check entries
    CALLS.clear()
    run()
    assert CALLS == []


def test_crash_in_process_function_becomes_a_file_error(tree):
    (tree / "boom.py").write_text(LEGACY)
    results, _ = run(_process=raising_process, use_cache=False)
    by_path = {r.path: r for r in results}
    assert "rule exploded" in by_path["boom.py"].error
    assert "volfix bug" in by_path["boom.py"].error
    assert by_path["b_legacy.py"].error is None and len(by_path["b_legacy.py"].diagnostics) == 2


def make_many(root, count):
    for i in range(count):
        (root / f"m{i:02d}.py").write_text(LEGACY * (i % 3 + 1))


def test_process_pool_gives_the_same_results_as_in_process(tree):
    make_many(tree, 12)
    serial, s_stats = run(use_cache=False)
    parallel, p_stats = run(use_cache=False, jobs=2)
    assert s_stats.workers == 0 and p_stats.workers == 2
    assert parallel == serial


def test_few_candidates_are_analysed_in_process(tree):
    _, stats = run(use_cache=False, jobs=4)
    assert stats.workers == 0
    assert len(CALLS) == 2  # ran here, not in a worker


@pytest.mark.parametrize("pool", ["executor", "forked"])
def test_dead_worker_only_fails_its_own_file(tree, monkeypatch, pool):
    # A check's analysis: forked workers from PARALLEL_FORK_MIN_LINES lines on (Linux), the
    # StoppablePool from PARALLEL_MIN_FILES files on otherwise (and always in a fix).
    if pool == "forked" and not runner.forked.available():
        pytest.skip("forked workers are Linux-only")
    monkeypatch.setattr(runner, "PARALLEL_FORK_MIN_LINES", 1 if pool == "forked" else 10 ** 9)
    make_many(tree, 12)
    (tree / "die.py").write_text(LEGACY)
    results, stats = run(use_cache=False, jobs=2, _process=dying_process)
    assert stats.workers == 2
    errors = {r.path: r.error for r in results if r.error}
    assert list(errors) == ["die.py"] and "died" in errors["die.py"]
    assert len(results) == 2 + 12 + 1
    assert all(len(r.diagnostics) >= 1 for r in results if r.path != "die.py")


def test_unreadable_file_is_handed_to_the_engine(tree):
    results, stats = run(["missing.py"], use_cache=False, _process=raising_process)
    assert stats.candidates == 1 and [r.path for r in results] == ["missing.py"]
    assert results[0].error is not None  # the fake cannot read it; the real engine reports VF002


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_named_on_the_command_line_is_reported_not_waited_for(tree):
    """The scan once opened every named path with a blocking `open()`: a FIFO hung the run
    for good. It is now VF002, and the other files are still checked."""
    os.mkfifo(tree / "pipe.py")
    proc = subprocess.run([sys.executable, "-m", "volfix", "check", "--no-cache", "pipe.py", "b_legacy.py"],
                          cwd=str(tree), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "pipe.py:1:1: VF002 File cannot be read: not a regular file" in proc.stdout
    assert "b_legacy.py:2:" in proc.stdout


def test_progress_reaches_total_and_never_goes_back(tree):
    calls = []
    run(use_cache=False, progress=lambda done, total: calls.append((done, total)))
    assert calls[0] == (0, 3) and calls[-1] == (3, 3)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_bad_arguments_raise(tree):
    with pytest.raises(ValueError):
        run(mode="rewrite")
    with pytest.raises(ValueError):
        run(jobs=-1)


def test_clean_tree_run_does_not_import_libcst_rich_or_the_engine(tree):
    (tree / "pkg" / "legacy.py").write_text(CLEAN)
    (tree / "b_legacy.py").write_text(CLEAN)
    code = ("import sys; from volfix.settings.config import Config; from volfix.run.runner import run; "
            "res = run(['.'], config=Config()); "
            "print(len(res), sorted(m for m in ('libcst', 'rich', 'volfix.engine') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=str(tree), capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "0 []"


def test_parallel_scan_finds_the_same_candidates(tree, monkeypatch):
    make_many(tree, 6)
    for i in range(20):
        (tree / f"clean{i:02d}.py").write_text(CLEAN)
    serial, s_stats = run(use_cache=False)
    monkeypatch.setattr(scan, "PARALLEL_SCAN_MIN_FILES", 1)
    parallel, p_stats = run(use_cache=False, jobs=2)
    assert p_stats.candidates == s_stats.candidates == 2 + 6
    assert parallel == serial


@pytest.mark.skipif(not runner.forked.available(), reason="forked workers are Linux-only")
def test_forked_workers_scan_and_check_like_a_serial_run(tree, monkeypatch):
    """A large tree is scanned by forked workers, and a check's few candidates are analysed
    by forked workers too (they inherit the engine this process imported during the scan):
    the results are a serial run's. A fix gives the files a serial fix gives."""
    evaluate = ("import torch\nfrom torch.autograd import Variable\n\n\ndef evaluate(model, x):\n"
                "    out = model(Variable(x, volatile=True))\n    return out.data\n")
    for i in range(3):
        (tree / f"ev{i}.py").write_text(evaluate)
    for i in range(20):
        (tree / f"clean{i:02d}.py").write_text(CLEAN)
    serial, _ = run(use_cache=False, _process=None)
    monkeypatch.setattr(scan, "PARALLEL_SCAN_MIN_FILES", 1)
    monkeypatch.setattr(runner, "PARALLEL_FORK_MIN_LINES", 1)
    pooled, stats = run(use_cache=False, _process=None, jobs=2)
    assert stats.analysed < runner.PARALLEL_MIN_FILES and stats.workers == 2
    assert pooled == serial and any(d.code == "VF101" for r in pooled for d in r.diagnostics)
    fixed, stats = run(use_cache=False, _process=None, jobs=2, mode="fix")
    assert all(r.changed for r in fixed if r.path.startswith("ev"))
    assert "volatile" not in (tree / "ev0.py").read_text()
    assert "@torch.no_grad()" in (tree / "ev2.py").read_text()


def test_real_engine_results_survive_the_cache(tree):
    (tree / "ev.py").write_text(
        "import torch\nfrom torch.autograd import Variable\n\n\ndef evaluate(model, loader):\n"
        "    for x in loader:\n        out = model(Variable(x, volatile=True))\n"
        "        print(out.volatile)\n")
    first, stats = run(["ev.py"], _process=None)
    assert stats.cache_hits == 0 and first[0].error is None
    assert {"VF101", "VF201"} <= {d.code for d in first[0].diagnostics}
    again, stats = run(["ev.py"], _process=None)
    assert stats.cache_hits == 1 and again == first
    fixed, _ = run(["ev.py"], _process=None, mode="diff", use_cache=False)
    assert fixed[0].fixed_source is not None and "volatile=True" not in fixed[0].fixed_source


@pytest.mark.skipif(not runner.forked.available(), reason="forked workers are Linux-only")
def test_a_scan_during_the_walk_finds_what_a_serial_scan_finds_with_nested_configurations(tree, monkeypatch):
    """Chunks scanned while the walk goes on are tested for the codes of the directories
    walked so far. A deeper configuration enabling another code makes the files scanned
    before it candidates again, as the serial scan (which knows every directory) does."""
    from volfix.settings.nearest import ConfigResolver

    (tree / "volfix.toml").write_text('select = ["VF101"]\n')
    (tree / "a_async.py").write_text("import torch\nx.cuda(async=True)\n")  # VF301: not selected here
    (tree / "zz").mkdir()
    (tree / "zz" / "volfix.toml").write_text('select = ["VF101", "VF301"]\n')
    (tree / "zz" / "late.py").write_text("y.cuda(async=True)\n")
    for i in range(6):
        (tree / f"clean{i}.py").write_text(CLEAN)

    def resolver():
        return ConfigResolver(Config(source=str(tree / "volfix.toml"), select=("VF101",)))

    serial, s_stats = run(use_cache=False, configs=resolver())
    monkeypatch.setattr(scan, "PARALLEL_SCAN_MIN_FILES", 1)
    monkeypatch.setattr(scan, "SCAN_CHUNK", 1)
    parallel, p_stats = run(use_cache=False, jobs=2, configs=resolver())
    assert "a_async.py" in [r.path for r in serial]
    assert (p_stats.discovered, p_stats.candidates) == (s_stats.discovered, s_stats.candidates)
    assert parallel == serial
