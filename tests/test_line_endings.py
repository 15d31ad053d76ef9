"""Lone CR and mixed line endings: a line ends at CRLF, CR or LF wherever Python's tokenizer
says so (issue 24, item 1). The property tests (test_properties.py) draw these shapes at
random; these are the cases the fault campaign found, kept as plain tests."""
from __future__ import annotations

import ast
import io
import re
import tokenize
from collections import Counter

import pytest

import volfix
from volfix.fixes.edits import TextEdit, apply_edits
from volfix.syntax.positions import for_tokenize, physical_lines


def fix(text: str):
    return volfix.fix_source(text, path="legacy.py", unsafe_fixes=True)


def calls(text: str) -> list:
    return [ast.unparse(n) for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Call)]


def comments(text: str) -> Counter:
    tokens = tokenize.generate_tokens(io.StringIO(re.sub(r"\r(?!\n)", "\n", text)).readline)
    return Counter(t.string for t in tokens if t.type == tokenize.COMMENT)


LOOP = ("import torch\rfrom torch.autograd import Variable\r\r\rdef test(model, loader):\r    total = 0\r"
        "    for data in loader:\r        output = model(Variable(data, volatile=True)){comment}\r"
        "        print(1)\r    return total\r")


def test_cr_only_region_ending_in_a_comment_keeps_the_next_statement():
    # The repro: libcst dropped the region's final CR and `print(1)` joined `# run`.
    result = fix(LOOP.format(comment="  # run"))
    fixed = result.fixed_source
    assert "print(1)" in calls(fixed)
    assert fixed == ("import torch\r\r\rdef test(model, loader):\r    total = 0\r    for data in loader:\r"
                     "        with torch.no_grad():\r            output = model(data)  # run\r"
                     "        print(1)\r    return total\r")


def test_cr_only_region_without_a_comment_is_fixed_not_left_pending():
    result = fix(LOOP.format(comment=""))
    assert "print(1)" in calls(result.fixed_source)
    assert "with torch.no_grad():\r            output = model(data)\r        print(1)" in result.fixed_source
    assert not [d for d in result.diagnostics if d.is_applicable(True)]


@pytest.mark.parametrize("comment", ["# noqa: VF101", "# volfix: ignore[VF101]", "# noqa"])
def test_suppression_comments_after_a_lone_cr_still_suppress(comment):
    text = f"import torch\rfrom torch.autograd import Variable\rx = 1\ry = Variable(x, volatile=True)  {comment}\r"
    result = volfix.check_source(text, path="legacy.py")
    assert [d.code for d in result.diagnostics] == []
    assert fix(text).fixed_source == text


def test_region_at_the_end_of_a_mixed_file_keeps_its_final_cr():
    text = "from torch.autograd import Variable\nfor b in loader:\n    out = model(Variable(b, volatile=True))  # c\r"
    fixed = fix(text).fixed_source
    assert fixed.endswith("out = model(b)  # c\r")


def test_removing_a_line_between_a_lone_cr_and_an_empty_lf_line_keeps_the_empty_line():
    # `import torch\r` + `\n` (the empty line) would read as one CRLF once the import between
    # them goes: a line fewer, and a blank line the author kept gone.
    text = "import torch\rfrom torch.autograd import Variable\n\nx = model(x)\nx = Variable(x, volatile=True)"
    fixed = fix(text).fixed_source
    assert physical_lines(fixed)[:3] == ["import torch\r", "\r", "x = model(x)\n"]


def test_mixed_endings_every_removed_statement_keeps_its_comment():
    shapes = ["x = Variable(x, volatile=True)  # c1", "out = model(Variable(b, volatile=True))  # c2",
              "flag = x.volatile  # c3", "print(x)  # c4"]
    for first in shapes:
        for second in shapes:
            for ends in ["\n\n\r\r", "\n\r\n\r", "\r\n\r\n\r", "\r\r\n\n"]:
                body = ["def f(x, b):", "    " + first, "    " + second, "    return x"]
                text = "from torch.autograd import Variable\n" + "".join(
                    line + end for line, end in zip(body, ends))
                fixed = fix(text).fixed_source
                compile(fixed, "<fixed>", "exec")
                assert comments(text) == comments(fixed), (text, fixed)


def test_apply_edits_never_joins_a_lone_cr_and_a_lf_into_one_line_ending():
    text = "a\rb\n\nc"
    assert apply_edits(text, [TextEdit(2, 4, "")]) == "a\r\rc"
    assert apply_edits("a\r\nb", [TextEdit(1, 1, "")]) == "a\r\nb"  # nothing came between
    assert apply_edits("a\rb", [TextEdit(2, 3, "\nc")]) == "a\r\rc"
    assert apply_edits("a\r\nb", []) == "a\r\nb"
    # two empty LF lines after the removed one: both stay lines (a CR then CRLF would be one)
    assert apply_edits("a\rb\r\n\n\nc", [TextEdit(2, 5, "")]) == "a\r\r\rc"


def test_physical_lines_split_where_the_tokenizer_does():
    text = "a\x0cb\rc\r\nd\ne\x1cf\u2028g"
    assert physical_lines(text) == ["a\x0cb\r", "c\r\n", "d\n", "e\x1cf\u2028g"]
    assert physical_lines("") == []
    assert for_tokenize("a\rb\r\nc") == "a\nb\r\nc"


def test_an_unencodable_character_is_reported_on_its_row_in_a_cr_only_file():
    from volfix.files.sourcefile import SourceDecodeError, decode_source, encode_source

    decoded = decode_source(b"# coding: latin-1\rx = 1\r")
    with pytest.raises(SourceDecodeError, match=r"\(line 3\)"):
        encode_source(decoded.text + "y = '\u2603'\r", decoded)


def test_a_cr_only_file_whose_first_line_is_a_comment_is_checked():
    # The prefilter took everything after `#` up to the next LF for a comment: in a CR-only
    # file with a comment on its first line, the whole file.
    text = "# eval script\rfrom torch.autograd import Variable\rout = model(Variable(x, volatile=True))\r"
    assert [d.code for d in volfix.check_source(text, path="legacy.py").diagnostics] == ["VF101"]
    assert [d.code for d in volfix.check_source(text.encode(), path="legacy.py").diagnostics] == ["VF101"]


def _fixture_inputs():
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
    return sorted(p for p in root.glob("VF*/*.in.py"))


@pytest.mark.parametrize("ending", ["\r", "\r\n"], ids=["CR", "CRLF"])
def test_every_fixture_is_fixed_alike_whatever_its_line_endings(ending):
    differ = []
    for path in _fixture_inputs():
        text = path.read_bytes().decode("utf-8-sig", "surrogateescape").replace("\r\n", "\n").replace("\r", "\n")
        if re.search(r"coding[:=]", "\n".join(text.split("\n")[:2])):
            continue  # an encoding cookie: test_fixtures reads those as bytes
        lf = fix(text)
        other = fix(text.replace("\n", ending))
        if other.fixed_source.replace(ending, "\n") != lf.fixed_source \
                or [d.code for d in other.diagnostics] != [d.code for d in lf.diagnostics]:
            differ.append(path.parent.name + "/" + path.name)
    assert differ == []
