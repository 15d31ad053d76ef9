"""A big module-level script (the shape of exported notebooks and generated code) with one
finding: the exact finding is reported, and `fix` wraps exactly the statements its taint
reaches. Correctness only: the timing lives in the benchmark (`benchmarks/bench.py`)."""
from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest

from conftest import invoke

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from gen_big_module import FIXED_BLOCK, REGION_STATEMENTS, SOURCE_BLOCK, generate_module  # noqa: E402

LINES = 20_000


@pytest.fixture(scope="module")
def module():
    return generate_module(LINES)


def test_the_generated_module_is_big_varied_and_has_one_source(module):
    tree = ast.parse(module.source)
    top_level = {type(stmt).__name__ for stmt in tree.body}
    assert {"Assign", "For", "While", "If", "Try", "FunctionDef", "ClassDef", "Expr", "Import",
            "ImportFrom"} <= top_level
    nested = {type(node).__name__ for node in ast.walk(tree) if isinstance(node, ast.stmt)}
    assert {"AugAssign", "With", "Return"} <= nested
    assert module.lines >= LINES
    assert module.source.count("volatile") == 1 and module.source.count(SOURCE_BLOCK) == 1
    assert module.source.splitlines()[module.finding_row - 1].startswith("vf_batch = Variable(")
    assert generate_module(LINES).source == module.source  # deterministic


def test_check_reports_exactly_the_one_finding(project, module):
    (project / "notebook_export.py").write_text(module.source)
    result = invoke("check", "--no-cache", "--format", "json", "notebook_export.py")
    assert result.exit_code == 1, result.stderr
    [finding] = json.loads(result.stdout)
    assert finding["code"] == "VF101"
    assert finding["location"] == {"row": module.finding_row, "column": module.finding_column}
    assert finding["end_location"] == {"row": module.finding_row, "column": 43}
    assert finding["fix"]["applicability"] == "safe"


def test_fix_wraps_exactly_the_tainted_statements(project, module):
    path = project / "notebook_export.py"
    path.write_text(module.source)
    result = invoke("fix", "--no-cache", "notebook_export.py")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stderr == "Fixed 1 finding (0 remaining).\n"
    fixed = path.read_text()
    assert fixed == module.expected_fix()
    # The region: the source and the statements its taint reaches, nothing before or after.
    tree = ast.parse(fixed)
    [region] = [stmt for stmt in tree.body if isinstance(stmt, ast.With)]
    assert len(region.body) == REGION_STATEMENTS
    assert ast.get_source_segment(fixed, region) + "\n" == FIXED_BLOCK
    assert invoke("fix", "--no-cache", "notebook_export.py").exit_code == 0
    assert path.read_text() == fixed  # fixing twice changes nothing
