"""Shared pieces of the real-world evaluation scripts (evaluate.py, compare_human.py, leftovers.py).

Nothing here imports volfix: the scripts measure a volfix checkout from the outside, by running
its command line on copies of the repositories (whole-project runs, as users run `volfix fix .`),
and read the results with the standard library only.

* sources: a `.py` file, or a notebook whose code cells are joined into one virtual Python file
  (one line per cell line, magics masked, unparsable cells blanked; `UnitText.where(row)` maps a
  row back to (cell, row in cell), with cells numbered 1-based over all cells as volfix does);
* parsing that tolerates `async=` keywords (masked with a same-length name, columns unchanged);
* grad-mode regions: `with torch.no_grad():`, `set_grad_enabled(...)`, `inference_mode()`,
  `X if c else contextlib.nullcontext()`, decorators, and project helpers whose name says
  `no_grad` (`_get_no_grad_ctx_mgr()`, `torch_no_grad()`) for regions a human wrote;
* a line map between two versions of a file (indentation ignored);
* running volfix: `python -m volfix` with the PYTHONPATH the caller gives, so that any
  checkout can be measured (`PYTHONPATH=/tmp/volfix-<sha> python scripts/evaluation measure ...`).
"""
from __future__ import annotations

import ast
import difflib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tokenize
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

SKIP_DIRS = {".git", "__pycache__", ".ipynb_checkpoints", "build", "site-packages", "venv", ".venv"}
SOURCE_EXTS = (".py", ".ipynb")
GRAD_FUNCS = {"no_grad", "set_grad_enabled", "inference_mode"}
# regions written by hand through a project helper: `with _get_no_grad_ctx_mgr():`
HUMAN_GRAD_NAME = re.compile(r"no_?grad|grad_enabled|inference_mode", re.I)
MAGIC = re.compile(r"^(\s*)([%!?])", re.M)


# ---------------------------------------------------------------------------------------
# sources


def mask_async(text: str) -> str:
    """Rename `async=` keyword arguments to `asyn_=` (same length) so Python 3.7+ parses them."""
    if "async" not in text:
        return text
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return re.sub(r"\basync(\s*=(?!=))", r"asyn_\1", text)
    sig = [t for t in toks if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT,
                                             tokenize.INDENT, tokenize.DEDENT)]
    lines = text.splitlines(keepends=True)
    for i, tok in enumerate(sig[1:-1], 1):
        if tok.string == "async" and sig[i + 1].string == "=" and sig[i - 1].string in ("(", ","):
            row, col = tok.start
            line = lines[row - 1]
            lines[row - 1] = line[:col] + "asyn_" + line[col + 5:]
    return "".join(lines)


def parse(text: str) -> Optional[ast.Module]:
    try:
        return ast.parse(mask_async(text))
    except (SyntaxError, ValueError):
        return None


@dataclass
class UnitText:
    """The Python text of a source file; for a notebook, its code cells joined."""

    text: str
    cells: Optional[List[Tuple[int, int, int]]] = None  # (cell number, first row, last row) in `text`
    broken_cells: List[int] = field(default_factory=list)  # code cells that do not parse (blanked)

    def where(self, row: int) -> Tuple[Optional[int], int]:
        """Row of the virtual text -> (cell number or None, row inside the cell)."""
        if self.cells is None:
            return None, row
        for cell, first, last in self.cells:
            if first <= row <= last:
                return cell, row - first + 1
        return None, row

    def row_of(self, cell: Optional[int], row: int) -> int:
        if self.cells is None or cell is None:
            return row
        for c, first, _last in self.cells:
            if c == cell:
                return first + row - 1
        return row


def notebook_code_cells(data: str) -> Optional[List[Tuple[int, str]]]:
    """(cell number, source) of the code cells; numbers count all cells from 1, as volfix's."""
    try:
        nb = json.loads(data)
    except ValueError:
        return None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return None
    out = []
    for i, cell in enumerate(nb["cells"], 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        out.append((i, "".join(src) if isinstance(src, list) else str(src)))
    return out


def notebook_as_python(data: str) -> Optional[UnitText]:
    cells = notebook_code_cells(data)
    if cells is None:
        return None
    parts: List[str] = []
    spans = []
    broken = []
    row = 1
    for number, src in cells:
        masked = MAGIC.sub(r"\1#\2", src)
        lines = masked.split("\n")
        if masked.endswith("\n"):
            lines = lines[:-1]
        if not lines:
            lines = [""]
        if parse("\n".join(lines) + "\n") is None:
            broken.append(number)
            lines = ["#" + ln for ln in lines]
        spans.append((number, row, row + len(lines) - 1))
        parts.extend(lines)
        row += len(lines)
    return UnitText("\n".join(parts) + "\n", spans, broken)


def read_text(path: str) -> str:
    with open(path, "rb") as fh:
        data = fh.read()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def read_unit(path: str) -> Optional[UnitText]:
    """The Python text of `path` (None: a notebook that is not JSON, or no such file)."""
    if not os.path.isfile(path):
        return None
    text = read_text(path)
    if path.endswith(".ipynb"):
        return notebook_as_python(text)
    return UnitText(text)


def iter_sources(root: str) -> Iterator[str]:
    """Relative paths of the `.py`/`.ipynb` files under `root` (sorted, skipping volfix's skips)."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            if name.endswith(SOURCE_EXTS):
                yield os.path.relpath(os.path.join(dirpath, name), root)


# ---------------------------------------------------------------------------------------
# trees


def parents_of(tree: ast.AST) -> Dict[ast.AST, ast.AST]:
    par = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            par[child] = node
    return par


def dotted(node: ast.AST) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def callee_name(call: ast.AST) -> str:
    """Last name of a call's callee (`torch.no_grad()` -> `no_grad`), or ''."""
    if not isinstance(call, ast.Call):
        return ""
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def is_grad_ctx(expr: ast.AST, human: bool = False) -> bool:
    """A context expression (or decorator) that switches recording off or decides it.

    `human=True` also accepts a project helper whose name says so (`_get_no_grad_ctx_mgr()`,
    `torch_no_grad()`, `no_grad_context()`): regions written by the repositories' authors."""
    if isinstance(expr, ast.IfExp):
        return is_grad_ctx(expr.body, human) or is_grad_ctx(expr.orelse, human)
    name = callee_name(expr) if isinstance(expr, ast.Call) else (
        expr.attr if isinstance(expr, ast.Attribute) else expr.id if isinstance(expr, ast.Name) else "")
    if name in GRAD_FUNCS:
        return True
    return human and bool(name) and bool(HUMAN_GRAD_NAME.search(name)) and name != "enable_grad"


def region_header(node: ast.AST, human: bool = False) -> bool:
    """`node` opens a grad-mode region: such a `with`, or a function with such a decorator."""
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return any(is_grad_ctx(it.context_expr, human) for it in node.items)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return any(is_grad_ctx(d, human) for d in node.decorator_list)
    return False


def enclosing_region(node: ast.AST, par: Dict[ast.AST, ast.AST], human: bool = False) -> Optional[ast.AST]:
    """The innermost grad-mode region around `node`, looking no further than its function
    (whose decorator counts); None when the statement records graphs as it stands."""
    p = par.get(node)
    while p is not None:
        if isinstance(p, (ast.With, ast.AsyncWith)) and region_header(p, human):
            return p
        if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return p if region_header(p, human) else None
        if isinstance(p, (ast.Lambda, ast.ClassDef)):
            return None
        p = par.get(p)
    return None


def statement_of(node: ast.AST, par: Dict[ast.AST, ast.AST]) -> Optional[ast.AST]:
    while node is not None and not isinstance(node, ast.stmt):
        node = par.get(node)
    return node


def innermost_stmt_at(tree: ast.AST, row: int) -> Optional[ast.stmt]:
    """The smallest simple statement spanning `row` (compound headers only when nothing smaller)."""
    best = None
    for n in ast.walk(tree):
        if isinstance(n, ast.stmt) and n.lineno <= row <= (n.end_lineno or n.lineno):
            if best is None or (n.end_lineno - n.lineno) <= (best.end_lineno - best.lineno):
                best = n
    return best


# calls that only create, move, convert or reshape tensors, or are plain Python: statements made
# of nothing else compute nothing autograd would record
INERT_CALLS = {
    "from_numpy", "tensor", "as_tensor", "zeros", "ones", "zeros_like", "ones_like", "empty", "full",
    "arange", "linspace", "rand", "randn", "randint", "rand_like", "randn_like", "eye", "Tensor",
    "FloatTensor", "LongTensor", "ByteTensor", "IntTensor", "DoubleTensor", "HalfTensor", "BoolTensor",
    "cuda", "cpu", "to", "float", "long", "double", "half", "int", "byte", "bool", "type", "type_as",
    "unsqueeze", "squeeze", "view", "view_as", "reshape", "expand", "expand_as", "contiguous", "clone",
    "detach", "permute", "transpose", "t", "new", "new_zeros", "new_ones", "new_tensor", "new_full",
    "resize_", "resize_as_", "zero_", "fill_", "copy_", "numpy", "tolist", "item", "size", "dim",
    "numel", "pin_memory", "stack", "cat", "array", "asarray", "astype", "len", "range", "list",
    "tuple", "dict", "set", "str", "print", "zip", "enumerate", "isinstance", "getattr", "hasattr",
    "format", "append", "extend", "Variable", "volatile_variable", "chunk", "split", "narrow",
    "index_select", "masked_select", "cumsum", "sort", "repeat", "join", "info", "debug", "warning",
    "write", "flush",
}
INERT_ROOTS = ("np", "numpy", "math", "random", "logging", "os", "time")


def _reads_parameters(node: ast.AST) -> bool:
    """Arithmetic that may involve a module's parameters (`self.weight * x`, `a @ b`)."""
    for n in ast.walk(node):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult):
            return True
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self":
            return True
    return False


def computes(nodes, grad_names: frozenset = frozenset()) -> bool:
    """Does any of `nodes` (and what they hold) run an operation autograd could record: a call
    that is not in INERT_CALLS, or arithmetic on a module's attributes or on a name in
    `grad_names` (a tensor made with `requires_grad=True`)?"""
    for top in nodes:
        for node in ast.walk(top):
            if isinstance(node, ast.Call):
                root = (dotted(node.func) or "").split(".")[0]
                if callee_name(node) in INERT_CALLS or root in INERT_ROOTS:
                    continue
                return True
            if isinstance(node, ast.BinOp) and (_reads_parameters(node) or any(
                    isinstance(n, ast.Name) and n.id in grad_names for n in ast.walk(node))):
                return True
    return False


def requires_grad_names(tree: ast.AST) -> frozenset:
    """Names some assignment binds to a call with `requires_grad=True` (`w = t.rand(1,
    requires_grad=True)`), or that call `.requires_grad_()`."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and any(
                k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in node.value.keywords):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr == "requires_grad_" and isinstance(node.func.value, ast.Name):
            out.add(node.func.value.id)
    return frozenset(out)


def _stored_names(stmt: ast.AST) -> Tuple[set, set]:
    """Plain names and `self.<attr>` attributes a statement assigns."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(
        stmt, (ast.AnnAssign, ast.AugAssign)) else []
    names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    attrs = {n.attr for t in targets for n in ast.walk(t) if isinstance(n, ast.Attribute)
             and isinstance(n.value, ast.Name) and n.value.id == "self"}
    return names, attrs


_SIMPLE = (ast.For, ast.While, ast.If, ast.With, ast.Try, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def call_at(tree: ast.AST, text: str, row: int, col: int) -> Optional[ast.Call]:
    """The call starting at 1-based `row` and character column `col` (None if there is none)."""
    lines = text.splitlines()
    line = lines[row - 1] if 0 < row <= len(lines) else ""
    byte_col = len(line[:col - 1].encode("utf-8"))
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and n.lineno == row and n.col_offset == byte_col:
            return n
    return None


def consumed_in_statement(node: ast.AST, par: Dict[ast.AST, ast.AST]) -> bool:
    """Does the statement holding `node` compute with its value (`model(Variable(x, ...))`,
    `Variable(x, ...).mm(w)`), as opposed to only moving it (`.cuda()`, a list, an assignment)?
    What happens inside `node`'s own arguments happened before the value existed."""
    p = node
    while not isinstance(p, ast.stmt):
        q = par.get(p)
        if q is None:
            return False
        if isinstance(q, ast.Call):
            root = (dotted(q.func) or "").split(".")[0]
            if callee_name(q) not in INERT_CALLS and root not in INERT_ROOTS:
                return True
        if isinstance(q, ast.BinOp) and _reads_parameters(q):
            return True
        p = q
    return False


LAUNDER = {"data", "detach", "item", "tolist", "numpy"}  # what 0.3 volatility did not survive


def probe_row(tree: ast.AST, par: Dict[ast.AST, ast.AST], row: int, node: Optional[ast.AST] = None) -> Optional[int]:
    """The row whose coverage says whether a volatile site at `row` (the call `node`, when known)
    is restored: the site's own statement when it computes with the value (`out =
    model(Variable(x, volatile=True))`); else the first later statement of the same function that
    computes with a name the value flowed into through plain assignments (`x = Variable(x,
    volatile=True)` ... `feats, _ = x` ... `out = model(feats)`: a region may start after the
    tensor is created); for a `self.<attr>` it was stored in, the first statement of the class's
    other methods that reads it and computes (`self.fixed_z = Variable(z, volatile=True)` in
    `__init__`, `self.G(self.fixed_z)` in `sample()`).

    None when nothing computes with the value and it does not leave the function (it is only
    moved, or read through `.data`/`.item()`...): no region is needed, unwrapping is the fix. A
    value that leaves through `return`/`yield` without a consumer in sight gives the site's row."""
    stmt = innermost_stmt_at(tree, row) if node is None else statement_of(node, par)
    if stmt is None or isinstance(stmt, (ast.For, ast.While, ast.If, ast.With)):
        return row
    if (consumed_in_statement(node, par) if node is not None else computes([stmt])):
        return row
    if isinstance(stmt, (ast.Return, ast.Expr)) or (isinstance(stmt, ast.Assign) and not _stored_names(stmt)[0]
                                                    and not _stored_names(stmt)[1]):
        return row  # returned, yielded, or stored somewhere we do not follow
    names, attrs = _stored_names(stmt)
    fn = function_of(stmt, par)
    scope = fn or tree
    later = sorted((n for n in ast.walk(scope) if isinstance(n, ast.stmt) and n.lineno > (stmt.end_lineno or row)
                    and not isinstance(n, _SIMPLE) and function_of(n, par) is fn), key=lambda n: n.lineno)
    escapes = False
    for cand in later:
        reads = [n for n in ast.walk(cand) if _reads(n, names, attrs) and not _laundered(n, par)]
        if not reads:
            continue
        if computes([cand]):
            return cand.lineno
        if isinstance(cand, ast.Return) or any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(cand)):
            escapes = True
        more, more_attrs = _stored_names(cand)  # the value only moved on: follow it
        names |= more
        attrs |= more_attrs
    cls = par.get(fn) if fn is not None else None
    if attrs and isinstance(cls, ast.ClassDef):
        reads = sorted((n for n in ast.walk(cls) if isinstance(n, ast.stmt) and not isinstance(n, _SIMPLE)
                        and function_of(n, par) is not fn), key=lambda n: n.lineno)
        for cand in reads:
            if any(_reads(n, set(), attrs) for n in ast.walk(cand)) and computes([cand]):
                return cand.lineno
        return row  # stored on the object and not computed with in the class: where it goes is unknown
    return row if escapes else None


def _reads(node: ast.AST, names: set, attrs: set) -> bool:
    """`node` loads one of `names` or `self.<one of attrs>`."""
    if isinstance(node, ast.Name):
        return isinstance(node.ctx, ast.Load) and node.id in names
    return (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and node.attr in attrs
            and isinstance(node.value, ast.Name) and node.value.id == "self")


def _laundered(node: ast.AST, par: Dict[ast.AST, ast.AST]) -> bool:
    """`x.data`, `x.detach()`, `x.item()`...: the read does not carry 0.3's volatility on."""
    up = par.get(node)
    return isinstance(up, ast.Attribute) and up.attr in LAUNDER


def covered_through_callers(tree: ast.AST, par: Dict[ast.AST, ast.AST], fn: Optional[ast.AST],
                            human: bool = True) -> bool:
    """Every call of `fn` in the file (by its simple name: `self.visualize(...)`, `visualize(...)`)
    runs inside a grad-mode region, and there is at least one: the function's body runs with
    recording off although no region is written in it."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and callee_name(n) == fn.name
             and function_of(n, par) is not fn]
    return bool(calls) and all(enclosing_region(statement_of(c, par), par, human) is not None for c in calls)


def region_span(region: ast.AST) -> Tuple[int, int]:
    """First and last row of the statements a region covers (body only)."""
    return region.body[0].lineno, max((s.end_lineno or s.lineno) for s in region.body)


def function_of(node: ast.AST, par: Dict[ast.AST, ast.AST]) -> Optional[ast.AST]:
    p = par.get(node)
    while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)):
        p = par.get(p)
    return p


# ---------------------------------------------------------------------------------------
# versions of a file


def line_map(old: str, new: str) -> Dict[int, int]:
    """1-based row of `old` -> best row of `new` (indentation ignored; a deleted row goes to the
    row where it was, a replaced one to the most similar row of its replacement)."""
    a = [ln.strip() for ln in old.splitlines()]
    b = [ln.strip() for ln in new.splitlines()]
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    res: Dict[int, int] = {}
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        for k in range(i1, i2):
            if tag == "equal":
                res[k + 1] = j1 + (k - i1) + 1
            elif tag == "replace":
                best = max(range(j1, j2), key=lambda j: (difflib.SequenceMatcher(None, a[k], b[j]).ratio(),
                                                         -abs(j - j1 - (k - i1))))
                res[k + 1] = best + 1
            else:
                res[k + 1] = max(j1, 1)
    return res


def changed_rows(old: str, new: str) -> set:
    """Rows of `new` that are not an unchanged row of `old` (indentation ignored)."""
    a = [ln.strip() for ln in old.splitlines()]
    b = [ln.strip() for ln in new.splitlines()]
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    rows = set()
    for tag, _i1, _i2, j1, j2 in sm.get_opcodes():
        if tag != "equal":
            rows.update(range(j1 + 1, j2 + 1))
    return rows


# ---------------------------------------------------------------------------------------
# running volfix


@dataclass
class VolfixRun:
    returncode: int
    diagnostics: List[dict]
    stderr: str

    @property
    def crashed(self) -> bool:
        return self.returncode not in (0, 1)


class Volfix:
    """The volfix command line of the checkout on PYTHONPATH (or the one installed)."""

    def __init__(self, python: str = sys.executable, jobs: Optional[int] = None):
        # -P: do not put the measured tree on sys.path (its `multiprocessing/` or `types.py`
        # would shadow the standard library, which the `volfix` console script never does)
        self.cmd = [python, "-P", "-m", "volfix"] if sys.version_info >= (3, 11) else [python, "-m", "volfix"]
        self.jobs = jobs
        self.env = dict(os.environ, NO_COLOR="1")

    def run(self, sub: str, root: str, extra: Sequence[str] = ()) -> VolfixRun:
        """`volfix <sub> --format json .` inside `root` (a whole-project run, as users do)."""
        args = self.cmd + [sub, "--format", "json", "--no-cache", "--exit-zero", "--color", "never", "--quiet"]
        if self.jobs:
            args += ["--jobs", str(self.jobs)]
        p = subprocess.run(args + list(extra) + ["."], cwd=root, capture_output=True, text=True,
                           env=self.env, timeout=3600)
        try:
            diags = json.loads(p.stdout or "[]")
        except ValueError:
            diags = []
            p = subprocess.CompletedProcess(p.args, 2, p.stdout, (p.stderr or "") + "\n(output is not JSON)")
        for d in diags:
            d["path"] = os.path.relpath(d["filename"], root) if os.path.isabs(d["filename"]) else d["filename"]
        return VolfixRun(p.returncode, diags, p.stderr or "")

    def describe(self) -> str:
        """Version and location of the volfix that runs (and its git commit when it has one)."""
        p = subprocess.run(self.cmd[:1] + ["-c", "import volfix, os; print(volfix.__version__);"
                                           "print(os.path.dirname(os.path.dirname(os.path.abspath(volfix.__file__))))"],
                           capture_output=True, text=True, env=self.env)
        lines = p.stdout.split()
        if len(lines) < 2:
            return f"volfix not importable: {p.stderr.strip()[-200:]}"
        version, where = lines[0], lines[1]
        info = f"volfix {version} from {where}"
        head = subprocess.run(["git", "-C", where, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        if head.returncode == 0 and os.path.isdir(os.path.join(where, ".git")):
            info += f" (git {head.stdout.strip()})"
        return info


def copy_tree(src: str, dst: str) -> None:
    """Copy the source files of `src` (and the files that configure volfix) into a fresh `dst`,
    marked as a project root (an empty `.git`) as the user's checkout of the repository is: volfix
    then reads the copy as a whole project (which files call a function, which modules the
    project does not hold), as it does there."""
    if os.path.exists(dst):
        shutil.rmtree(dst)
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = [d for d in dirnames if d not in (".git", "__pycache__", ".volfix_cache")]
        rel = os.path.relpath(dirpath, src)
        for name in filenames:
            if name.endswith(SOURCE_EXTS) or name in ("pyproject.toml", "volfix.toml", ".gitignore"):
                os.makedirs(os.path.join(dst, rel), exist_ok=True)
                shutil.copy2(os.path.join(dirpath, name), os.path.join(dst, rel, name))
    os.makedirs(os.path.join(dst, ".git"), exist_ok=True)


def tree_digest(root: str) -> Dict[str, bytes]:
    """Contents of every source file under `root`, by relative path (to detect changes)."""
    out = {}
    for rel in iter_sources(root):
        with open(os.path.join(root, rel), "rb") as fh:
            out[rel] = fh.read()
    return out
