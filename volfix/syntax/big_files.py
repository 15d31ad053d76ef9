"""Big module-level scripts (exported notebooks, generated code) in bounded time and memory.

A 120k-line script holds about a million AST nodes: half a gigabyte, and seconds to walk,
though volfix only cares about the few statements that mention legacy autograd and what
they flow into. Such a file is parsed in chunks of top-level statements; a chunk's statements
are kept whole when they matter, and the others become *stubs*: a node on the same lines that
binds the same names and reads the names that matter. Every layer after parsing (rules, data
flow, regions, fixes) works on the resulting module as on any other.

A top-level statement matters when its text holds a word of the legacy API or an import
(`TRIGGERS`), when it reads a name that a statement that matters binds or whose attribute
it sets (`x.volatile = True`), or an alias a legacy import binds (`Variable as V`): the
data flow may reach it, followed in source order; or when it calls a function that matters. The stubs
keep what the rest needs: line ranges (a region never swallows a stub it cannot see), the
names bound (a later rebinding ends the taint) and the names read (a value used after a
region is noticed). One-line assignments from `torch.` (`x = torch.randn(64, 4)`) are kept
whole: they tell that a name holds a plain tensor.

Chunks are cut at lines that may start a top-level statement and grown until they parse, so
a chunk never ends inside a string or a bracket. A file that does not parse as a whole is
left to the ordinary parser, which reports the error.
"""
from __future__ import annotations

import ast
import bisect
import re
from typing import Iterable, List, Optional, Set, Tuple

from .async_keywords import PLACEHOLDER  # the parsed text has `async=` masked
from .names import iter_statements, target_names, written_roots
from .positions import physical_lines

BIG_FILE_LINES = 10_000  # from this many lines on, a module is parsed in chunks
CHUNK_LINES = 4_000
# Words whose presence makes a statement matter (rules' triggers, grad-mode regions and the
# version tests that gate them, `IS_TORCH_04 = ... torch.__version__ ...`, imports).
# `_loss(`, `entropy(`, `torch.sum(`, `torch.mean(`: a function returning a loss or a full
# reduction, whose result VF401 follows (`loss_function(...).data[0]`); `.sum(0)`: the
# ImageNet example's `accuracy()`, a list of sums over one dimension (`prec1[0]`); a torchvision
# dataset of class numbers and `parse_args(`: what VF401's ranks read (`flow.ranks`: 1-dim
# label batches, options that are numbers) and a script's `__main__` guard (its calls tell parameters);
# `store_true` options: bools a `set_grad_enabled` flag may be spelled with (`flow.booleans`);
# `.max(`, `.min(`: `score, idx = row.max(0)`, whose 0-dim `idx[0]` VF401 reads, and
# `tolist()[0]` and `.data.cpu()[` (`loss.data.tolist()[0]`, `loss.data.cpu()[0]`), which it reads too;
# `Tensor([`, `ones(1`, `tensor([`, `Tensor(1)`: a one-element gradient VF403 follows
# (`one = torch.FloatTensor([1])`), and so the `backward` calls given it; `retain_variables` and
# `.multinomial(`: the 0.4 renames VF302 and VF303 rewrite; `.reinforce(`: VF304; `Function`: a legacy
# autograd Function (VF501); `cat(`: a join of 0-dim values (VF404); `Tensor(`, `from_numpy(`,
# `arange(`, `randperm(`, `.data.`: a plain tensor whose element may key a dict (VF405); `str(`:
# the text of such an element (VF408); `.byte()`, `uint8`: a ByteTensor mask (VF409); `topk(`, `.sort(`,
# `argmax`, `argmin`, `.long()`, `nonzero(`: an integer tensor divided by an integer (VF410).
TRIGGERS = ("Variable", "volatile", "async", PLACEHOLDER, "autograd", "no_grad", "grad_enabled",
            "inference_mode", "__version__", "import", ".data[", "Loss", "noqa", "volfix",
            "_loss(", "entropy(", "torch.sum(", "torch.mean(", ".sum(0)", "MNIST(", "CIFAR10(", "CIFAR100(",
            "SVHN(", "STL10(", "USPS(", "ImageFolder(", "parse_args(", "__main__", "store_true",
            "store_false", ".max(", ".min(", "Tensor([", "ones(1", "tensor([", "Tensor(1)", "tolist()[0]",
            ".data.cpu()[", "retain_variables", ".multinomial(", "Function", ".reinforce(", "cat(",
            "Tensor(", "from_numpy(", "arange(", "randperm(", ".data.", "str(", ".byte()", "uint8",
            "topk(", ".sort(", "argmax", "argmin", ".long()", "nonzero(")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NN_MODULE = re.compile(r"\bnn\.[A-Z]")  # `nn.Linear(...)`
_NOT_A_START = re.compile(r"(?:else|elif|except|finally|case)\b|[)\]}]|$|\s|#")


# The name an opaque chunk binds: code volfix did not parse (`volfix.fixes.regions` never
# lets a region cover it, as it cannot know what the code binds).
OPAQUE = "__volfix_opaque__"


def parse_big(text: str, lines: List[str], extra_words: Iterable[str] = ()) -> Optional[ast.Module]:
    """The module with irrelevant top-level statements stubbed, or None when the chunks that
    matter do not parse (the caller then parses the whole text and reports the error)."""
    triggers = tuple(TRIGGERS) + tuple(extra_words)
    starts = _line_offsets(lines)
    in_string = _string_rows(lines)
    body: List[ast.stmt] = []
    # Functions and classes whose text holds a trigger: their callers matter, wherever they are.
    relevant_names: Set[str] = _triggered_definitions(lines, triggers)
    row = 0  # 0-based line where the next chunk starts
    total = len(lines)
    unparsed: List[Tuple[int, int, int]] = []  # (place in body, first row, end) of the chunks not parsed
    read: Set[str] = set()  # the words of the chunks parsed
    while row < total:
        end = _next_start(lines, min(total, row + CHUNK_LINES), in_string)
        source = text[starts[row]:starts[end] if end < total else len(text)]
        words = set(_IDENTIFIER.findall(source))
        if not any(t in source for t in triggers) and not (words & relevant_names):
            unparsed.append((len(body), row, end))
            row = end
            continue
        read |= words
        chunk = None
        while chunk is None:
            try:
                chunk = ast.parse(text[starts[row]:starts[end] if end < total else len(text)])
            except (SyntaxError, ValueError):
                if end >= total:
                    return None
                end = _next_start(lines, end + 1, in_string)
            except (RecursionError, MemoryError):
                return None
        for stmt in chunk.body:
            body.append(_decide(stmt, row, text, starts, triggers, relevant_names))
        del chunk
        row = end
    for place, first, end in reversed(unparsed):  # what the parsed chunks read is known now
        body[place:place] = _unparsed(first, end, lines, in_string, starts, read)
    return ast.Module(body=body, type_ignores=[])


# `lam = 1e-3`, `k = 0`, `losses = []`, `net = nn.Linear(4, 2)`, `classes = {0: "ant"}` at
# column 0 (`ptn, ecc = nn.Linear(3, 4), nn.Linear(4, 2)` too): a number, an empty container, a
# module, a one-line dict or set or a lambda a name holds
# (an element of a tensor may key it: VF405), kept from a chunk not parsed.
_NUMBER_LINE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:[ \t]*,[ \t]*[A-Za-z_][A-Za-z0-9_]*)*[ \t]*=[ \t]*"
                          r"(?:-?(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][-+]?\d+)?"
                          r"|\[\]|\{[^\r\n#]*\}|\(\)|(?:torch\.)?nn\.[A-Z]\w*\([^\r\n#]*\)|lambda\b[^\r\n#]*)"
                          r"[ \t]*(?:#[^\r\n]*)?\r?$",
                          re.M)


def _unparsed(row: int, end: int, lines: List[str], in_string: List[bool],
              starts: Optional[List[int]] = None, read: Optional[Set[str]] = None) -> List[ast.stmt]:
    """A chunk nothing in which matters, as opaque statements over its lines, but for the
    one-line assignments of numbers, empty containers, dict or set displays and modules in it
    (`gamma = 0.5`, `losses = []`, `classes = {0: "ant"}`, `classifier = nn.Linear(4, 2)`)
    to a name a parsed chunk reads (`read`; None: any): a hyperparameter set far above the loop
    that reads it (`k = k + lam * (...)`) tells that a value is a number, as a chunk of a
    parsed file keeps them too (`_decide`)."""
    out: List[ast.stmt] = []
    start = row
    starts = starts if starts is not None else _line_offsets(lines)
    chunk = "".join(lines[row:end])  # one C-speed scan finds the candidate lines
    for match in _NUMBER_LINE.finditer(chunk):
        i = bisect.bisect_right(starts, starts[row] + match.start()) - 1
        if in_string[i] or _inside_brackets(lines, i, row, end) \
                or read is not None and not set(_IDENTIFIER.findall(lines[i].split("=", 1)[0])) & read:
            continue
        try:
            stmt = ast.parse(lines[i]).body[0]
        except (SyntaxError, ValueError, IndexError):
            continue
        if i > start and any(line.strip() for line in lines[start:i]):
            out.append(_opaque(start, i, lines))
        out.append(_moved(stmt, i))
        start = i + 1
    if start < end and any(line.strip() for line in lines[start:end]):
        out.append(_opaque(start, end, lines))
    return out


def _inside_brackets(lines: List[str], i: int, row: int, end: int) -> bool:
    """`f(\na=1\n)`: a keyword argument at column 0, by its neighbours (the line before ends
    open, or the line after closes)."""
    before = next((line.split("#")[0].rstrip() for line in reversed(lines[row:i]) if line.strip()), "")
    after = next((line.lstrip() for line in lines[i + 1:end] if line.strip()), "")
    return before.endswith(("(", "[", "{", ",", "\\")) or after.startswith((")", "]", "}"))


def _opaque(row: int, end: int, lines: List[str]) -> ast.stmt:
    """A chunk nothing in which matters: one statement over its lines."""
    last = end - 1
    while last > row and not lines[last].strip():
        last -= 1
    where = dict(lineno=row + 1, col_offset=0, end_lineno=last + 1, end_col_offset=len(lines[last].rstrip("\r\n")))
    return ast.Assign(targets=[ast.Name(id=OPAQUE, ctx=ast.Store(), **where)],
                      value=ast.Constant(value=None, **where), **where)


def is_opaque(stmt: ast.stmt) -> bool:
    """A chunk of a big file that volfix did not parse."""
    return isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == OPAQUE


_METHOD = re.compile(r"[ \t]+(?:async[ \t]+)?def[ \t]+([A-Za-z_][A-Za-z0-9_]*)")
_DEFINITION = re.compile(r"(?:async\s+)?(?:def|class)\s+([A-Za-z_][A-Za-z0-9_]*)")


_ASSIGNED = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)[ \t]*=[^=]")


def _triggered_definitions(lines: List[str], triggers) -> Set[str]:
    """Names of top-level defs and classes whose lines hold a trigger (from the text alone:
    the nearest `def`/`class` at column 0 above each trigger), of the methods holding one, and,
    to a fixpoint, of the definitions that name one of those (`class Batch` calling
    `field.process(...)`, whose `Field.process` makes a volatile value; `evaluate()` calling
    `Batch(...)`); and what VF401's reads may ask about: the definitions a line holding one
    (`.data[`, `[0]`) names, and those they name in turn (`ssim(sr, hr).data[0]` reads what
    `ssim` returns, which is `_ssim(...)`)."""
    out: Set[str] = set()
    words: dict = {}
    read: Set[str] = set()  # the words of the lines holding a VF401 read
    made: Set[str] = set()  # the names a module-level line holding a trigger assigns
    methods: dict = {}  # class -> the names of its methods
    instances: dict = {}  # module-level name -> the words of what it is bound to
    current: Optional[str] = None
    method: Optional[str] = None
    for line in lines:
        match = _DEFINITION.match(line)
        if match:
            current, method = match.group(1), None
        elif line[:1] not in (" ", "\t", "\r", "\n", "#", "", ")", "]", "}", "@"):
            current = method = None
        elif current is not None:
            inner = _METHOD.match(line)
            if inner:
                method = inner.group(1)
                if not method.startswith("__"):
                    methods.setdefault(current, set()).add(method)
        if ".data[" in line or "[0]" in line:  # a VF401 read: what it calls matters
            read.update(_IDENTIFIER.findall(line))
        if current is None:
            assigned = _ASSIGNED.match(line)
            if assigned and any(t in line for t in triggers):  # `q = Variable(q, volatile=True)`
                made.add(assigned.group(1))
            if assigned:  # `net = Net()`: a def reading `net` computes with a `Net`
                instances.setdefault(assigned.group(1), set()).update(_IDENTIFIER.findall(line[assigned.end():]))
            continue
        words.setdefault(current, set()).update(_IDENTIFIER.findall(line))
        if any(t in line for t in triggers):
            out.add(current)
            if method is not None:
                out.add(method)
    # A def reading such a module-level name as a global computes with it when called
    # (`rank_all = eval()` after `ques_input = Variable(q, volatile=True)`), wherever it is.
    out.update(name for name, used in words.items() if used & made)
    grown = True
    while grown:
        grown = False
        for name, used in words.items():
            if name not in out and used & out:
                out.add(name)
                grown = True
        # A class whose method a definition that matters calls (`bot.observe(caption=c)`: does
        # `Bot.observe` keep the value on the object?)
        called = {w for n in out for w in words.get(n, ())}
        for name, defined in methods.items():
            if name not in out and defined & called:
                out.add(name)
                grown = True
        # The class of a module-level instance such a definition reads (`net.ecc(h)` after
        # `net = Net()`: is `Net` a module?)
        for name in called & set(instances):
            for cls in instances[name] & set(words) - out:
                out.add(cls)
                grown = True
    callees = set(out) | {n for n in read if n in words}
    while callees:
        out |= callees
        callees = {n for c in callees for n in words.get(c, ()) if n in words and n not in out}
    return out


def _line_offsets(lines: List[str]) -> List[int]:
    out = [0]
    for line in lines:
        out.append(out[-1] + len(line))
    return out


def _next_start(lines: List[str], row: int, in_string: Optional[List[bool]] = None) -> int:
    """The first line at or after `row` that may start a top-level statement (not inside a
    triple-quoted string)."""
    while row < len(lines):
        line = lines[row]
        if (line[:1] not in (" ", "\t", "\f", "\r", "\n", "#", "") and not _NOT_A_START.match(line)
                and not (in_string and in_string[row])):
            return row
        row += 1
    return len(lines)


def _string_rows(lines: List[str]) -> List[bool]:
    """For each line: does it start inside a triple-quoted string? (A scan of the quotes
    alone: good enough to keep chunk boundaries out of docstrings; a wrong guess only makes
    a chunk fail to parse, and the whole file is then parsed at once.)"""
    out = []
    open_quote: Optional[str] = None
    for line in lines:
        out.append(open_quote is not None)
        position = 0
        while True:
            if open_quote is not None:
                found = line.find(open_quote, position)
                if found < 0:
                    break
                open_quote, position = None, found + 3
                continue
            hits = [(line.find(q, position), q) for q in ('"""', "'''")]
            hits = [(i, q) for i, q in hits if i >= 0]
            if not hits:
                break
            found, quote = min(hits)
            if "#" in line[position:found] and line[position:found].count('"') % 2 == 0 \
                    and line[position:found].count("'") % 2 == 0:
                break  # a comment: the rest of the line is no code
            open_quote, position = quote, found + 3
    return out


def _decide(stmt: ast.stmt, row: int, text: str, starts: List[int], triggers, relevant: Set[str]) -> ast.stmt:
    """The statement itself (moved to its lines in the file) when it matters, else its stub."""
    first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())]) - 1 + row
    last = stmt.end_lineno + row  # type: ignore[attr-defined]
    source = text[starts[first]:starts[last] if last < len(starts) else len(text)]
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        # For name resolution. An alias of a legacy name (`from torch.autograd import
        # Variable as V`), or of one whose call is a trigger (`from torch import ByteTensor as
        # BT`: `Tensor(`), makes its readers matter, as the name itself would.
        relevant.update(alias.asname for alias in stmt.names
                        if alias.asname and any(t in alias.name + "(" for t in triggers))
        return _moved(stmt, row)
    triggered = any(t in source for t in triggers)
    reads = set(_IDENTIFIER.findall(source)) & relevant if relevant else set()
    if not triggered and isinstance(stmt, ast.Assign) and reads and all(isinstance(t, ast.Name) for t in stmt.targets):
        # `x = 5` rebinds a name that mattered: it no longer does (unless the value reads one).
        value = set(_IDENTIFIER.findall(source[_column_offset(source, stmt, stmt.value):]))
        if not value & relevant:
            relevant.difference_update(t.id for t in stmt.targets)
            return _stub(stmt, set(), row)
    if reads or triggered:
        relevant.update(_top_level_stores(stmt))
        if triggered:  # `x.volatile = True` makes `x` matter from here on (and `features` that a def fills)
            relevant.update(_attribute_roots(stmt))
        return _moved(stmt, row)
    if isinstance(stmt, ast.Assign) and stmt.lineno == stmt.end_lineno and (  # type: ignore[attr-defined]
            "torch." in source or _NN_MODULE.search(source) or isinstance(stmt.value, ast.Constant)
            or _counted(stmt.value) or _empty(stmt.value) or isinstance(stmt.value, _HASHED + (ast.Lambda,))):
        # `x = torch.randn(64, 4)`: one line that says what a name holds (a plain tensor
        # makes `Variable(x)` -> `x` exact), kept whole: a stub would hide it. So is
        # `total_loss = 0` before an accumulating loop: a number, which `total_loss[0]` needs,
        # `n = len(test_loader)`: a number, dividing by which records nothing, and
        # `style_losses = []`: a list whose members are what `.append` adds; `classifier =
        # nn.Linear(4, 2)`: a module, whose output records a graph (a helper's caller feeding
        # it the helper's result makes the helper's region unsafe); `classes = {0: "ant"}`: a dict
        # an element of a tensor may key (VF405); `evaluation = lambda o, t: ...`: what its calls return.
        return _moved(stmt, row)
    return _stub(stmt, reads, row)


_HASHED = (ast.Dict, ast.DictComp, ast.Set, ast.SetComp)


def _empty(value: ast.AST) -> bool:
    return isinstance(value, (ast.List, ast.Tuple, ast.Dict)) and not (value.keys if isinstance(value, ast.Dict)
                                                                       else value.elts)


def _counted(value: ast.AST) -> bool:
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "len"


# Methods that put a value into the container they are called on (`features.append(h)`).
_FILLING = frozenset({"append", "extend", "insert", "add", "update"})


def _attribute_roots(stmt: ast.stmt) -> Set[str]:
    """Names whose attributes or items a statement assigns (`x.volatile = True` -> x); for a
    function, also the module-level containers it fills (`features.append(h)`: a reader of
    `features` may compute with what the function's region made)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        out = set()
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _FILLING \
                    and isinstance(node.func.value, ast.Name):
                out.add(node.func.value.id)
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                out.update(written_roots(node))
        return out - {"self", "cls"}
    return set(written_roots(stmt))


def _moved(stmt: ast.stmt, row: int) -> ast.stmt:
    if row:
        ast.increment_lineno(stmt, row)
    return stmt


def _column_offset(source: str, stmt: ast.stmt, node: ast.AST) -> int:
    """Offset in `source` (the statement's lines) where `node` starts."""
    lines = physical_lines(source)
    row = node.lineno - stmt.lineno  # type: ignore[attr-defined]
    if row >= len(lines):
        return len(source)
    prefix = sum(len(line) for line in lines[:row])
    return prefix + len(lines[row].encode("utf-8")[:node.col_offset].decode("utf-8", "replace"))  # type: ignore[attr-defined]


def _stub(stmt: ast.stmt, reads: Set[str], row: int) -> ast.stmt:
    """A statement on the same lines that binds what `stmt` binds at module level and reads
    `reads`: enough for the data flow, the regions and their safety checks."""
    stores = sorted(_top_level_stores(stmt))
    where = dict(lineno=stmt.lineno + row, col_offset=stmt.col_offset, end_lineno=stmt.end_lineno + row,  # type: ignore[attr-defined]
                 end_col_offset=stmt.end_col_offset)  # type: ignore[attr-defined]
    value = ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Load(), **where) for n in sorted(reads)], ctx=ast.Load(), **where)
    if stores:
        target = ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Store(), **where) for n in stores], ctx=ast.Store(), **where)
        return ast.Assign(targets=[target], value=value, **where)
    if reads:
        return ast.Expr(value=value, **where)
    return ast.Pass(**where)


_SIMPLE_STATEMENTS = (ast.Expr, ast.Pass, ast.Return, ast.Raise, ast.Assert, ast.Delete, ast.Break, ast.Continue,
                      ast.Global, ast.Nonlocal, ast.Import, ast.ImportFrom)


def _top_level_stores(stmt: ast.stmt) -> Set[str]:
    """The names a module-level statement binds (its nested statements' too, not inside
    defs): a walk over statements only, never over expressions."""
    kind = type(stmt)
    if kind in _SIMPLE_STATEMENTS:
        return set()
    if kind is ast.Assign:
        out: Set[str] = set()
        for target in stmt.targets:  # type: ignore[attr-defined]
            out.update(target_names(target))
        return out
    if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        return {stmt.name}  # type: ignore[attr-defined]
    out = set()
    for node in iter_statements([stmt]):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                out.update(target_names(target))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            out.update(target_names(node.target))
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            out.update(target_names(node.target))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    out.update(target_names(item.optional_vars))
    return out
