"""Regenerate docs/rules.md and the README's rule table from the rule docstrings.

    python scripts/gen_docs.py          # rewrite the files
    python scripts/gen_docs.py --check  # exit 1 if they are out of date (tests/test_rule_docs.py)
"""
from __future__ import annotations

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from volfix.rules.registry import rules  # noqa: E402

START, END = "<!-- rules:start -->", "<!-- rules:end -->"
FIX_LABEL = {"safe": "safe", "unsafe": "unsafe", None: "none"}


def rule_table() -> str:
    lines = ["| code | name | finds | best fix | on by default |", "|---|---|---|---|---|"]
    for code, rule in rules().items():
        fix = FIX_LABEL[rule.FIX.value if rule.FIX else None]
        default = "yes" if rule.DEFAULT_ENABLED else "no"
        lines.append(f"| [{code}](docs/rules.md#{code.lower()}) | `{rule.name()}` | {rule.summary()} | {fix} | {default} |")
    return "\n".join(lines)


def rules_markdown() -> str:
    out = ["# volfix rules", "", "Generated from the rule docstrings by `scripts/gen_docs.py`; "
           "`volfix rule CODE` prints the same text.", ""]
    for code, rule in rules().items():
        out.append(f"## {code}")
        out.append("")
        out.append(f"`{rule.name()}` — {rule.MESSAGE}")
        out.append("")
        out.append(rule.doc().replace("\n## ", "\n### "))
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def readme_with_table(readme: str) -> str:
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{rule_table()}\n{END}{tail}"


def main(argv) -> int:
    check = "--check" in argv
    targets = {ROOT / "docs" / "rules.md": rules_markdown(),
               ROOT / "README.md": readme_with_table((ROOT / "README.md").read_text(encoding="utf-8"))}
    stale = [p for p, text in targets.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
    if check:
        for p in stale:
            print(f"out of date: {p.relative_to(ROOT)} (run python scripts/gen_docs.py)")
        return 1 if stale else 0
    for p in stale:
        p.write_text(targets[p], encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
