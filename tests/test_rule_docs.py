"""Every rule documents itself in ruff's sections, and the generated docs are in step."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from volfix.rules.registry import rules
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


def python_block(rule, section: str):
    """The ```python block of a documentation section, or None."""
    body = rule.section(section)
    match = re.search(r"```python\n(.*?)```", body, flags=re.S)
    return match.group(1) if match else None


# Rules with a fix: their Example and Use instead blocks are what volfix does.
EXAMPLES = [code for code in sorted(rules())
            if rules()[code].FIX is not None and python_block(rules()[code], "Example") is not None
            and python_block(rules()[code], "Use instead") is not None]


@pytest.mark.parametrize("code", EXAMPLES)
def test_documented_example_is_reported_and_fixed_as_documented(code):
    """The docs are tests: the Example is reported by the rule and `volfix fix --unsafe-fixes`
    (with the rule selected) turns it into exactly the Use instead block."""
    from volfix.api import check_source, fix_source
    from volfix.settings.config import Config

    rule = rules()[code]
    example, use_instead = python_block(rule, "Example"), python_block(rule, "Use instead")
    config = Config(extend_select=(code,))
    reported = {d.code for d in check_source(example, path="example.py", config=config).diagnostics}
    assert code in reported, reported
    fixed = fix_source(example, path="example.py", config=config, unsafe_fixes=True)
    assert fixed.fixed_source == use_instead, fixed.fixed_source


def test_most_rules_document_a_runnable_example():
    # Only rules about files that cannot be read or parsed have nothing to run; VF203, VF304 and
    # VF407 report what has no mechanical rewrite (their examples are checked below).
    assert set(rules()) - set(EXAMPLES) <= {"VF001", "VF002", "VF203", "VF304", "VF407"}


@pytest.mark.parametrize("code", ["VF203", "VF304", "VF407"])
def test_report_only_rules_report_their_example_and_leave_it(code):
    from volfix.api import check_source, fix_source
    from volfix.settings.config import Config

    example = python_block(rules()[code], "Example")
    config = Config(select=(code,))
    found = [d for d in check_source(example, path="example.py", config=config).diagnostics if d.code == code]
    assert found and all(d.fix is None for d in found)
    assert fix_source(example, path="example.py", config=config, unsafe_fixes=True).fixed_source == example


def test_every_rule_class_is_in_a_module_the_registry_imports():
    """The registry imports the `vfNNN_*` modules only (the engine's helpers come later, with
    the engine): a rule class anywhere else in the package would be silently missing."""
    import importlib
    import pkgutil

    import volfix.rules as package
    from volfix.rules.registry import rules
    from volfix.rules.base import Rule

    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")
    defined, stack = [], list(Rule.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.CODE and cls.__module__.startswith("volfix.rules."):
            defined.append(cls)
    assert defined and all(cls.__module__.rsplit(".", 1)[1].startswith("vf") for cls in defined)
    assert {cls.CODE: cls for cls in defined} == rules()
