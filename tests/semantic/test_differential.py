"""Differential tests: each legacy program's 0.3 meaning is the oracle for its fixed version.

For every program in examples/legacy/ (and the lm_package/ program), and every fixture that
is a program rather than a snippet, the untouched original runs under
`volfix.legacy.legacy_semantics()`, PyTorch 0.3's `volatile` on this torch, and the program
`volfix fix` makes runs with the same seeds: with `--unsafe-fixes` under plain torch, and
with the safe fixes only (the default configuration) under the 0.3 semantics, so that only
the safe fixes themselves can differ (`MODES`). They must agree on
- the exception raised, if any (its type);
- the forward-graph profile: for every top-level call of a module with parameters, whether
  its output has a grad_fn (tests/forward_probe.py);
- run()'s result: the same numbers (tight tolerance), types, and, for every tensor, the
  same graph presence (a grad_fn, a leaf that requires grad, or data);
- the parameters of every module that ran, after the run (the training steps' updates).

There are no per-program expectations: equality with the 0.3 run is the expectation. A
(program, mode) that differs is a fixer bug, kept strict with `xfail(strict=True)` and the
exact difference as the reason, until the fix planner is corrected (issue 21).
"""
from __future__ import annotations

import ast
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Optional, Tuple

import pytest

torch = pytest.importorskip("torch")

from volfix.run import runner  # noqa: E402
from volfix.run.options import RunOptions  # noqa: E402
from volfix.api import fix_source  # noqa: E402
from volfix.settings.config import Config  # noqa: E402
from volfix.syntax.async_keywords import mask_async  # noqa: E402

from fix_written import todays_detach  # noqa: E402
from harness import (  # noqa: E402
    EXAMPLES, PACKAGE, Outcome, outcome_differences, run_module, run_package, run_program,
    sources_in,
)

# "unsafe": the program `volfix fix --unsafe-fixes` makes, under plain torch: every finding
# fixed, so it must behave as the original did on 0.3, except where an unsafe fix's note says
# it changes something. "safe-on-0.3": the program plain `volfix fix` makes, under the 0.3
# semantics: the sites plain `fix` leaves for --unsafe-fixes keep their 0.3 meaning, so only the
# safe fixes themselves can make a difference (SPEC §2.10: a safe fix is one the oracle cannot
# tell from the legacy program). The safe-fixed program under plain torch is not compared: the
# unsafe sites it leaves behave as they do today, not as on 0.3, by definition.
MODES = ("unsafe", "safe-on-0.3")
PROGRAMS = sorted(p.stem for p in EXAMPLES.glob("*.py"))

# (program, mode) -> the difference from the 0.3 run, as outcome_differences() words it.
# Each is a fixer bug for the lead (volfix/fixes, volfix/flow), or a program that 0.3
# itself could not run (then the fixed program differs by working).
_MASKED = ("0.3 raised RuntimeError at `loss.backward()` (line 32): the labels and mask (lines 27-28) "
           "are volatile, so the loss is (SEMANTICS.md fact 5). Their VF101 fixes are unsafe and say so "
           "(\"the value reaches `loss.backward()`, where 0.3 raised\")")
KNOWN_DIFFERENCES: Dict[tuple, str] = {
    # The difference the unsafe fix's note announces: the step trains.
    ("masked_loss_training", "unsafe"): _MASKED + "; unwrapped, the step trains, as the note says",
    # The difference the VF101 note announces ("0.3 raised at `value_loss.backward()` (line
    # 34) on this value"): allowed for an unsafe fix; graphs FFT in 0.3, FFTFFT after.
    ("ddpg_target_update", "unsafe"): "0.3 raised at value_loss.backward(); the unsafe fix makes "
                                      "it train, as its note says",
    # `Variable` is never imported: the original raises NameError on 0.3 too. The unsafe fix
    # unwraps the calls (its note says the name does not resolve), and the program runs.
    ("unbound_variable", "unsafe"): "the original raises NameError (Variable is never imported); "
                                    "the unsafe fix unwraps the calls, as its note says, and it runs",
    # VF112's note on the wrapper's `type(x) != Variable` guard: "after the fix tensors skip
    # it, as only Variables did in 0.3" -- so the tensor asked to learn is no longer made a leaf
    # that requires grad, and it gets no gradient (0.3 could not tell that tensor from data).
    ("wrapper_type_guard", "unsafe"): "the unsafe VF112 fix lets tensors skip the wrapper, as its note "
                                      "says: the tensor passed with requires_grad=True gets no gradient",
}


@dataclass
class Pair:
    source: str
    fixed: str
    legacy: Outcome
    fixed_run: Outcome


_legacy_runs: Dict[str, Outcome] = {}
_pairs: Dict[tuple, Pair] = {}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("differential")


def legacy_run(name: str, workdir: Path) -> Outcome:
    """The original, unmodified, under 0.3 semantics (run once per program)."""
    if name not in _legacy_runs:
        source = (EXAMPLES / f"{name}.py").read_text(encoding="utf-8")
        _legacy_runs[name] = run_program(source, workdir, f"{name}_legacy", legacy=True)
    return _legacy_runs[name]


def pair_for(name: str, mode: str, workdir: Path) -> Pair:
    if (name, mode) not in _pairs:
        source = (EXAMPLES / f"{name}.py").read_text(encoding="utf-8")
        result = fix_source(source, path=f"{name}.py", unsafe_fixes=mode == "unsafe", config=Config())
        assert result.error is None, result.error
        fixed_run = run_program(runnable(source, result.fixed_source, mode), workdir, f"{name}_{mode}",
                                legacy=mode == "safe-on-0.3")
        _pairs[name, mode] = Pair(source, result.fixed_source, legacy_run(name, workdir), fixed_run)
    return _pairs[name, mode]


def runnable(original: str, fixed: str, mode: str) -> str:
    """What runs for `mode`: under the 0.3 semantics, the `.detach()` calls a fix wrote keep
    today's meaning (tests/fix_written.py)."""
    return todays_detach(original, fixed) if mode == "safe-on-0.3" else fixed


def params(names, modes=MODES):
    cases = []
    for name in names:
        for mode in modes:
            reason = KNOWN_DIFFERENCES.get((name, mode))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            cases.append(pytest.param(name, mode, marks=marks, id=f"{name}-{mode}"))
    return cases


def report(differences, legacy: Outcome, fixed: Outcome, fixed_source: str) -> str:
    lines = ["the fixed program differs from its 0.3 run:", *(f"  - {d}" for d in differences)]
    for label, outcome in (("0.3 run", legacy), ("fixed run", fixed)):
        if outcome.error:
            lines.append(f"--- {label} raised ---\n{outcome.error}")
    return "\n".join(lines + ["--- fixed source ---", fixed_source])


@pytest.mark.parametrize(("name", "mode"), params(PROGRAMS))
def test_fixed_program_matches_its_0_3_run(name, mode, workdir):
    pair = pair_for(name, mode, workdir)
    differences = outcome_differences(pair.legacy, pair.fixed_run)
    assert differences == [], report(differences, pair.legacy, pair.fixed_run, pair.fixed)


def test_every_program_runs_under_0_3_semantics(workdir):
    """The oracle itself: every original runs unmodified under the runtime (no hand repair:
    `type(h) == Variable`, `async=`, `loss.data[0]` all work as in 0.3), except the programs
    0.3 refused to run, which fail as 0.3 did: at backward() on a volatile root (fact 5), or
    at the call of a `Variable` the file never imported."""
    failures = {name: legacy_run(name, workdir).error for name in PROGRAMS}
    failed = {name: error.strip().splitlines()[-1] for name, error in failures.items() if error}
    expected = {name: "RuntimeError: element 0 of variables tuple is volatile" for name in ZERO_THREE_REFUSED}
    expected["unbound_variable"] = "NameError: name 'Variable' is not defined"
    assert failed == expected, failed


# Programs whose own docstring says 0.3 raised at backward() (their volatile value is a
# loss target): the oracle must reproduce that failure.
ZERO_THREE_REFUSED = ("ddpg_target_update", "masked_loss_training")


def test_the_oracle_sees_0_3_graphs(workdir):
    """The comparison is not vacuous: the 0.3 run of an evaluation program records no graph
    where today's torch does (SEMANTICS.md E2d), and training passes still record."""
    source = (EXAMPLES / "mnist_eval.py").read_text(encoding="utf-8")
    today = run_program(source, workdir, "mnist_eval_today")
    zero_three = legacy_run("mnist_eval", workdir)
    assert today.graph == "TTTTT" and zero_three.graph == "TTTFF"
    assert outcome_differences(zero_three, today) == ["forward graphs: TTTFF in 0.3, TTTTT after the fix"]


def test_the_comparison_reports_each_kind_of_difference():
    w = torch.ones(2, requires_grad=True)
    base = Outcome({"loss": 1.0, "out": w * 2, "n": 3}, None, [], "TF", None, [torch.zeros(2)])
    same = Outcome({"loss": 1.0 + 1e-9, "out": (w * 2).detach() + 0, "n": 3}, None, [], "TF", None,
                   [torch.zeros(2)])
    assert outcome_differences(base, same) == ["run()['out']: graph in 0.3, data after the fix"]
    other = Outcome({"loss": 1.5, "out": w * 3, "n": 3.0}, "Traceback...", [], "TT", "RuntimeError",
                    [torch.ones(2)])
    assert outcome_differences(base, other) == [
        "exception: none in 0.3, RuntimeError after the fix",
        "forward graphs: TF in 0.3, TT after the fix",
        "parameter 0: values differ"]
    other.error, other.error_type = None, None
    assert outcome_differences(base, other) == [
        "forward graphs: TF in 0.3, TT after the fix",
        "run()['loss']: 1.0 in 0.3, 1.5 after the fix",
        "run()['out']: values differ",
        "run()['n']: 3 in 0.3, 3.0 after the fix",
        "parameter 0: values differ"]


@pytest.mark.parametrize("name", PROGRAMS)
def test_each_original_means_something_else_today(name, workdir):
    """Every program shows a legacy behaviour: its 0.3 run and the same source under plain
    torch differ (graphs, results, or one of them raises), so agreeing with the 0.3 run
    is something a fix has to earn."""
    if name in CANNOT_RUN_ON_0_3:
        pytest.skip(CANNOT_RUN_ON_0_3[name])
    source = (EXAMPLES / f"{name}.py").read_text(encoding="utf-8")
    today = run_program(source, workdir, f"{name}_today")
    assert outcome_differences(legacy_run(name, workdir), today) != []


# Programs whose original fails the same way on 0.3 and today: what they show is that the fix
# makes them run.
CANNOT_RUN_ON_0_3 = {
    "unbound_variable": "`Variable` is never imported: NameError on 0.3 and today alike",
}


def test_a_program_that_cannot_run_on_0_3_fails_there(workdir):
    for name in CANNOT_RUN_ON_0_3:
        assert legacy_run(name, workdir).error is not None


# ----------------------------------------- a program split over modules (lm_package)


@pytest.fixture(scope="module")
def package_dirs(tmp_path_factory) -> Dict[str, Path]:
    base = tmp_path_factory.mktemp("differential_package")
    dirs = {}
    for label in ("original", "safe", "unsafe"):
        dirs[label] = Path(shutil.copytree(PACKAGE, base / label / PACKAGE.name,
                                           ignore=shutil.ignore_patterns("__pycache__")))
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(base)
        for mode in ("safe", "unsafe"):
            results = runner.run([str(dirs[mode])], config=Config(),
                                 options=RunOptions(mode="fix", unsafe_fixes=mode == "unsafe", use_cache=False))
            assert [f"{r.path}: {r.error}" for r in results if r.error] == []
    dirs["safe-on-0.3"] = Path(shutil.copytree(dirs["safe"], base / "safe-on-0.3" / PACKAGE.name))
    for path in dirs["safe-on-0.3"].rglob("*.py"):
        original = (dirs["original"] / path.relative_to(dirs["safe-on-0.3"])).read_text(encoding="utf-8")
        path.write_text(todays_detach(original, path.read_text(encoding="utf-8")), encoding="utf-8")
    return dirs


_package_legacy: Optional[Outcome] = None


@pytest.mark.parametrize(("name", "mode"), params([PACKAGE.name]))
def test_fixed_package_matches_its_0_3_run(name, mode, package_dirs):
    global _package_legacy
    if _package_legacy is None:
        _package_legacy = run_package(package_dirs["original"], legacy=True)
    directory = package_dirs[mode]
    fixed_source = "\n".join(sources_in(directory).values())
    fixed = run_package(directory, legacy=mode == "safe-on-0.3")
    differences = outcome_differences(_package_legacy, fixed)
    assert differences == [], report(differences, _package_legacy, fixed, fixed_source)


# ------------------------------------------------------ the fixtures that are programs

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def fixture_source(fixture: str) -> Optional[str]:
    """The fixture's text, or None when it is not UTF-8 (the VF002 and encoding cases)."""
    try:
        return (FIXTURES / f"{fixture}.in.py").read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None


def calls_at_module_level(source: Optional[str]) -> bool:
    """Some statement outside def/class/import calls something: the fixture may be a script.
    (One that only defines functions, or that does not parse, cannot run as a program.)"""
    try:
        tree = ast.parse(mask_async(source)[0]) if source is not None else None
    except SyntaxError:
        return False
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
    return tree is not None and any(
        isinstance(node, ast.Call)
        for stmt in tree.body if not isinstance(stmt, definitions) for node in ast.walk(stmt))


# Most fixtures are snippets: functions nobody calls, or code reading names they never define.
# Those whose module level calls something are collected; one is compared when its original,
# run as a script under the 0.3 semantics, finishes and ran its legacy code (`is_program`),
# and skipped, saying why, otherwise.
FIXTURE_IDS = sorted(fixture for fixture in (str(p.relative_to(FIXTURES))[: -len(".in.py")]
                                             for p in FIXTURES.glob("VF*/*.in.py"))
                     if calls_at_module_level(fixture_source(fixture)))
_fixture_legacy: Dict[str, Outcome] = {}


def fixture_legacy_run(fixture: str, workdir: Path) -> Outcome:
    if fixture not in _fixture_legacy:
        source = fixture_source(fixture)
        if source is None:
            return Outcome(None, "UnicodeDecodeError: not UTF-8 text", [], "", "UnicodeDecodeError")
        label = fixture.replace("/", "_").replace("-", "_").replace(".", "_")
        try:
            _fixture_legacy[fixture] = run_module(source, workdir, f"{label}_legacy", legacy=True)
        except SyntaxError as exc:  # Python 2 and unparsable fixtures (VF001)
            _fixture_legacy[fixture] = Outcome(None, f"SyntaxError: {exc}", [], "", "SyntaxError")
    return _fixture_legacy[fixture]


def only_shared_names(legacy: Outcome, fixed: Outcome) -> Outcome:
    """The 0.3 run's globals that the fixed program still defines: a fix may drop an alias
    (`b_x = Variable(x)` becomes a use of `x`), which is not a change of behaviour; every
    value both define is compared."""
    if legacy.result is None or fixed.result is None:
        return legacy
    kept = {name: value for name, value in legacy.result.items() if name in fixed.result}
    return Outcome(kept, legacy.error, legacy.warnings, legacy.graph, legacy.error_type, legacy.params)


def is_program(outcome: Outcome) -> bool:
    """It ran its legacy code: a module with parameters ran, or a 0.3 Variable is left."""
    from volfix.legacy import Variable

    made = any(type(value) is Variable for value in (outcome.result or {}).values())
    return outcome.error is None and bool(outcome.graph or made)


# Fixtures whose unsafe fix says, in its note, that it changes what the program does: the region
# inside a function whose result the caller runs a module on (0.3 kept that call volatile). The
# unsafe-fixed program must differ by exactly that call's graph (and the result it gives), and
# the safe-fixed one must not differ at all, but where said.
_CALLER_RECORDS = ("forward graphs: FF in 0.3, FT after the fix", "run()['outputs']: data in 0.3, graph after the fix")
ANNOUNCED: Dict[Tuple[str, str], Tuple[str, ...]] = {
    ("VF101/in-place-write-returns-the-value", "unsafe"): _CALLER_RECORDS,
    # VF110's safe unwrap of the buffer, `Variable(out.data.new(...))`, leaves a plain tensor: the
    # 0.3 runtime cannot make a plain tensor volatile when `index_copy_` writes a volatile value
    # into it (real 0.3 raised TypeError there: a tensor took no Variable in place). On torch
    # 2.x, where plain `fix` runs, the wrapper and the tensor are the same.
    ("VF101/in-place-write-returns-the-value", "safe-on-0.3"): _CALLER_RECORDS,
    ("VF101/modules-bound-by-unpacking", "unsafe"): _CALLER_RECORDS,
    ("VF103/method-used-as-a-value", "unsafe"): _CALLER_RECORDS,
    # No fix either (the state leaves `init_state` volatile when the flag is true, and its callers
    # cannot be given the flag's region): the flag stays, ignored by torch 2.x.
    # The unsafe deletion of `p.volatile = True` over `net.parameters()`: `net`'s forward records,
    # as its note says. Safe-fixed, VF110's unwrap of the input leaves a plain tensor, which the 0.3
    # runtime does not make volatile through volatile parameters (real 0.3 refused a plain tensor
    # in a module); on torch 2.x the wrapper and the tensor are the same.
    ("VF202/parameters-made-volatile", "unsafe"): ("forward graphs: F in 0.3, T after the fix",
                                                   "run()['out']: data in 0.3, graph after the fix"),
    ("VF202/parameters-made-volatile", "safe-on-0.3"): ("forward graphs: F in 0.3, T after the fix",
                                                        "run()['out']: data in 0.3, graph after the fix"),
    # The unsafe region still covers the cascade's `robust_loss(...)` step, which reads no volatile
    # value, as its note says: the caller's `backward()` finds no graph (plain `fix` leaves it).
    ("VF101/nested-step-reading-no-volatile-value", "unsafe"): (
        "exception: none in 0.3, RuntimeError after the fix", "forward graphs: FFT in 0.3, FFF after the fix",
        "parameter 0: values differ", "parameter 1: values differ"),
    # The unsafe region still covers `select_layer()`, whose linear branch 0.3 did not make
    # volatile, as its note says: the caller's `backward()` through `self.dual_net` finds no graph.
    ("VF101/partial-callee-result-kept-on-self", "unsafe"): (
        "exception: none in 0.3, RuntimeError after the fix", "forward graphs: FT in 0.3, FF after the fix"),
    # The unsafe region in `run()` leaves the module's `head(enc.feat)` recording, as its note says
    # ("the value kept in `self.feat` ..., read by the module's code as `enc.feat` ..., goes
    # through a module"); plain `fix` leaves it, so the safe side matches 0.3.
    ("VF101/region-output-read-on-the-instance", "unsafe"): (
        "forward graphs: FF in 0.3, FT after the fix", "run()['out']: data in 0.3, graph after the fix",
        "run()['recorded']: False in 0.3, True after the fix"),
    ("VF103/volatile-state-repeated-in-a-list", "unsafe"): ("forward graphs: F in 0.3, T after the fix",
                                                             "run()['loss']: data in 0.3, graph after the fix"),
}


@pytest.mark.parametrize("fixture", FIXTURE_IDS)
def test_fixed_fixture_matches_its_0_3_run(fixture, workdir):
    legacy = fixture_legacy_run(fixture, workdir)
    if not is_program(legacy):
        last = legacy.error.strip().splitlines()[-1] if legacy.error else "it computes nothing"
        pytest.skip(f"a snippet, not a program ({last})")
    source = fixture_source(fixture)
    label = fixture.replace("/", "_").replace("-", "_").replace(".", "_")
    found = {}
    for mode in MODES:
        fixed = fix_source(source, path=f"{label}.py", unsafe_fixes=mode == "unsafe", config=Config())
        assert fixed.error is None, fixed.error
        run = run_module(runnable(source, fixed.fixed_source, mode), workdir, f"{label}_{mode}",
                         legacy=mode == "safe-on-0.3")
        differences = outcome_differences(only_shared_names(legacy, run), run)
        announced = ANNOUNCED.get((fixture, mode))
        if announced is not None:
            assert list(announced) == differences, report(differences, legacy, run, fixed.fixed_source)
            differences = []
        if differences:
            found[mode] = report(differences, legacy, run, fixed.fixed_source)
    assert found == {}, "\n\n".join(f"[{mode}] {text}" for mode, text in found.items())


def test_some_fixtures_are_programs(workdir):
    """The fixture comparison is not all skips: the module-level training script with
    evaluation blocks is a whole program."""
    assert is_program(fixture_legacy_run("VF101/script-eval-blocks-in-nested-training-loops", workdir))


def test_unvolatiled_value_detached_on_torch_2(workdir):
    """`orig_outputs[i].volatile = False` in the model's forward, the volatile input made by the
    caller (Guided-Denoise). Plain `fix` leaves the caller's `volatile=True` (its fix is unsafe)
    and rewrites the statement to `x = x.detach()`: on torch 2.x that program is its 0.3 run,
    classifier gradient included. Deleting the statement, as volfix once did, lets the clean
    path's graph reach the classifier."""
    fixture = "VF202/unvolatiled-by-the-callee"
    source = fixture_source(fixture)
    legacy = fixture_legacy_run(fixture, workdir)
    assert legacy.error is None and is_program(legacy)
    fixed = fix_source(source, path="unvolatiled.py", config=Config())
    assert "orig_outputs[i] = orig_outputs[i].detach()" in fixed.fixed_source
    assert "Variable(orig, volatile=True)" in fixed.fixed_source  # the caller's site is left
    run = run_module(fixed.fixed_source, workdir, "unvolatiled_plain_fix_today")
    assert outcome_differences(only_shared_names(legacy, run), run) == []
    deleted = fixed.fixed_source.replace("orig_outputs[i] = orig_outputs[i].detach()", "pass")
    old = run_module(deleted, workdir, "unvolatiled_deleted_today")
    assert "run()['classifier_grad']: values differ" in outcome_differences(only_shared_names(legacy, old), old)


def test_only_the_detach_a_fix_wrote_gets_todays_meaning():
    """tests/fix_written.py marks the `.detach()` calls the fix wrote, not the program's own,
    also when a region re-indents them, and the mark clears the runtime's volatile flag."""
    from volfix.legacy import Variable, is_volatile, legacy_semantics

    original = ("h = repackage(h).detach()\n"
                "def f(x, net):\n"
                "    out = net(x)\n"
                "    out.volatile = False\n"
                "    y = out.detach()\n"
                "    return y\n")
    fixed = ("h = repackage(h).detach()\n"
             "def f(x, net):\n"
             "    with torch.no_grad():\n"
             "        out = net(x)\n"
             "    out = out.detach()\n"
             "    with torch.no_grad():\n"
             "        y = out.detach()\n"
             "    return y\n")
    assert todays_detach(original, fixed) == fixed.replace("out = out.detach()", "out = out.detach()._volfix_today()")
    with legacy_semantics():
        v = Variable(torch.ones(2), volatile=True)
        assert is_volatile(v.detach()) and not is_volatile(v.detach()._volfix_today())
