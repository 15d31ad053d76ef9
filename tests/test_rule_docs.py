"""Every rule documents itself in ruff's sections, and the generated docs are in step."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from volfix.registry import rules
from volfix.rules.base import DOC_SECTIONS

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("code", sorted(rules()))
def test_sections_present_in_order(code):
    doc = rules()[code].doc()
    headings = re.findall(r"^## (.+)$", doc, flags=re.M)
    required = [h for h in headings if h in DOC_SECTIONS]
    assert required == list(DOC_SECTIONS), f"{code}: sections {headings}"
    assert set(headings) <= set(DOC_SECTIONS) | {"References"}
    for section in DOC_SECTIONS:
        body = doc.split(f"## {section}", 1)[1].split("\n## ", 1)[0].strip()
        assert body, f"{code}: empty section {section!r}"


@pytest.mark.parametrize("code", sorted(rules()))
def test_code_name_and_message(code):
    rule = rules()[code]
    assert re.fullmatch(r"VF\d{3}", rule.CODE)
    assert rule.MESSAGE and rule.MESSAGE.count("`") % 2 == 0, "backticks must be closed"
    assert not rule.__name__.endswith(("Rule", "Check"))


def test_generated_docs_are_up_to_date():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
