"""Jupyter notebook support (SPEC §6): JSON scanning and splicing, IPython masking, and
fixture notebooks checked and fixed end to end.

Fixtures live in fixtures/notebooks/: `<case>.in.ipynb`, the expected diagnostics of
checking it in `<case>.diagnostics` (`cell N:row:col CODE message [fix marker]`), and the
fixed notebook in `<case>.out.ipynb` (absent: fixing must leave the file byte-identical);
cases named `*-unsafe` are fixed with unsafe fixes enabled.
Refresh with `VOLFIX_UPDATE_FIXTURES=1 pytest tests/test_notebook.py`, then read the diff.
"""
from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from volfix.settings.config import Config
from volfix.model import Applicability
from volfix.notebook import (
    MaskError,
    cell_sources,
    changes_only_sources,
    mask_magics,
    parse_notebook,
    process_notebook,
    splice_sources,
    split_source_lines,
    unmask_magics,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "notebooks"
INPUTS = sorted(FIXTURES.glob("*.in.ipynb"))
ALL_NOTEBOOKS = sorted(FIXTURES.glob("*.ipynb"))
VALID_NOTEBOOKS = [p for p in ALL_NOTEBOOKS if not p.name.startswith(("invalid", "missing"))]
UPDATE = os.environ.get("VOLFIX_UPDATE_FIXTURES") == "1"
CONFIG = Config()


def ids(paths):
    return [p.name for p in paths]


def code_cells(obj):
    return [c for c in obj["cells"] if c["cell_type"] == "code"]


def joined(source):
    return "".join(source) if isinstance(source, list) else source


# ---------------------------------------------------------------------------------------
# JSON scanner and splicer
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", VALID_NOTEBOOKS, ids=ids(VALID_NOTEBOOKS))
def test_scanner_finds_every_cell_source(path):
    data = path.read_bytes()
    nb = parse_notebook(data)
    obj = json.loads(data)
    assert [c.cell_type for c in nb.cells] == [c["cell_type"] for c in obj["cells"]]
    assert [c.source for c in nb.cells] == [joined(c["source"]) for c in obj["cells"]]
    for cell, raw in zip(nb.cells, obj["cells"]):
        start, end = cell.span
        assert json.loads(nb.text[start:end]) == raw["source"]
        assert cell.kind == ("str" if isinstance(raw["source"], str) else "list")


@pytest.mark.parametrize("path", VALID_NOTEBOOKS, ids=ids(VALID_NOTEBOOKS))
def test_splicing_unchanged_sources_is_byte_identical(path):
    data = path.read_bytes()
    nb = parse_notebook(data)
    assert splice_sources(nb, {}) == data
    # Re-encoding every source with its own text must reproduce the file exactly.
    assert splice_sources(nb, {c.index: c.source for c in nb.cells}) == data


@pytest.mark.parametrize("path", VALID_NOTEBOOKS, ids=ids(VALID_NOTEBOOKS))
def test_splicing_an_edit_changes_only_that_source(path):
    data = path.read_bytes()
    nb = parse_notebook(data)
    target = next(c for c in nb.cells if c.cell_type == "code")
    new_text = "import torch\n" + target.source.replace("volatile=True", "")
    out = splice_sources(nb, {target.index: new_text})
    new = out.decode("utf-8")
    start, end = target.span
    assert new.startswith(nb.bom + nb.text[:start])
    assert new.endswith(nb.text[end:])
    assert changes_only_sources(data.decode("utf-8"), new, {target.index: new_text})
    edited = json.loads(new)["cells"][target.index]["source"]
    original = json.loads(data)["cells"][target.index]["source"]
    assert type(edited) is type(original)
    if isinstance(edited, list):
        assert edited == split_source_lines(new_text)


def test_list_items_keep_their_indentation_in_two_space_files():
    data = (FIXTURES / "magics.in.ipynb").read_bytes()
    nb = parse_notebook(data)
    assert nb.indent_unit == "  "
    out = splice_sources(nb, {0: "import torch\nx = 1\n"}).decode()
    assert '"source": [\n        "import torch\\n",\n        "x = 1\\n"\n      ]' in out


def test_empty_list_source_gets_items_indented_like_the_file():
    text = '{\n "cells": [\n  {\n   "cell_type": "code",\n   "metadata": {},\n   "source": []\n  }\n ],\n' \
           ' "metadata": {},\n "nbformat": 4,\n "nbformat_minor": 5\n}\n'
    nb = parse_notebook(text.encode())
    out = splice_sources(nb, {0: "a = 1\nb = 2"}).decode()
    assert '   "source": [\n    "a = 1\\n",\n    "b = 2"\n   ]\n' in out
    assert splice_sources(parse_notebook(out.encode()), {0: ""}).decode() == text


def test_ascii_escaped_files_stay_ascii_escaped():
    data = (FIXTURES / "ascii-escaped.in.ipynb").read_bytes()
    nb = parse_notebook(data)
    assert nb.ensure_ascii
    out = splice_sources(nb, {1: "h = torch.zeros(1)  # \u2192 ok\n"})
    assert out.isascii()
    assert "\\u2192" in out.decode()


def test_raw_non_ascii_files_keep_raw_characters():
    nb = parse_notebook((FIXTURES / "string-source-crlf.in.ipynb").read_bytes())
    assert not nb.ensure_ascii
    out = splice_sources(nb, {2: "# étape\r\nx = 1\r\n"}).decode()
    assert '"# étape\\r\\nx = 1\\r\\n"' in out


def test_compact_single_line_notebook_lists_use_the_file_separator():
    data = (FIXTURES / "compact.in.ipynb").read_bytes()
    nb = parse_notebook(data)
    assert nb.indent_unit is None and b"\n" not in data
    out = splice_sources(nb, {1: "a = 1\nb = 2"}).decode()
    assert '"source": ["a = 1\\n", "b = 2"]' in out
    assert "\n" not in out


def test_bom_is_kept():
    data = b"\xef\xbb\xbf" + (FIXTURES / "compact.in.ipynb").read_bytes()
    nb = parse_notebook(data)
    assert splice_sources(nb, {}) == data
    assert splice_sources(nb, {1: "y = 2"}).startswith(b"\xef\xbb\xbf{")


def test_cell_sources_are_numbered_over_all_cells():
    text = (FIXTURES / "mnist-eval-earlier-imports-unsafe.in.ipynb").read_text(encoding="utf-8")
    sources = cell_sources(text)
    assert sorted(sources) == [1, 2, 3, 4, 5]
    assert sources[1].startswith("# MNIST") and sources[5].startswith("def test(loader):")


def test_changes_only_sources_notices_other_changes():
    old = (FIXTURES / "rl-act.in.ipynb").read_text(encoding="utf-8")
    new = old.replace('"execution_count": 2', '"execution_count": 7')
    assert not changes_only_sources(old, new, {})


# ---------------------------------------------------------------------------------------
# Unreadable notebooks: VF002, and the run continues
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("data, expected", [
    ((FIXTURES / "invalid-json.ipynb").read_bytes(),
     "notebook is not valid JSON: Expecting property name enclosed in double quotes (line 11, column 1)"),
    ((FIXTURES / "missing-nbformat.ipynb").read_bytes(), "notebook has no `nbformat` version"),
    (b'{"nbformat": 3, "nbformat_minor": 0, "worksheets": []}', "nbformat 3 notebooks are not supported"),
    (b'{"nbformat": "4", "cells": []}', "invalid `nbformat` version: '4'"),
    (b'{"nbformat": 4, "metadata": {}}', "notebook has no `cells` list"),
    (b"[1, 2]", "notebook is not a JSON object"),
    (b'{"nbformat": 4, "cells": [], "x": "\xff"}', "notebook is not valid UTF-8"),
    (b"", "notebook is not valid JSON: Expecting value (line 1, column 1)"),
], ids=["invalid-json", "missing-nbformat", "nbformat-3", "string-version", "no-cells", "array",
        "latin-1", "empty"])
@pytest.mark.parametrize("mode", ["check", "fix", "diff"])
def test_unreadable_notebooks_give_vf002(data, expected, mode):
    result, new = process_notebook(data, path="bad.ipynb", config=CONFIG, mode=mode, unsafe_fixes=False)
    assert new is None
    assert [d.code for d in result.diagnostics] == ["VF002"]
    diagnostic = result.diagnostics[0]
    assert diagnostic.message.startswith("File cannot be read: ")
    assert expected in diagnostic.message
    assert diagnostic.cell is None and diagnostic.fix is None
    assert not result.changed and result.error is None


def test_invalid_json_location_points_into_the_file():
    data = (FIXTURES / "invalid-json.ipynb").read_bytes()
    result, _ = process_notebook(data, path="bad.ipynb", config=CONFIG, mode="check", unsafe_fixes=False)
    assert (result.diagnostics[0].location.row, result.diagnostics[0].location.column) == (11, 1)


def test_non_python_kernels_are_skipped():
    data = json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": "x <- Variable(y, volatile=TRUE)"}],
                       "metadata": {"kernelspec": {"language": "R", "name": "ir"}},
                       "nbformat": 4, "nbformat_minor": 2}).encode()
    result, new = process_notebook(data, path="r.ipynb", config=CONFIG, mode="fix", unsafe_fixes=False)
    assert result.diagnostics == () and new is None and not result.changed


# ---------------------------------------------------------------------------------------
# IPython masking
# ---------------------------------------------------------------------------------------

MAGIC_CELL = (
    "%matplotlib inline\n"
    "!pip install torch==0.3.1\n"
    "files = !ls data/\n"
    "x, y = %sx echo 1 2\n"
    "Variable?\n"
    "torch.nn.Linear??\n"
    "?torch.no_grad\n"
    "/print 1\n"
    "for batch in loader:\n"
    "    %time out = model(batch)\n"
    "    total = (a\n"
    "%b)\n"
    "    doc = '''\n"
    "%not a magic inside a string\n"
    "'''\n"
    "!wget http://example.org/data.tgz \\\n"
    "    -O data.tgz\n"
    "print('really?')  # a comment?\n"
)


def test_masked_cell_parses_and_restores_exactly():
    masked = mask_magics(MAGIC_CELL)
    ast.parse(masked.text)
    assert len(masked.text.splitlines()) == len(MAGIC_CELL.splitlines())
    assert unmask_magics(masked.text, masked) == MAGIC_CELL
    kept = ["    total = (a", "%b)", "%not a magic inside a string", "print('really?')  # a comment?"]
    for line in kept:
        assert line in masked.text.splitlines()
    assert "files = __volfix_magic_" in masked.text
    assert "x, y = __volfix_magic_" in masked.text
    assert "%" not in masked.text.replace("%b)", "").replace("%not a magic", "")


def test_unmask_follows_reindentation_by_a_fix():
    masked = mask_magics("for b in loader:\n    %time out = model(b)\n    print(out)\n")
    fixed = masked.text.replace("for b in loader:\n", "for b in loader:\n    with torch.no_grad():\n")
    fixed = re.sub(r"\n    (\S)", r"\n        \1", fixed).replace("        with", "    with")
    restored = unmask_magics(fixed, masked)
    assert restored == ("for b in loader:\n    with torch.no_grad():\n        %time out = model(b)\n"
                        "        print(out)\n")


def test_unmask_refuses_a_lost_or_edited_placeholder():
    masked = mask_magics("%matplotlib inline\nfiles = !ls\n")
    with pytest.raises(MaskError):
        unmask_magics("files = __volfix_magic_1__\n", masked)
    with pytest.raises(MaskError):
        unmask_magics("__volfix_magic_0__\nfiles = [__volfix_magic_1__]\n", masked)


@pytest.mark.parametrize("magic", ["time", "timeit", "capture", "prun", "debug"])
def test_python_body_cell_magics_are_analysed(magic):
    cell = f"%%{magic}\r\nx = Variable(y, volatile=True)\r\n"
    masked = mask_magics(cell)
    assert not masked.skip and masked.cell_magic == magic
    assert masked.text.startswith("__volfix_magic_0__\r\n")
    assert unmask_magics(masked.text, masked) == cell


@pytest.mark.parametrize("magic", ["bash", "writefile out.py", "html", "javascript", "script python2", "sh"])
def test_other_cell_magics_skip_the_cell(magic):
    masked = mask_magics(f"%%{magic}\nVariable(x, volatile=True)\n")
    assert masked.skip
    assert unmask_magics("anything", masked) == "anything"


def test_cell_magic_goes_back_to_the_first_line():
    masked = mask_magics("%%time\nx = 1\n")
    assert unmask_magics("import torch\n" + masked.text, masked) == "%%time\nimport torch\nx = 1\n"


LINE_POOL = [
    "import torch\n", "x = Variable(y, volatile=True)\n", "%matplotlib inline\n", "!ls -la\n",
    "out = !cat file\n", "torch.zeros?\n", "for i in range(3):\n", "    %time f(i)\n", "    y = i\n",
    "s = '''\n", "%inside\n", "'''\n", "# comment?\n", "z = (1 +\n", "%2)\n", "\n", "\r\n", "a = 1\r\n",
    "!echo \\\n", "   continued\n", "if x:\n", "    pass\n",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(LINE_POOL), max_size=12), st.booleans())
def test_masking_round_trips_any_cell(lines, strip_last_newline):
    text = "".join(lines)
    if strip_last_newline:
        text = text.rstrip("\r\n")
    masked = mask_magics(text)
    assert unmask_magics(masked.text, masked) == text
    assert len(re.findall(r"\r\n|\r|\n", masked.text)) == len(re.findall(r"\r\n|\r|\n", text))


# ---------------------------------------------------------------------------------------
# The notebook layer with the real engine: cells are parts of one module
# ---------------------------------------------------------------------------------------

def make_notebook(*cells, indent=1):
    return json.dumps({"cells": [{"cell_type": kind, "execution_count": None, "metadata": {}, "outputs": [],
                                  "source": src.splitlines(True)} if kind == "code" else
                                 {"cell_type": kind, "metadata": {}, "source": src.splitlines(True)}
                                 for kind, src in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=indent) + "\n"


def test_cells_are_numbered_over_all_cells_and_see_earlier_imports():
    data = make_notebook(("markdown", "`Variable(x, volatile=True)` in prose\n"),
                         ("code", "import torch\nfrom torch.autograd import Variable"),
                         ("markdown", "## eval"),
                         ("code", "%matplotlib inline\nout = model(Variable(x, volatile=True))")).encode()
    result, new = process_notebook(data, path="nb.ipynb", config=CONFIG, mode="check", unsafe_fixes=False)
    assert new is None
    assert [(d.cell, d.location.row, d.location.column) for d in result.diagnostics] == [(4, 2, 13)]


def test_a_note_counts_its_lines_in_the_cell_like_the_location():
    # LianHaiMiao/pytorch-lesson-zh's FCN.ipynb: "covers `label` (line 422), which is used after
    # it (line 429)" in a cell whose finding was at line 92 and whose help said "lines 91-102".
    data = make_notebook(
        ("code", "import torch\nimport torch.nn as nn\nfrom torch.autograd import Variable\n"
                 "model = nn.Linear(3, 2)\ncriterion = nn.CrossEntropyLoss()\nuse_gpu = False"),
        ("code", "x = 1\ny = 2\nz = 3"),
        ("code", "def evaluate(loader):\n    for data in loader:\n        if use_gpu:\n"
                 "            im = Variable(data[0], volatile=True).cuda()\n"
                 "            label = Variable(data[1], volatile=True).cuda()\n        else:\n"
                 "            im = Variable(data[0])\n            label = Variable(data[1])\n"
                 "        out = model(im)\n        loss = criterion(out, label)\n"
                 "        pred = out.max(dim=1)[1].data.numpy()\n        print(pred, label)")).encode()
    result, _ = process_notebook(data, path="nb.ipynb", config=CONFIG, mode="check", unsafe_fixes=False)
    first = next(d for d in result.diagnostics if d.code == "VF101")
    assert (first.cell, first.location.row) == (3, 4)
    assert "`label` (line 8), which is used after it (line 12)" in first.note


def test_fix_adds_torch_to_the_import_cell_and_drops_unused_variable():
    data = make_notebook(("code", "%matplotlib inline\nimport numpy as np\nfrom torch.autograd import Variable"),
                         ("code", "from chainer import functions"),
                         ("code", "for x in loader:\n    y = model(Variable(x, volatile=True))\n    %time y.sum()"),
                         ("code", "import torch")).encode()
    result, new = process_notebook(data, path="nb.ipynb", config=CONFIG, mode="fix", unsafe_fixes=False)
    assert result.changed and result.fixed_count == 1 and result.applied_codes == ("VF101",)
    cells = [joined(c["source"]) for c in json.loads(new)["cells"]]
    assert cells[0] == "%matplotlib inline\nimport numpy as np\nimport torch"
    # `%time y.sum()` times a statement of the loop: 0.3 ran it volatile too, so the region covers it
    assert cells[2] == "for x in loader:\n    with torch.no_grad():\n        y = model(x)\n        %time y.sum()"
    assert cells[1] == "from chainer import functions" and cells[3] == "import torch"
    assert result.diagnostics == ()
    assert changes_only_sources(data.decode(), new.decode(), {0: cells[0], 2: cells[2]})
    again, newer = process_notebook(new, path="nb.ipynb", config=CONFIG, mode="fix", unsafe_fixes=False)
    assert newer is None and not again.changed


def test_fix_reuses_an_aliased_torch_and_keeps_a_still_used_variable():
    data = make_notebook(("code", "import torch as t\nfrom torch.autograd import Variable"),
                         ("code", "a = model(Variable(x, volatile=True))"),
                         ("code", "h = Variable(state)")).encode()
    _, new = process_notebook(data, path="nb.ipynb", config=CONFIG, mode="fix", unsafe_fixes=False)
    cells = [joined(c["source"]) for c in json.loads(new)["cells"]]
    # `Variable(state)` may wrap a tensor that requires grad: its fix is unsafe, so it stays.
    assert cells == ["import torch as t\nfrom torch.autograd import Variable",
                     "with t.no_grad():\n    a = model(x)", "h = Variable(state)"]


def test_diff_mode_returns_bytes_and_both_texts():
    data = make_notebook(("code", "import torch\nfrom torch.autograd import Variable\n"
                                  "a = model(Variable(x, volatile=True))")).encode()
    result, new = process_notebook(data, path="nb.ipynb", config=CONFIG, mode="diff", unsafe_fixes=False)
    assert new is not None and result.changed
    assert result.source == data.decode() and result.fixed_source == new.decode()


def test_a_raw_value_used_by_a_later_cell_gets_its_region_there():
    data = make_notebook(("code", "import torch\nfrom torch.autograd import Variable"),
                         ("code", "x = Variable(batch, volatile=True)"),
                         ("markdown", "## predict"),
                         ("code", "out = model(x)\npred = out.max(1)[1]")).encode()
    check, _ = process_notebook(data, path="nb.ipynb", config=CONFIG, mode="check", unsafe_fixes=False)
    (d,) = check.diagnostics
    assert (d.cell, d.location.row, d.fix.applicability) == (2, 1, Applicability.SAFE)
    result, new = process_notebook(data, path="nb.ipynb", config=CONFIG, mode="fix", unsafe_fixes=False)
    cells = [joined(c["source"]) for c in json.loads(new)["cells"]]
    # The region never spans two cells: the computation in cell 4 gets its own.
    assert cells == ["import torch", "x = batch", "## predict",
                     "with torch.no_grad():\n    out = model(x)\n    pred = out.max(1)[1]"]
    assert result.diagnostics == ()


def test_a_computed_value_used_by_a_later_cell_needs_no_second_region():
    data = make_notebook(("code", "import torch\nfrom torch.autograd import Variable"),
                         ("code", "out = model(Variable(x, volatile=True))"),
                         ("code", "pred = out.max(1)[1]")).encode()
    result, new = process_notebook(data, path="nb.ipynb", config=CONFIG, mode="fix", unsafe_fixes=False)
    cells = [joined(c["source"]) for c in json.loads(new)["cells"]]
    # `out` comes out of the region without a graph, as in 0.3: `out.max` records nothing.
    assert cells == ["import torch", "with torch.no_grad():\n    out = model(x)", "pred = out.max(1)[1]"]


def test_skipped_cell_magics_are_never_analysed():
    data = make_notebook(("code", "import torch\nfrom torch.autograd import Variable"),
                         ("code", "%%bash\necho 'Variable(x, volatile=True)'"),
                         ("code", "%%time\nb = model(Variable(x, volatile=True))")).encode()
    check, _ = process_notebook(data, path="nb.ipynb", config=CONFIG, mode="check", unsafe_fixes=False)
    assert [d.cell for d in check.diagnostics] == [3]
    _, new = process_notebook(data, path="nb.ipynb", config=CONFIG, mode="fix", unsafe_fixes=False)
    cells = [joined(c["source"]) for c in json.loads(new)["cells"]]
    assert cells[1] == "%%bash\necho 'Variable(x, volatile=True)'"
    assert cells[2] == "%%time\nwith torch.no_grad():\n    b = model(x)"
    # Variable stays imported: the %%bash cell mentions it and volfix cannot tell it is text.
    assert cells[0] == "import torch\nfrom torch.autograd import Variable"


# ---------------------------------------------------------------------------------------
# Fixture notebooks, end to end with the real engine
# ---------------------------------------------------------------------------------------


def case_name(path: Path) -> str:
    return path.name[: -len(".in.ipynb")]


def describe(d) -> str:
    marker = ""
    if d.fix is not None:
        marker = {Applicability.SAFE: " [safe fix]", Applicability.UNSAFE: " [unsafe fix]",
                  Applicability.DISPLAY_ONLY: " [suggestion]"}[d.fix.applicability]
    return f"cell {d.cell}:{d.location.row}:{d.location.column} {d.code} {d.text}{marker}"


def run(data: bytes, mode: str, unsafe: bool = False):
    return process_notebook(data, path="notebook.ipynb", config=CONFIG, mode=mode, unsafe_fixes=unsafe)


def assert_code_cells_parse(data: bytes):
    for cell in code_cells(json.loads(data)):
        masked = mask_magics(joined(cell["source"]))
        if not masked.skip:
            ast.parse(masked.text)


@pytest.mark.parametrize("path", INPUTS, ids=ids(INPUTS))
def test_fixture_diagnostics(path):
    result, new = run(path.read_bytes(), "check")
    assert new is None and result.error is None
    got = "".join(describe(d) + "\n" for d in result.diagnostics)
    expected = path.with_name(case_name(path) + ".diagnostics")
    if UPDATE:
        expected.write_text(got, encoding="utf-8")
    assert got == expected.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", INPUTS, ids=ids(INPUTS))
def test_fixture_fix(path):
    data = path.read_bytes()
    result, new = run(data, "fix", unsafe=case_name(path).endswith("-unsafe"))
    assert result.error is None
    expected = path.with_name(case_name(path) + ".out.ipynb")
    if UPDATE:
        if new is None:
            expected.unlink(missing_ok=True)
        else:
            expected.write_bytes(new)
    if expected.exists():
        assert new == expected.read_bytes()
        assert result.changed and result.fixed_source == new.decode("utf-8")
    else:
        assert new is None and not result.changed


@pytest.mark.parametrize("path", INPUTS, ids=ids(INPUTS))
def test_fixed_notebook_changes_only_code_sources_parses_and_converges(path):
    data = path.read_bytes()
    _, new = run(data, "fix", unsafe=True)
    if new is None:
        return
    old_obj, new_obj = json.loads(data), json.loads(new)
    assert len(old_obj["cells"]) == len(new_obj["cells"])
    for old_cell, new_cell in zip(old_obj["cells"], new_obj["cells"]):
        if old_cell["source"] != new_cell["source"]:
            assert old_cell["cell_type"] == "code"
            assert type(old_cell["source"]) is type(new_cell["source"])
        old_cell["source"] = new_cell["source"] = None
    assert old_obj == new_obj
    assert_code_cells_parse(new)
    again, newer = run(new, "fix", unsafe=True)
    assert newer is None and not again.changed
    assert not [d for d in again.diagnostics if d.is_applicable(True)]


@pytest.mark.parametrize("path", INPUTS, ids=ids(INPUTS))
def test_markdown_and_outputs_are_never_flagged(path):
    obj = json.loads(path.read_bytes())
    result, _ = run(path.read_bytes(), "check")
    for d in result.diagnostics:
        assert obj["cells"][d.cell - 1]["cell_type"] == "code"


def test_variable_imported_in_an_earlier_cell_counts():
    result, new = run((FIXTURES / "mnist-eval-earlier-imports-unsafe.in.ipynb").read_bytes(), "fix", unsafe=True)
    cells = [joined(c["source"]) for c in json.loads(new)["cells"]]
    assert "from torch.autograd import Variable" not in cells[1]
    assert "volatile" not in cells[4] and "no_grad" in cells[4]
    check, _ = run((FIXTURES / "mnist-eval-earlier-imports-unsafe.in.ipynb").read_bytes(), "check")
    assert "VF101" in {d.code for d in check.diagnostics if d.cell == 5}


def test_variable_rebound_to_chainer_in_a_later_cell_is_not_flagged():
    result, new = run((FIXTURES / "rebound-variable.in.ipynb").read_bytes(), "check")
    assert [d for d in result.diagnostics if d.cell == 4] == []


def test_magic_cells_keep_their_magics():
    data = (FIXTURES / "magics.in.ipynb").read_bytes()
    check, _ = run(data, "check")
    assert {d.cell for d in check.diagnostics} == {3}
    _, new = run(data, "fix")
    cells = [joined(c["source"]) for c in json.loads(new)["cells"]]
    original = [joined(c["source"]) for c in json.loads(data)["cells"]]
    assert cells[2].startswith("%%time\n") and "    %time _ = outputs.sum()" in cells[2].replace("        %", "    %")
    assert cells[1] == original[1] and cells[3] == original[3] and cells[4] == original[4]
    assert cells[0].startswith("%matplotlib inline\n%load_ext autoreload\n%autoreload 2\n!pip install")


def test_a_region_that_would_hide_a_cells_shown_value_is_unsafe():
    """Jupyter shows the value of a cell's last expression (mratsim's `model.genTags(start,
    state)`): in a `with torch.no_grad():` block it is a statement like any other and the cell
    shows nothing, so the safe fix (pre-commit's) leaves it and says why. A cell ending in
    `print(...)` shows nothing either way: that region stays safe."""
    shown = make_notebook(("code", "import torch\nimport torch.nn as nn\nfrom torch.autograd import Variable\n"
                                   "net = nn.Linear(4, 2)"),
                          ("code", "start = Variable(torch.zeros(1, 4), volatile=True)"),
                          ("code", "net(start)")).encode()
    result, _ = process_notebook(shown, path="nb.ipynb", config=CONFIG, mode="check", unsafe_fixes=False)
    (found,) = [d for d in result.diagnostics if d.code == "VF101"]
    assert found.fix is not None and found.fix.applicability == Applicability.UNSAFE
    assert "`net(start)` (line 1 of cell 3), the last line of its cell" in found.note
    assert process_notebook(shown, path="nb.ipynb", config=CONFIG, mode="fix", unsafe_fixes=False)[1] is None
    printed = shown.replace(b'"net(start)"', b'"print(net(start))"')
    result, _ = process_notebook(printed, path="nb.ipynb", config=CONFIG, mode="check", unsafe_fixes=False)
    assert [d.fix.applicability for d in result.diagnostics if d.code == "VF101"] == [Applicability.SAFE]
    _, new = process_notebook(printed, path="nb.ipynb", config=CONFIG, mode="fix", unsafe_fixes=False)
    assert "with torch.no_grad():\\n" in new.decode() and '"    print(net(start))"' in new.decode()
