"""Generated legacy programs, judged differentially (issue 21; SPEC.md §2.10).

Each program runs three ways: with its 0.3 meaning (`volfix.legacy`), fixed by plain `volfix
fix` under the same 0.3 semantics (what plain `fix` leaves keeps its 0.3 meaning, so only the
safe fixes can differ), and fixed with `--unsafe-fixes` on plain torch. A safe fix must not change what the program
does; an unsafe fix may, only with a note saying what may change (judge.py says how each
is decided). The long run is scripts/evaluation/generated.py; its numbers are in docs/EVALUATION.md.

Every minimal program a run found is in found/ and is a test below; exact/ holds programs
whose `--unsafe-fixes` must match 0.3 exactly (engine gaps closed, issue 21's 95% target). Shapes volfix still gets
wrong are listed in programs.KNOWN_FAILING (empty today): their programs are strict xfail
tests, so fixing one makes its test XPASS (and fail) until it is taken off the list, and the
property test leaves exactly those shapes out while SKIP_KNOWN_FAILING_SHAPES is True.
"""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings  # noqa: E402

import judge as J  # noqa: E402
import programs as P  # noqa: E402

# Flip to False to run the property test over every shape, the known failures included.
SKIP_KNOWN_FAILING_SHAPES = True

FOUND = Path(__file__).resolve().parent / "found"
# About 15 s of CPU (50 s on the shared CI machine under load); derandomized, so every run
# draws the same programs.
CI_EXAMPLES = 150


@settings(max_examples=CI_EXAMPLES, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(P.programs(skip=P.KNOWN_FAILING if SKIP_KNOWN_FAILING_SHAPES else ()))
def test_fixes_keep_the_0_3_behaviour(program):
    verdict = J.judge(P.render(program))
    assert verdict.legacy.error is None or program.expects_legacy_error, verdict.report()
    assert verdict.safe_class in ("exact", "incomplete"), verdict.report()
    assert verdict.unsafe_class in ("exact", "incomplete", "explained"), verdict.report()


def found_programs():
    return sorted(FOUND.glob("*.py"))


def _known(path: Path):
    reason = P.FOUND_REASONS.get(path.name)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(path, marks=marks, id=path.stem)


@pytest.mark.parametrize("path", [_known(p) for p in found_programs()])
def test_found_program(path):
    """A minimal program a run found; its first line says what differed."""
    verdict = J.judge(path.read_text(encoding="utf-8"))
    assert not verdict.failed, verdict.report()


EXACT = Path(__file__).resolve().parent / "exact"


@pytest.mark.parametrize("path", sorted(EXACT.glob("*.py")), ids=lambda p: p.stem)
def test_exact_program(path):
    """A program whose `--unsafe-fixes` once differed from 0.3 (an engine gap closed since):
    it must now match the 0.3 run exactly, and the safe fix must keep it. Its first line says
    what the fix does."""
    verdict = J.judge(path.read_text(encoding="utf-8"))
    assert verdict.legacy.error is None, verdict.report()
    assert verdict.unsafe_class == "exact", verdict.report()
    assert verdict.safe_class in ("exact", "incomplete"), verdict.report()


def test_every_known_failure_has_its_program():
    names = {p.name for p in found_programs()}
    assert sorted(set(P.FOUND_REASONS) - names) == []
    assert {known.found for known in P.KNOWN_FAILING} <= names


def test_the_judge_sees_a_lost_graph():
    """The judge itself: a fix that wraps a training forward in no_grad is `changed`."""
    legacy = J.run(P.render(P.Program((P.Component("train_step", (("wrap", "plain"),)),))), legacy=True)
    broken = P.render(P.Program((P.Component("train_step", (("wrap", "plain"),)),))).replace(
        "    opt.zero_grad()\n", "    opt.zero_grad()\n    torch.set_grad_enabled(False)\n")
    after = J.run(broken, legacy=False)
    diffs = J.differences(legacy, after)
    assert diffs["forward 0"] == "'graph' -> 'no graph'"
    assert diffs["exception"] == "None -> 'RuntimeError'"
    assert diffs["grad mode after main()"] == "True -> False"


def test_the_legacy_run_has_0_3_meaning():
    """A volatile pass next to a training step: under 0.3 the evaluation forwards record no
    graph and the loss reads as a number; today, unfixed, every forward records one and
    `.data[0]` of the 0-dim loss raises (SEMANTICS.md E2d, E8a)."""
    source = P.render(P.Program((P.Component("eval_loop", (("batches", "split"), ("flag", "kw"),
                                                           ("collect", "cat"))),
                                 P.Component("train_step", (("wrap", "plain"),)))))
    legacy, today = J.run(source, legacy=True), J.run(source, legacy=False)
    assert (legacy.error, legacy.forwards) == (None, "FFFT")
    assert legacy.results["c0_out"].graph is False and legacy.results["c0_out"].requires_grad is False
    assert isinstance(legacy.results["c1_loss"], float)
    assert (today.error, today.forwards) == ("IndexError", "TTTT")


def _lambda_program() -> str:
    return P.render(P.Program((P.Component("closure", (("kind", "lambda"), ("ret", "tensor"))),)))


def _stub_fixes(monkeypatch, source: str, safe_fixed: str, unsafe_fixed: str, unsafe_left: bool,
                unsafe_note: str = "") -> None:
    """volfix's fix_source replaced by one returning the given texts: the safe one leaves a
    VF110 finding, the unsafe one leaves it too or nothing (`unsafe_left`), having applied an
    unsafe fix with `unsafe_note` when one is given."""
    from volfix.model import Applicability, Diagnostic, FileResult, Fix, Location

    left = (Diagnostic("VF110", "`Variable(x)` is a no-op", Location(1, 1), Location(1, 2)),)
    applied = (Diagnostic("VF103", "flag", Location(1, 1), Location(1, 2),
                          fix=Fix(Applicability.UNSAFE, "region"), note=unsafe_note),) if unsafe_note else ()

    def fake(text, *, path, unsafe_fixes=False, **_):
        assert text == source
        if unsafe_fixes:
            return FileResult(path, left if unsafe_left else (), text, unsafe_fixed, applied=applied)
        return FileResult(path, left, text, safe_fixed)

    monkeypatch.setattr(J, "fix_source", fake)


def test_a_finding_left_elsewhere_does_not_excuse_a_fix(monkeypatch):
    """The safe fix unwraps the lambda without a region and leaves an unrelated finding.
    The unfixed program records the same graph today, so the finding left could be blamed;
    but the unsafe fix, with nothing left, records it too: the applied fix is to blame."""
    source = _lambda_program()
    unwrapped = source.replace("Variable(t, volatile=True)", "t")
    _stub_fixes(monkeypatch, source, unwrapped, unwrapped, unsafe_left=False)
    verdict = J.judge(source)
    assert verdict.safe.diffs and verdict.safe.remaining == ("VF110",)
    assert verdict.safe_class == "changed"
    assert verdict.unsafe_class == "unexplained"


def test_a_difference_the_unfixed_program_has_is_left_as_legacy(monkeypatch):
    """The same safe text, but the unsafe fix still leaves the finding: nothing volfix
    applied claims to have handled the difference, so it is reported legacy code."""
    source = _lambda_program()
    unwrapped = source.replace("Variable(t, volatile=True)", "t")
    _stub_fixes(monkeypatch, source, unwrapped, unwrapped, unsafe_left=True)
    verdict = J.judge(source)
    assert verdict.safe_class == "incomplete"
    assert verdict.unsafe_class == "incomplete"


def test_a_difference_an_unsafe_note_explains_is_left_as_legacy(monkeypatch):
    """The unsafe fix leaves nothing and shows the difference, but says so in its note
    ("unsafe fix: volatility escapes through ..."): the finding the safe fix left is what
    the difference comes from, not a safe fix."""
    source = _lambda_program()
    unwrapped = source.replace("Variable(t, volatile=True)", "t")
    _stub_fixes(monkeypatch, source, unwrapped, unwrapped, unsafe_left=False,
                unsafe_note="unsafe fix: volatility escapes through `self.hidden`")
    verdict = J.judge(source)
    assert verdict.safe_class == "incomplete"
    assert verdict.unsafe_class == "explained"


def test_a_program_0_3_could_not_run_is_its_own_row():
    """A volatile value reaching backward(): 0.3 raised, so the program never ran as legacy
    code. The judge says so, and the long run counts it apart from the share of programs
    whose original runs."""
    verdict = J.judge(P.render(P.Program((P.Component("train_on_volatile", (("how", "backward"),)),))))
    assert verdict.legacy.error == "RuntimeError" and verdict.legacy_raised
    assert verdict.unsafe_class == "explained"  # unwrapped, it trains, as the note says
    ok = J.judge(P.render(P.Program((P.Component("train_step", (("wrap", "plain"),)),))))
    assert not ok.legacy_raised


def test_the_long_run_counts_programs_0_3_could_not_run_apart(tmp_path):
    """scripts/evaluation generated on a few programs: its rows agree with the per-program
    details it writes, and the exact share of the programs that ran under 0.3 leaves the
    others out of its denominator."""
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location(
        "generated_run", Path(__file__).resolve().parents[2] / "scripts" / "evaluation" / "generated.py")
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    out, details = tmp_path / "summary.json", tmp_path / "details.jsonl"
    # seed 4: its 40 draws hold programs 0.3 could not run (seed 3's did until the shape
    # `returned_tuple` changed the draws)
    assert run.main(["--count", "40", "--seed", "4", "--no-shrink", "--out", str(tmp_path / "failures"),
                     "--json", str(out), "--details", str(details)]) == 0
    summary = json.loads(out.read_text())
    lines = [json.loads(line) for line in details.read_text().splitlines()]
    raised = [r for r in lines if r["legacy_error"]]
    running = [r for r in lines if not r["legacy_error"]]
    assert len(lines) == summary["programs"] == 40
    assert summary["legacy_raised"] == len(raised) > 0
    assert all(any(s.startswith("train_on_volatile") for s in r["shapes"]) for r in raised)
    assert summary["runs_under_0_3"] == len(running)
    exact = sum(r["unsafe"] == "exact" for r in running)
    assert summary["runs_under_0_3_unsafe"]["exact"] == exact
    assert summary["unsafe_exact_percent_of_running"] == round(100.0 * exact / len(running), 2)
    assert summary["legacy_raised_unsafe"]["exact"] == sum(r["unsafe"] == "exact" for r in raised)
