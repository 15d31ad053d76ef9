"""Hypothesis strategies for legacy (PyTorch <= 0.3) programs.

`legacy_programs()` draws a random but always valid module: nested functions (decorated,
generators, `async def`), loops, conditionals, `with`, `try`, classes, comprehensions,
multi-line calls with comments in their argument lists, trailing comments on statements,
multi-line strings, blank and form-feed lines, trailing whitespace, any indentation unit
(tabs too), any line ending (LF, CRLF, lone CR, or mixed line by line), with or without a
final newline, and `Variable(..., volatile=...)` sites spread through it.

Every line carries a tag saying what a correct fix may do to it:

    FREE   may change: it mentions Variable/volatile/async=, or it is an import
    KEEP   must survive byte for byte, in order, apart from one added indentation unit
           (when the fix wraps it in `with torch.no_grad():`)
    EXACT  must survive byte for byte with nothing added: a line inside a multi-line
           string, where indentation is data
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Tuple

from hypothesis import strategies as st

FREE, KEEP, EXACT = "free", "keep", "exact"

NAMES = ("x", "y", "h", "out", "batch", "inputs", "target", "hidden")
WORDS = ("note", "legacy", "eval", "TODO", "why", "fixme", "é", "ü", "keep me")


# Line endings a program is drawn with: one for the whole file, or MIXED (each line its own,
# as in a file edited on several systems). Python's tokenizer ends a line at any of them.
MIXED = "mixed"
NEWLINES = ("\n", "\r\n", "\r", MIXED)


def _line_end(draw, newline: str) -> str:
    return draw(st.sampled_from(["\n", "\r\n", "\r"])) if newline == MIXED else newline


@dataclass(frozen=True)
class Line:
    depth: int
    text: str
    tag: str = KEEP
    continuation: bool = False  # inside brackets: its indentation says little about the unit


@dataclass(frozen=True)
class Program:
    source: str
    newline: str
    unit: str
    # (rendered line without its newline, tag), in order
    lines: Tuple[Tuple[str, str], ...]
    # Whether a reader can see the indentation unit: some block is indented.
    unit_visible: bool = True

    def lines_with_tag(self, *tags: str) -> List[str]:
        return [text for text, tag in self.lines if tag in tags]


@dataclass(frozen=True)
class _Style:
    variable: str  # how sites spell the constructor: Variable, Var, ag.Variable, ...
    allow_async: bool


names = st.sampled_from(NAMES)
comments = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(lambda w: "# " + " ".join(w))
# A statement's own trailing comment (often the last line of a region the fix wraps).
trailing = st.one_of(st.just(""), comments.map(lambda c: "  " + c))


@st.composite
def _simple(draw, style: _Style) -> List[Line]:
    """A statement that never mentions volatile: it must come out unchanged (KEEP)."""
    a, b = draw(names), draw(names)
    options = [
        f"{a} = model({b})", f"{a} = {b} + 1", f"print({a})", f"total += {a}.sum().item()",
        "pass", f"{a} = [{b} * k for k in range(3)]", f"{a} = {{k: {b} for k in 'ab'}}",
        f"{a} = lambda v: model(v)", f"{a}, {b} = {b}, {a}", f"{a} = {b}.data",
        f"{a} = criterion({a}, {b})", "loss.backward()", "optimizer.step()",
        f"{a} = {b}.cuda()", f"del {a}", f"assert {a} is not None",
    ]
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return [Line(0, draw(comments))]
    if kind == 1:
        return [Line(0, draw(st.sampled_from(["", "\x0c"])))]
    if kind == 2:  # a call with a comment in its argument list
        return [Line(0, f"{a} = model({b},  {draw(comments)}"), Line(1, f"{draw(names)})", continuation=True)]
    if kind == 3:  # a multi-line string: its inner lines are data
        inner = draw(st.sampled_from(["    indented text", "\tx = Variable(x)", "", "plain"]))
        return [Line(0, f'{a} = """first'), Line(0, inner, EXACT), Line(0, 'last"""', EXACT)]
    return [Line(0, draw(st.sampled_from(options)) + draw(trailing))]


@st.composite
def _site(draw, style: _Style) -> List[Line]:
    """A statement with a legacy site (FREE lines: the fix may rewrite them)."""
    a, b, var = draw(names), draw(names), style.variable
    options = [
        f"{a} = {var}({b}, volatile=True)", f"{a} = model({var}({b}, volatile=True))",
        f"{a} = {var}({b}.cuda(), volatile=True)", f"{a} = {var}({b}, volatile=False)",
        f"{a} = {var}({b})", f"{a} = {var}({b}.data)", f"{a} = {var}({b}, requires_grad=True)",
        f"{a} = [model({var}(v, volatile=True)) for v in {b}]", f"flag = {b}.volatile",
        f"{a} = {var}({b}, volatile=not training)", f"{a}.volatile = True",
        f"{a} = {var}({b}, True, True)" if var.endswith("Variable") else f"{a} = {var}({b})",
    ]
    if style.allow_async:
        options.append(f"{a} = {b}.cuda(async=True)")
    kind = draw(st.integers(0, 5))
    if kind == 0:  # comment inside the argument list of a volatile call
        return [Line(0, f"{a} = {var}({b},  {draw(comments)}", FREE), Line(1, "volatile=True)", FREE, True)]
    return [Line(0, draw(st.sampled_from(options)) + draw(trailing), FREE)]


def _indent(lines: List[Line], by: int = 1) -> List[Line]:
    return [Line(line.depth + by, line.text, line.tag, line.continuation) for line in lines]


@st.composite
def _block(draw, style: _Style, depth: int, in_def: bool = False) -> List[Line]:
    count = draw(st.integers(1, 3))
    out: List[Line] = []
    for _ in range(count):
        out.extend(draw(_statement(style, depth, in_def)))
    if all(line.text.strip() in ("", "\x0c") or line.text.startswith("#") for line in out):
        out.append(Line(0, "pass"))  # comments and blank lines alone are no block
    return out


@st.composite
def _statement(draw, style: _Style, depth: int, in_def: bool) -> List[Line]:
    choice = draw(st.integers(0, 9 if depth < 3 else 2))
    if choice == 0:
        return draw(_simple(style))
    if choice in (1, 2):
        return draw(_site(style))
    a, b = draw(names), draw(names)
    if choice == 3:
        return [Line(0, f"for {a} in {b}:")] + _indent(draw(_block(style, depth + 1, in_def)))
    if choice == 4:
        head = [Line(0, f"if {a}:")] + _indent(draw(_block(style, depth + 1, in_def)))
        if draw(st.booleans()):
            head += [Line(0, "else:")] + _indent(draw(_block(style, depth + 1, in_def)))
        return head
    if choice == 5:
        header = draw(st.sampled_from([f"with open({a}) as f:", "with torch.no_grad():",
                                       f"while {a}:"]))
        return [Line(0, header)] + _indent(draw(_block(style, depth + 1, in_def)))
    if choice == 6:
        return ([Line(0, "try:")] + _indent(draw(_block(style, depth + 1, in_def)))
                + [Line(0, "except Exception as e:  # noqa")]
                + _indent(draw(_block(style, depth + 1, in_def))))
    if choice == 7 and in_def:
        return [Line(0, draw(st.sampled_from([f"return {a}", f"yield {a}"])))]
    if choice == 8:
        return [Line(0, f"class Net{depth}(object):")] + _indent(draw(_function(style, depth + 1)))
    return draw(_function(style, depth))


@st.composite
def _function(draw, style: _Style, depth: int) -> List[Line]:
    decorators = draw(st.lists(st.sampled_from(["@staticmethod", "@torch.no_grad()", "@cached",
                                                "@register('eval')"]), max_size=2, unique=True))
    keyword = draw(st.sampled_from(["def", "def", "def", "async def"]))
    params = draw(st.lists(names, min_size=1, max_size=3, unique=True))
    if draw(st.booleans()):  # a parameter list spread over lines, with a comment
        head = [Line(0, f"{keyword} f{depth}(model,  {draw(comments)}"),
                Line(2, ", ".join(params) + "):", continuation=True)]
    else:
        head = [Line(0, f"{keyword} f{depth}(model, {', '.join(params)}):")]
    body = draw(_block(style, depth + 1, in_def=True))
    if draw(st.booleans()):
        body = [Line(0, '"""Docstring of a legacy function."""')] + body
    if keyword == "async def":
        # `yield` and `return value` inside `async def` are other programs; keep it simple.
        body = [line if not line.text.startswith(("yield ", "return ")) else Line(line.depth, "pass")
                for line in body]
    return [Line(0, d) for d in decorators] + head + _indent(body)


_IMPORT_STYLES = (
    ("from torch.autograd import Variable", "Variable"),
    ("from torch.autograd import Variable as Var", "Var"),
    ("import torch.autograd as ag", "ag.Variable"),
    ("from torch import autograd", "autograd.Variable"),
)


@st.composite
def legacy_programs(draw, allow_async: bool = True) -> Program:
    """A valid legacy module (valid once `async=` is read as `non_blocking=`)."""
    import_line, variable = draw(st.sampled_from(_IMPORT_STYLES))
    style = _Style(variable=variable, allow_async=allow_async)
    header: List[Line] = []
    if draw(st.booleans()):
        header.append(Line(0, '"""A legacy PyTorch 0.3 script."""'))
    if draw(st.booleans()):
        header.append(Line(0, "import torch", FREE))
    header.append(Line(0, import_line, FREE))
    header.append(Line(0, ""))
    body: List[Line] = []
    for _ in range(draw(st.integers(1, 3))):
        body.extend(draw(_statement(style, 0, False)))
    unit = draw(st.sampled_from(["    ", "  ", "\t"]))
    newline = draw(st.sampled_from(NEWLINES))
    rendered: List[Tuple[str, str]] = []
    for line in header + body:
        text = line.text if line.tag == EXACT else unit * line.depth + line.text
        if line.tag == KEEP and line.text and draw(st.integers(0, 5)) == 0:
            text += draw(st.sampled_from([" ", "\t", "  "]))  # trailing whitespace
        rendered.append((text, line.tag))
    ends = [_line_end(draw, newline) for _ in range(len(rendered))]
    for i in range(len(ends) - 1):
        if ends[i] == "\r" and not rendered[i + 1][0] and ends[i + 1].startswith("\n"):
            ends[i] = "\r\n"  # CR, empty line, LF would read as one CRLF: a line fewer
    source = "".join(text + end for (text, _), end in zip(rendered[:-1], ends))
    source += rendered[-1][0]
    if draw(st.integers(0, 4)):
        source += ends[-1]
    # A block shows the unit; with none, an indented continuation line still shows its
    # character (a file indented only with tabs gets a tab for a new block).
    visible = any(line.depth and line.tag != EXACT and (not line.continuation or unit == "\t")
                  for line in header + body)
    return Program(source=source, newline=newline, unit=unit, lines=tuple(rendered),
                   unit_visible=visible)


@st.composite
def mutated_programs(draw) -> str:
    """A legacy program damaged at random: for 'never crashes' properties."""
    source = draw(legacy_programs()).source
    start = draw(st.integers(0, len(source)))
    end = draw(st.integers(start, min(len(source), start + 20)))
    junk = draw(st.sampled_from(["", "(", ")", '"', "'''", "\t", "print 'x'\n", "\\", ":",
                                 "async=", "volatile", "\x0c", "\r", "Variable(", "`", "\ufeff"]))
    return source[:start] + junk + source[end:]


_FRAGMENTS = (
    "from torch.autograd import Variable\n", "import torch\n", "Variable(", "x", "y", ", volatile=True",
    ", volatile=False", ")", "(", "[", "]", ",", "\n", "\r\n", "\r", "    ", "\t", "'", '"""', "# c",
    "async=", ".cuda(", ".volatile", " = ", "def f(x):\n", "for b in loader:\n", ":", "\\", "with ",
    "torch.no_grad()", "@torch.no_grad()\n", "return ", "yield ", "print ", "lambda: ", "\x0c", "0777",
    "`", "if ", "else", "class C:\n", "\ufeff", "\x00",
)


def legacy_soup() -> st.SearchStrategy[str]:
    """Token soup that passes volfix's cheap prefilter, so the parser and rules really run."""
    piece = st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=3))
    return st.lists(piece, max_size=40).map(
        lambda parts: "from torch.autograd import Variable\n" + "".join(parts))
