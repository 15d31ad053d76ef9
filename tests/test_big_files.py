"""Big scripts are parsed in chunks, with irrelevant statements stubbed (`volfix.syntax.big_files`):
that path must give the same findings and fixes as parsing the whole file."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import test_fixtures as fixtures  # noqa: E402
from volfix.syntax import big_files  # noqa: E402

CASES = [c for c in fixtures.CASES if c.code not in ("VF001", "VF002")]


@pytest.fixture
def chunked(monkeypatch):
    """Every file takes the big-file path, in chunks of a few lines."""
    monkeypatch.setattr(big_files, "BIG_FILE_LINES", 1)
    monkeypatch.setattr(big_files, "CHUNK_LINES", 3)


def results(case):
    raw = case.input.read_bytes()
    path = str(case.input)
    return (fixtures.diagnostics_of(raw, path, case.config),
            fixtures.fixed_bytes(raw, path, case.config, case.unsafe_fixes))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_chunked_parsing_finds_and_fixes_the_same(case, monkeypatch):
    whole = results(case)
    monkeypatch.setattr(big_files, "BIG_FILE_LINES", 1)
    monkeypatch.setattr(big_files, "CHUNK_LINES", 3)
    assert results(case) == whole


def test_numbers_in_a_chunk_not_parsed_are_kept():
    """`gamma = 0.5` in a chunk nothing in which matters stays a number the loop far below
    can read; a keyword argument at column 0 inside a call's brackets is no assignment."""
    lines = ["lam = 1e-3  # step\n", "D_ = build(4)\n", "plot(\n", "a=1,\n", "b=2\n", ")\n", "gamma = 0.5\n",
             "losses = []\n", "\n"]
    stmts = big_files._unparsed(0, len(lines), lines, [False] * len(lines))
    kept = [(s.lineno, s.targets[0].id) for s in stmts if not big_files.is_opaque(s)]
    assert kept == [(1, "lam"), (7, "gamma"), (8, "losses")]
    opaque = [(s.lineno, s.end_lineno) for s in stmts if big_files.is_opaque(s)]
    assert opaque == [(2, 6)]
