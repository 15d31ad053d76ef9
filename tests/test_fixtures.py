"""The fixture-driven test: one parametrized case per `fixtures/VF*/<case>.in.py`.

Layout and conventions (see STYLE.md, "Fixtures")
-------------------------------------------------
    fixtures/<CODE>/<case>.in.py        input, exact bytes (CRLF, BOM, tabs, coding cookies as written)
    fixtures/<CODE>/<case>.out.py       expected output of fixing, exact bytes;
                                        absent = the file must come out byte-identical
    fixtures/<CODE>/<case>.diagnostics  what `check_source` reports on the input, one finding per
                                        line, sorted by position; an empty file is a negative case:

        {row}:{col} {code} {Diagnostic.text} [{safe|unsafe|display-only} fix]
        {row}:{col} {code} {Diagnostic.text} [no fix]

  * The first line of every input (after a BOM) is `# case: <the one behaviour>`.
  * A folder whose rule is not enabled by default (VF010) runs with `extend_select=[CODE]`.
  * Cases are fixed with `unsafe_fixes=True`, except cases whose name ends in `.safe`
    (`escape-return.safe.in.py`), which are fixed with safe fixes only.
  * Inputs are read and given to the engine as BYTES, as `volfix fix` reads a file; the fixed
    text is encoded back with the file's own encoding (cookie or BOM) before the comparison.
    Until `volfix.files.sourcefile` (decode_source/encode_source) exists, plain UTF-8 files are passed
    as text instead, and the few cases that need the bytes path (BOM, a non-UTF-8 cookie,
    undecodable bytes) are skipped with that reason.

For every case the test checks that
  1. the diagnostics match `.diagnostics` exactly;
  2. the fixed source equals `.out.py` (or the input) byte for byte;
  3. `.out.py` compiles (when there is no `.out.py`: only if the input itself compiles);
  4. checking `.out.py` again reports no applicable fix (the fix converges; same condition);
  5. fixing `.out.py` changes nothing (idempotent).

Refreshing expectations
-----------------------
    VOLFIX_UPDATE_FIXTURES=diagnostics pytest tests/test_fixtures.py   # rewrite .diagnostics only
    VOLFIX_UPDATE_FIXTURES=1 pytest tests/test_fixtures.py             # also rewrite .out.py

The `.out.py` files were written by hand from SPEC.md §2 and the rule docstrings: they are the
independent oracle. Prefer refreshing `.diagnostics` only, and read every diff either way.
"""
from __future__ import annotations

import codecs
import io
import os
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import List, Tuple

import pytest

from volfix import Config, check_source, fix_source
from volfix.settings.config import DEFAULT_CONFIG

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
UPDATE = os.environ.get("VOLFIX_UPDATE_FIXTURES", "").strip().lower()
UTF8_BOM = codecs.BOM_UTF8
DIAGNOSTIC_LINE = re.compile(
    r"^\d+:\d+ VF\d{3} .+ \[(?:safe fix|unsafe fix|display-only fix|no fix)\]$")


@dataclass(frozen=True)
class Case:
    code: str
    name: str
    input: Path

    @property
    def id(self) -> str:
        return f"{self.code}/{self.name}"

    @property
    def output(self) -> Path:
        return self.input.with_name(f"{self.name}.out.py")

    @property
    def diagnostics(self) -> Path:
        return self.input.with_name(f"{self.name}.diagnostics")

    @property
    def unsafe_fixes(self) -> bool:
        return not self.name.endswith(".safe")

    @property
    def config(self) -> Config:
        """The default configuration, plus the folder's rule when it is opt-in (VF010)."""
        if self.code in DEFAULT_CONFIG.enabled_codes():
            return DEFAULT_CONFIG
        return Config(extend_select=(self.code,))


def collect_cases() -> List[Case]:
    cases = []
    for path in sorted(FIXTURES.glob("VF*/*.in.py")):
        cases.append(Case(path.parent.name, path.name[: -len(".in.py")], path))
    return cases


CASES = collect_cases()


# --- bytes <-> text, as the engine reads and writes files -------------------------------------

try:  # the shared helpers, when present, are the single source of truth
    from volfix.files.sourcefile import decode_source as _decode_source
    from volfix.files.sourcefile import encode_source as _encode_source
except ImportError:  # not written yet: the standard library's PEP 263 / BOM detection
    _decode_source = _encode_source = None
BYTES_PATH = _decode_source is not None


def _file_encoding(raw: bytes) -> Tuple[str, bool]:
    """(encoding, has_bom) as Python itself would read the file."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    if encoding == "utf-8-sig":
        return "utf-8", True
    return encoding, False


def encode_like(text: str, raw: bytes) -> bytes:
    """Encode the engine's fixed text with the encoding and BOM of the original bytes."""
    if _decode_source is not None:
        return _encode_source(text, _decode_source(raw))
    encoding, bom = _file_encoding(raw)
    body = text[1:] if text.startswith("\ufeff") else text
    return (UTF8_BOM if bom else b"") + body.encode(encoding)


def engine_input(raw: bytes):
    """What the engine is given: the bytes, or (until the bytes path exists) plain UTF-8 text."""
    if BYTES_PATH:
        return raw
    try:
        encoding, bom = _file_encoding(raw)
        text = raw.decode("utf-8") if (encoding == "utf-8" and not bom) else None
    except (SyntaxError, UnicodeDecodeError):
        text = None
    if text is None:
        pytest.skip("needs the bytes path: volfix.files.sourcefile (decode_source/encode_source) "
                    "is not available yet")
    return text


# --- engine calls ------------------------------------------------------------------------------

def format_diagnostic(diagnostic) -> str:
    if diagnostic.fix is None:
        marker = "[no fix]"
    else:
        marker = f"[{diagnostic.fix.applicability.value} fix]"
    loc = diagnostic.location
    return f"{loc.row}:{loc.column} {diagnostic.code} {diagnostic.text} {marker}"


def diagnostics_of(raw: bytes, path: str, config: Config) -> List[str]:
    result = check_source(engine_input(raw), path=path, config=config)
    assert result.error is None, f"volfix bug on {path}: {result.error}"
    ordered = sorted(result.diagnostics, key=lambda d: (d.location.row, d.location.column, d.code))
    return [format_diagnostic(d) for d in ordered]


def fixed_bytes(raw: bytes, path: str, config: Config, unsafe_fixes: bool) -> bytes:
    result = fix_source(engine_input(raw), path=path, config=config, unsafe_fixes=unsafe_fixes)
    assert result.error is None, f"volfix bug on {path}: {result.error}"
    if result.fixed_source is None:  # unreadable or unparsable: nothing is rewritten
        return raw
    return encode_like(result.fixed_source, raw)


def read_expected_diagnostics(case: Case) -> List[str]:
    text = case.diagnostics.read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()]


def compiles(raw: bytes) -> bool:
    try:
        compile(raw, "<fixture>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def update_case(case: Case) -> None:
    raw = case.input.read_bytes()
    lines = diagnostics_of(raw, str(case.input), case.config)
    case.diagnostics.write_text("".join(line + "\n" for line in lines), encoding="utf-8", newline="\n")
    if UPDATE == "diagnostics":
        return
    out = fixed_bytes(raw, str(case.input), case.config, case.unsafe_fixes)
    if out == raw:
        if case.output.exists():
            case.output.unlink()
    else:
        case.output.write_bytes(out)


# --- the shared test ---------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_fixture(case: Case) -> None:
    if UPDATE:
        update_case(case)
    raw = case.input.read_bytes()
    path = str(case.input)
    expected_diagnostics = read_expected_diagnostics(case)

    # 1. exact diagnostics on the input
    assert diagnostics_of(raw, path, case.config) == expected_diagnostics

    # 2. exact output bytes
    expected = case.output.read_bytes() if case.output.exists() else raw
    actual = fixed_bytes(raw, path, case.config, case.unsafe_fixes)
    assert actual == expected, _bytes_diff(expected, actual)

    # An input that is not valid Python (VF001/VF002 cases) must merely come out unchanged.
    if case.output.exists() or compiles(raw):
        # 3. the output parses
        compile(expected, str(case.output), "exec", dont_inherit=True)
        # 4. the fix converges: nothing applicable is left to fix
        again = check_source(engine_input(expected), path=str(case.output), config=case.config)
        left = [format_diagnostic(d) for d in again.diagnostics if d.is_applicable(case.unsafe_fixes)]
        assert left == [], "fixable findings remain in the fixed output"
    # 5. idempotence: fixing the output changes nothing
    assert fixed_bytes(expected, str(case.output), case.config, case.unsafe_fixes) == expected


def _bytes_diff(expected: bytes, actual: bytes) -> str:
    import difflib

    exp = expected.decode("latin-1").splitlines(keepends=True)
    act = actual.decode("latin-1").splitlines(keepends=True)
    diff = difflib.unified_diff(exp, act, "expected", "actual")
    return "output differs:\n" + "".join(repr(line)[1:-1] + "\n" for line in diff)


# --- the corpus itself -------------------------------------------------------------------------

def test_corpus_is_well_formed() -> None:
    """Every input has a `.diagnostics`, a `# case:` line and well-formed findings of its folder's
    code; no expectation file is orphaned; no `.out.py` equals its input."""
    problems = []
    for case in CASES:
        raw = case.input.read_bytes()
        first = raw[len(UTF8_BOM):] if raw.startswith(UTF8_BOM) else raw
        if not first.startswith(b"# case: "):
            problems.append(f"{case.id}: first line is not `# case: ...`")
        if not case.diagnostics.exists():
            problems.append(f"{case.id}: no .diagnostics file")
            continue
        lines = read_expected_diagnostics(case)
        bad = [line for line in lines if not DIAGNOSTIC_LINE.match(line)]
        if bad:
            problems.append(f"{case.id}: malformed diagnostics {bad}")
        if lines and case.code not in {line.split()[1] for line in lines if line not in bad}:
            problems.append(f"{case.id}: no {case.code} finding in a {case.code} case")
        if case.output.exists() and case.output.read_bytes() == raw:
            problems.append(f"{case.id}: .out.py equals the input; delete it")
    inputs = {(c.code, c.name) for c in CASES}
    for extra in sorted(FIXTURES.glob("VF*/*")):
        stem = re.sub(r"\.(in\.py|out\.py|diagnostics)$", "", extra.name)
        if stem == extra.name or (extra.parent.name, stem) not in inputs:
            problems.append(f"{extra.relative_to(FIXTURES)}: not part of a case")
    assert problems == []


def test_every_rule_has_fixtures() -> None:
    from volfix.rules.registry import all_codes

    folders = {p.name for p in FIXTURES.glob("VF*") if p.is_dir()}
    assert sorted(all_codes() - folders) == []
    assert sorted(folders - all_codes()) == []
