"""Property-based tests: fixing never breaks parsing, never loses bytes, converges at once,
and checking never crashes, whatever the input.

Bounded for CI (60 examples per property, no deadline). For a longer hunt:
    VOLFIX_HYPOTHESIS_EXAMPLES=2000 pytest tests/test_properties.py
"""
from __future__ import annotations

import ast
import io
import itertools
import os
import re
import tempfile
import tokenize
from collections import Counter
from typing import List

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from strategies import EXACT, FREE, KEEP, MIXED, Program, legacy_programs, legacy_soup, mutated_programs

import volfix
from volfix.files import sourcefile
from volfix.settings.config import DEFAULT_CONFIG
from volfix.run.fileproc import process_file
from volfix.syntax.document import mask_async

PROPERTIES = settings(
    max_examples=int(os.environ.get("VOLFIX_HYPOTHESIS_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PATH = "legacy.py"


def masked(text: str) -> str:
    """How Python 3.6 read `async=`: the program as its author ran it."""
    return re.sub(r"\basync(\s*=)", r"non_blocking\1", text)


def compiles(text: str) -> bool:
    try:
        compile(text, "<test>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def lines_of(text: str) -> List[str]:
    return re.split(r"\r\n|\r|\n", text)


def comments_of(text: str) -> Counter:
    # tokenize reads lines with readline (LF only); a lone CR ends a line for Python too
    tokens = tokenize.generate_tokens(io.StringIO(re.sub(r"\r(?!\n)", "\n", text)).readline)
    return Counter(tok.string for tok in tokens if tok.type == tokenize.COMMENT)


def fix(text: str):
    return volfix.fix_source(text, path=PATH, unsafe_fixes=True)


def assert_kept(program: Program, fixed: str) -> None:
    """Every KEEP/EXACT line appears in the output, in order, byte for byte; a KEEP line
    may have gained whole indentation units (it was wrapped in `with torch.no_grad():`,
    possibly twice: a function with its own region inside a module-level region), and may
    read `x` where it read an alias the fix removed (`y = Variable(x, ...)` left `y = x`)."""
    out = lines_of(fixed)
    aliases = variable_aliases(program.source)
    headers, inside = collapsible_ifs(program)
    headers |= blanks_after_an_opening_import(program)
    headers |= blanks_above_free_runs(program)
    absorbed_headers, absorbed = absorbable_withs(program)
    headers |= absorbed_headers
    inside |= absorbed
    unit = unit_of(program)
    position = 0
    opening, freed = True, False  # only FREE and blank lines so far; a FREE line among them
    for row, (text, tag) in enumerate(program.lines, start=1):
        if tag == FREE:
            freed = True
            continue
        texts = renamings(text, aliases) if tag == KEEP else {text}
        allowed = texts if tag == EXACT else {unit * k + t for k in range(4) for t in texts}
        opening = opening and not text.strip()
        gone = row in headers or (opening and freed)
        header = text.split("#")[0].strip()
        if header.endswith(":") and tag != EXACT:
            # a block opens next: blank lines after the lines the fix removed at its start go
            # with them (`fixes.layout` for a region's `with`, whether this header stays or an
            # enclosing region absorbs it; `fixes.edits.piled_blank_lines` for any block)
            opening, freed = True, False
        if gone:
            # May be gone: a collapsed `if`, an emptied `else`, or a blank line after the lines
            # the fix removed that opened the file or a block (they go with them: a file or a
            # block does not open with blank lines). The output line it would match is left to
            # the next line kept when that one reads the same (`if inputs:` twice in a row: the
            # first collapsed, the second kept).
            later = next((t for t, g in program.lines[row:] if g != FREE), None)
            if position < len(out) and out[position] in allowed and (later is None or out[position].strip() != later.strip()):
                position += 1
            continue
        if row in inside:
            allowed |= {t[len(unit):] for t in texts if t.startswith(unit)}
        if row in absorbed and not text.strip():
            allowed.add("")  # a blank line of a block written again at its new indentation
        found = position
        while found < len(out) and out[found] not in allowed:
            found += 1
        assert found < len(out), f"line lost or altered: {text!r} ({tag})\n--- fixed:\n{fixed}"
        position = found + 1


def blanks_after_an_opening_import(program: Program) -> set:
    """Rows of the blank lines right after a FREE import that opens the file: removing the
    `Variable` import that opened a file takes them too (31798ef), so they may go."""
    lines = program.lines
    if not lines or lines[0][1] != FREE or not lines[0][0].lstrip().startswith(("from ", "import ")):
        return set()
    rows = set()
    for row, (text, _) in enumerate(lines[1:], start=2):
        if text.strip():
            break
        rows.add(row)
    return rows


def blanks_above_free_runs(program: Program) -> set:
    """Rows of blank lines right above FREE lines with blank lines below them too: a statement
    the fix deletes between blank lines takes as many blank lines above it as follow it, so
    the two runs do not pile up into one (`Expressions.delete_statement`, pycodestyle E303)."""
    lines = program.lines
    rows = set()
    row = 0
    while row < len(lines):
        if lines[row][1] != FREE:
            row += 1
            continue
        end = row
        while end < len(lines) and lines[end][1] == FREE:
            end += 1
        above = 0
        while row - above - 1 >= 0 and not lines[row - above - 1][0].strip():
            above += 1
        below = 0
        while end + below < len(lines) and not lines[end + below][0].strip():
            below += 1
        rows.update(range(row - min(above, below) + 1, row + 1))  # 1-based rows of those blank lines
        row = end
    return rows


def absorbable_withs(program: Program):
    """Rows that may go and rows that may lose one indentation unit: a new region that holds an
    author's `with torch.no_grad():` takes its body (`fixes.gates`: no region nested in the
    region), so the header may go and the body's rows come one unit out."""
    headers, inside = set(), set()
    try:
        tree = ast.parse(mask_async(program.source)[0])
    except SyntaxError:
        return headers, inside
    for node in ast.walk(tree):
        if isinstance(node, ast.With) and len(node.items) == 1 and node.items[0].optional_vars is None \
                and ast.unparse(node.items[0].context_expr) == "torch.no_grad()":
            headers.update(range(node.lineno, node.body[0].lineno))  # and the blank lines opening its block
            inside.update(range(node.body[0].lineno, node.end_lineno + 1))
    return headers, inside


def collapsible_ifs(program: Program):
    """Rows that may go: those of an `if` statement with a branch of FREE lines only (the fix
    may rewrite it into a copy of the other branch and keep one copy, or empty a rewritten
    `else`, SPEC §2.8; which copy stays cannot be told when both read the same; an
    `if flag:` without `else` goes with the only statement it held); and the rows inside such
    statements (which may lose one indentation unit)."""
    headers, inside = set(), set()
    try:
        tree = ast.parse(mask_async(program.source)[0])
    except SyntaxError:
        return headers, inside
    tags = [tag for _, tag in program.lines]
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and not node.orelse and _plain_test(node.test) and \
                all(tags[r - 1] == FREE for s in node.body for r in range(s.lineno, s.end_lineno + 1)):
            # `if flag:` around a fixed statement that went (`x = x`): the `if` goes with it
            headers.update(range(node.lineno, node.end_lineno + 1))
            continue
        if not isinstance(node, ast.If) or not node.orelse:
            continue
        if isinstance(node.orelse[0], ast.If):
            continue  # `elif`
        body_rows = [r for s in node.body for r in range(s.lineno, s.end_lineno + 1)]
        else_rows = [r for s in node.orelse for r in range(s.lineno, s.end_lineno + 1)]
        free_body = all(tags[r - 1] == FREE for r in body_rows)
        free_else = all(tags[r - 1] == FREE for r in else_rows)
        if free_body or free_else:
            # the fix may make a rewritten branch equal to the other (either copy is kept,
            # dedented) or empty a rewritten `else` (it goes)
            headers.update(range(node.lineno, node.end_lineno + 1))
            inside.update(range(node.lineno, node.end_lineno + 1))
    return headers, inside


def _plain_test(test: ast.expr) -> bool:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    return isinstance(test, ast.Name)


def variable_aliases(source: str) -> dict:
    """`y = Variable(x, ...)` -> {'y': {'x'}}: names the fix may replace by what they alias
    (the spellings of `Variable` that strategies.py generates; one name may alias several in
    different scopes)."""
    found = {}
    for node in ast.walk(ast.parse(mask_async(source)[0])):  # `x.cuda(async=True)` does not parse
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call) and node.value.args
                and ast.unparse(node.value.func) in ("Variable", "Var", "ag.Variable", "autograd.Variable")
                and isinstance(node.value.args[0], ast.Name) and node.targets[0].id != node.value.args[0].id):
            found.setdefault(node.targets[0].id, set()).add(node.value.args[0].id)
    for name in found:  # chains: `batch = Variable(x)`, `h = Variable(batch)` may leave `h` -> `x`
        todo = list(found[name])
        while todo:
            for further in found.get(todo.pop(), ()):
                if further not in found[name] and further != name:
                    found[name].add(further)
                    todo.append(further)
    return found


def renamings(text: str, aliases: dict) -> set:
    """`text` with any of its mentions of `aliases` replaced, each on its own (the fix renames
    the reads an alias's binding reaches, which may be some of a line's: `x = y` then
    `for x in x:` becomes `for x in y:`)."""
    if not aliases:
        return {text}
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(aliases, key=len, reverse=True))) + r")\b")
    found = list(pattern.finditer(text))[:6]
    out = set()
    for choice in itertools.product(*([m.group(1)] + sorted(aliases[m.group(1)]) for m in found)):
        pieces, last = [], 0
        for m, name in zip(found, choice):
            pieces += [text[last:m.start()], name]
            last = m.end()
        out.add("".join(pieces) + text[last:])
    return out


def unit_of(program: Program) -> str:
    """The file's indentation unit as a reader can see it (four spaces if nothing is indented)."""
    return program.unit if program.unit_visible else "    "


def line_ends(text: str) -> set:
    return set(re.findall(r"\r\n|\r|\n", text))


def assert_layout_kept(program: Program, fixed: str) -> None:
    if program.newline == MIXED:  # new lines take an ending of the lines around them
        assert line_ends(fixed) <= line_ends(program.source), f"line endings changed: {fixed!r}"
    else:
        assert line_ends(fixed) <= {program.newline}, f"line endings changed: {fixed!r}"
    exact = set(program.lines_with_tag(EXACT))
    original = {text for text, _tag in program.lines}
    foreign = " " if unit_of(program) == "\t" else "\t"
    for line in lines_of(fixed):
        # Lines that come out exactly as they went in (a continuation line indented with the
        # "other" character, say) say nothing about the indentation volfix added.
        if line in exact or line in original or not line.strip():
            continue
        indentation = line[:len(line) - len(line.lstrip(" \t"))]
        assert foreign not in indentation, f"indentation unit changed: {line!r}"


@PROPERTIES
@given(legacy_programs())
def test_generated_programs_are_valid_legacy_code(program):
    assert compiles(masked(program.source)), program.source


@PROPERTIES
@given(legacy_programs())
@example(  # the alias cleanup renamed `x, y = y, x` into `y, y = y, y`, then deleted it
    program=Program(source='from torch.autograd import Variable\n\nx = Variable(y, volatile=True)\nx, y = y, x ',
     newline='\n',
     unit='    ',
     lines=(('from torch.autograd import Variable', 'free'),
      ('', 'keep'),
      ('x = Variable(y, volatile=True)', 'free'),
      ('x, y = y, x ', 'keep')),
     unit_visible=False),
).via('discovered failure')
@example(  # no block, a tab on continuation lines: a new `with` indented with spaces gave `    \tx)`
    program=Program(source='from torch.autograd import Variable\n\nx = Variable(x,  # note\n\tvolatile=True)\nx = model(x,  # note\n\tx)',
     newline='\n',
     unit='\t',
     lines=(('from torch.autograd import Variable', 'free'),
      ('', 'keep'),
      ('x = Variable(x,  # note', 'free'),
      ('\tvolatile=True)', 'free'),
      ('x = model(x,  # note', 'keep'),
      ('\tx)', 'keep')),
     unit_visible=True),
).via('discovered failure')
@example(  # the alias cleanup renamed `x, x = x, x` into `y, y = y, y`, then deleted it
    program=Program(source='from torch.autograd import Variable\n\nx = Variable(y, volatile=True)\nx, x = x, x ',
     newline='\n',
     unit='    ',
     lines=(('from torch.autograd import Variable', 'free'),
      ('', 'keep'),
      ('x = Variable(y, volatile=True)', 'free'),
      ('x, x = x, x ', 'keep')),
     unit_visible=False),
).via('discovered failure')
@example(
    program=Program(source='from torch.autograd import Variable\n\nif x: \n    x = Variable(x,  # note\n        volatile=True)\n    x = Variable(x,  # note\n        volatile=True)',
     newline='\n',
     unit='    ',
     lines=(('from torch.autograd import Variable', 'free'),
      ('', 'keep'),
      ('if x: ', 'keep'),
      ('    x = Variable(x,  # note', 'free'),
      ('        volatile=True)', 'free'),
      ('    x = Variable(x,  # note', 'free'),
      ('        volatile=True)', 'free')),
     unit_visible=True),
).via('discovered failure')
@example(  # the author's blank line opened the `with` block once the statement above it went
    program=Program(source='from torch.autograd import Variable\n\n\n\nwith open(x) as f: \n    x = Variable(x, volatile=True)\n    \n    x = Variable(x,  # note\n        volatile=True)',
     newline='\n',
     unit='    ',
     lines=(('from torch.autograd import Variable', 'free'),
      ('', 'keep'),
      ('', 'keep'),
      ('', 'keep'),
      ('with open(x) as f: ', 'keep'),
      ('    x = Variable(x, volatile=True)', 'free'),
      ('    ', 'keep'),
      ('    x = Variable(x,  # note', 'free'),
      ('        volatile=True)', 'free')),
     unit_visible=True),
).via('discovered failure')
@example(  # an alias renamed in the author's `with` header: its blank line was taken for a new region's
    program=Program(source='from torch.autograd import Variable\n\ndef f0(model, x): \n    x = Variable(y, volatile=True)\n    with open(x) as f: \n        \n        pass ',
     newline='\n',
     unit='    ',
     lines=(('from torch.autograd import Variable', 'free'),
      ('', 'keep'),
      ('def f0(model, x): ', 'keep'),
      ('    x = Variable(y, volatile=True)', 'free'),
      ('    with open(x) as f: ', 'keep'),
      ('        ', 'keep'),
      ('        pass ', 'keep')),
     unit_visible=True),
).via('discovered failure')
@example(  # a `set_grad_enabled(training)` region took the `with torch.no_grad():` it held as redundant
    program=Program(source='import torch\nfrom torch.autograd import Variable\n\ndef f0(model, x): \n    for x in x: \n        if x: \n            x = Variable(x,  # note\n                volatile=True)\n        else: \n            y = Variable(x, volatile=not training)\n            x = Variable(x,  # note\n                volatile=True)\n        with torch.no_grad(): \n            x = Variable(x,  # note\n                volatile=True)\n    x = model(x,  # note \n        y)',
     newline='\n',
     unit='    ',
     lines=(('import torch', 'free'),
      ('from torch.autograd import Variable', 'free'),
      ('', 'keep'),
      ('def f0(model, x): ', 'keep'),
      ('    for x in x: ', 'keep'),
      ('        if x: ', 'keep'),
      ('            x = Variable(x,  # note', 'free'),
      ('                volatile=True)', 'free'),
      ('        else: ', 'keep'),
      ('            y = Variable(x, volatile=not training)', 'free'),
      ('            x = Variable(x,  # note', 'free'),
      ('                volatile=True)', 'free'),
      ('        with torch.no_grad(): ', 'keep'),
      ('            x = Variable(x,  # note', 'free'),
      ('                volatile=True)', 'free'),
      ('    x = model(x,  # note ', 'keep'),
      ('        y)', 'keep')),
     unit_visible=True),
).via('discovered failure')
@example(  # the author's `with torch.no_grad():` inside a new decorated region: taken, its blank line too
    program=Program(source='import torch\nfrom torch.autograd import Variable\n\ndef f0(model, x): \n    if x: \n        with torch.no_grad(): \n            \n            pass \n    else: \n        x = """first \n    indented text\nlast"""\n        x = model(Variable(x, volatile=True))\n    x = model(x) ',
     newline='\n',
     unit='    ',
     lines=(('import torch', 'free'),
      ('from torch.autograd import Variable', 'free'),
      ('', 'keep'),
      ('def f0(model, x): ', 'keep'),
      ('    if x: ', 'keep'),
      ('        with torch.no_grad(): ', 'keep'),
      ('            ', 'keep'),
      ('            pass ', 'keep'),
      ('    else: ', 'keep'),
      ('        x = """first ', 'keep'),
      ('    indented text', 'exact'),
      ('last"""', 'exact'),
      ('        x = model(Variable(x, volatile=True))', 'free'),
      ('    x = model(x) ', 'keep')),
     unit_visible=True),
).via('discovered failure')
@example(  # a statement deleted between blank lines takes the blank line above it (E303)
    program=Program(source='from torch.autograd import Variable\n\ndef f0(model, x): \n    class Net1(object): \n        def f2(model, x): \n            # note \n            x = model(x,  # note \n                x)\n            \n    x = Variable(x, volatile=True)\n\n',
     newline='\n',
     unit='    ',
     lines=(
      ('from torch.autograd import Variable', 'free'),
      ('', 'keep'),
      ('def f0(model, x): ', 'keep'),
      ('    class Net1(object): ', 'keep'),
      ('        def f2(model, x): ', 'keep'),
      ('            # note ', 'keep'),
      ('            x = model(x,  # note ', 'keep'),
      ('                x)', 'keep'),
      ('            ', 'keep'),
      ('    x = Variable(x, volatile=True)', 'free'),
      ('', 'keep'),
      ('', 'keep')),
     unit_visible=True),
).via('discovered failure')
@example(  # the author's `with` may be absorbed: its block's blank line after the removed first statement may go too
    program=Program(source='from torch.autograd import Variable\n\n\n# note \nwith torch.no_grad(): \n    x = Variable(x, volatile=True)\n    \n    x = """first\n    indented text\nlast"""',
     newline='\n',
     unit='    ',
     lines=(
      ('from torch.autograd import Variable', 'free'),
      ('', 'keep'),
      ('', 'keep'),
      ('# note ', 'keep'),
      ('with torch.no_grad(): ', 'keep'),
      ('    x = Variable(x, volatile=True)', 'free'),
      ('    ', 'keep'),
      ('    x = """first', 'keep'),
      ('    indented text', 'exact'),
      ('last"""', 'exact')),
     unit_visible=True),
).via('discovered failure')
@example(
    program=Program(source='import torch\nfrom torch.autograd import Variable\n\nfor x in x: \n    with torch.no_grad(): \n        # note \n        x = Variable(y,  # note\n            volatile=True)',
     newline='\n',
     unit='    ',
     lines=(('import torch', 'free'),
      ('from torch.autograd import Variable', 'free'),
      ('', 'keep'),
      ('for x in x: ', 'keep'),
      ('    with torch.no_grad(): ', 'keep'),
      ('        # note ', 'keep'),
      ('        x = Variable(y,  # note', 'free'),
      ('            volatile=True)', 'free')),
     unit_visible=True),
).via('discovered failure')
@example(  # a block (here a function's) no longer opens with the blank line its removed first statement had below it
    program=Program(source='from torch.autograd import Variable\n\ndef f0(model, x): \n    x = Variable(x, volatile=True)\n    \n    x = """first \n    indented text\nlast"""',
     newline='\n',
     unit='    ',
     lines=(('from torch.autograd import Variable', 'free'),
      ('', 'keep'),
      ('def f0(model, x): ', 'keep'),
      ('    x = Variable(x, volatile=True)', 'free'),
      ('    ', 'keep'),
      ('    x = """first ', 'keep'),
      ('    indented text', 'exact'),
      ('last"""', 'exact')),
     unit_visible=True),
)
@example(  # two `if inputs:` in a row, the first collapsed: the oracle matched the second's line to the first
    program=Program(source='from torch.autograd import Variable\n\n# note \n# note \ndef f0(model, x, inputs): \n    if inputs: \n        x = Variable(y, volatile=True)\n    if inputs: \n        # note \n        pass',
     newline='\n',
     unit='    ',
     lines=(('from torch.autograd import Variable', 'free'),
      ('', 'keep'),
      ('# note ', 'keep'),
      ('# note ', 'keep'),
      ('def f0(model, x, inputs): ', 'keep'),
      ('    if inputs: ', 'keep'),
      ('        x = Variable(y, volatile=True)', 'free'),
      ('    if inputs: ', 'keep'),
      ('        # note ', 'keep'),
      ('        pass', 'keep')),
     unit_visible=True),
)
def test_fix_compiles_converges_and_keeps_every_other_byte(program):
    result = fix(program.source)
    fixed = result.fixed_source
    assert result.error is None
    assert not [d.text for d in result.diagnostics if "volfix bug" in d.text]
    assert compiles(fixed), fixed
    # Converges in one pass: nothing applicable is left, and fixing again changes nothing.
    assert not [d for d in result.diagnostics if d.is_applicable(True)]
    assert fix(fixed).fixed_source == fixed
    assert_kept(program, fixed)
    assert_layout_kept(program, fixed)
    assert comments_of(masked(program.source)) - comments_of(fixed) == Counter(), "comment lost"


@PROPERTIES
@given(legacy_programs(), st.data())
def test_reviewed_fixes_apply_exactly_the_accepted_ones_and_never_break_the_file(program, data):
    accepted, declined = [], []

    def review(proposal):
        answer = data.draw(st.booleans(), label=f"apply {[d.code for d in proposal.diagnostics]}")
        (accepted if answer else declined).append(proposal)
        return answer

    result = volfix.fix_source(program.source, path=PATH, unsafe_fixes=True, review=review)
    fixed = result.fixed_source
    assert result.error is None
    assert not [d.text for d in result.diagnostics if "volfix bug" in d.text]
    assert compiles(masked(fixed)), fixed
    assert result.fixed_count == sum(len(p.diagnostics) for p in accepted)
    if not accepted:
        assert fixed == program.source
    for proposal in accepted + declined:
        assert proposal.before != proposal.after
    # What was declined is still there to fix, and fixing it converges as usual.
    final = fix(fixed).fixed_source
    assert compiles(final), final
    assert fix(final).fixed_source == final


@PROPERTIES
@given(legacy_programs(), st.sampled_from(["utf-8", "utf-8-bom", "latin-1", "cp1252"]))
def test_fix_in_place_keeps_encoding_and_never_touches_unchanged_files(program, encoding):
    cookie = {"latin-1": "# -*- coding: latin-1 -*-", "cp1252": "# vim: fileencoding=cp1252"}
    newline = "\n" if program.newline == MIXED else program.newline
    text = (cookie[encoding] + newline if encoding in cookie else "") + program.source
    data = text.encode("utf-8" if encoding == "utf-8-bom" else encoding)
    if encoding == "utf-8-bom":
        data = b"\xef\xbb\xbf" + data
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "legacy.py")
        with open(path, "wb") as handle:
            handle.write(data)
        os.utime(path, ns=(10**9, 10**9))
        result = process_file(path, config=DEFAULT_CONFIG, mode="fix", unsafe_fixes=True)
        with open(path, "rb") as handle:
            written = handle.read()
        assert result.error is None
        expected = fix(text).fixed_source
        assert written == sourcefile.encode_source(expected, sourcefile.decode_source(data))
        if written == data:
            assert os.stat(path).st_mtime_ns == 10**9
        assert sorted(os.listdir(tmp)) == ["legacy.py"]


@PROPERTIES
@given(st.one_of(st.text(), legacy_soup(), mutated_programs()))
def test_check_and_fix_never_crash_on_arbitrary_text(text):
    result = volfix.check_source(text, path=PATH)
    assert result.error is None
    fixed = fix(text)
    assert fixed.error is None
    if compiles(masked(text)) and fixed.fixed_source != text:
        assert compiles(fixed.fixed_source), fixed.fixed_source


@PROPERTIES
@given(st.one_of(st.binary(), legacy_soup().map(lambda s: s.encode("utf-8", "surrogatepass")),
                 st.binary().map(lambda b: b"# coding: latin-1\nfrom torch.autograd import Variable\n" + b)))
def test_check_never_crashes_on_arbitrary_bytes(data):
    result = volfix.check_source(data, path=PATH)
    assert result.error is None
    codes = {d.code for d in result.diagnostics}
    if result.source is None:
        assert codes == {"VF002"}
