"""The import block (SPEC §2.8): add `import torch` / `import contextlib` where a fix needs it,
remove `Variable` from `from torch.autograd import ...` once nothing uses it.

Adding: next to the file's torch imports (just above the first one in the leading import
block: `from torch.autograd import Variable` usually goes away and `import torch` takes its
place), else after the plain `import x` lines that open the block when `from` imports follow
(the project's own names usually come last), else where libcst's `AddImportsVisitor` puts it
in the leading import block, else at
the top (after the docstring and comments; two blank lines before a top-level `def`).
Removing: libcst's `RemoveImportsVisitor` on that one statement when other names stay; the
statement's lines when it goes whole (its comments stay; when it opened the file, the blank
lines after it go too). A module that a file of the run
star-imports (a `.py` file or a notebook) keeps its `Variable` while that file uses the name.
"""
from __future__ import annotations

import ast
import re
from typing import List, Optional, Set, Tuple

from .edits import TextEdit
from ..syntax.positions import SourceText

_VARIABLE_MODULES = ("torch.autograd", "torch.autograd.variable")
# A notebook's IPython line, masked as a name statement (`volfix.notebook.magics`).
_MAGIC = re.compile(r"__volfix_magic_\d+(?:_\d+)?__")


def import_edit(src: SourceText, tree: ast.Module, module: str, part: Optional[Tuple[int, int]] = None
                ) -> Optional[TextEdit]:
    """The edit adding `import <module>` (None when the place cannot be found).
    `part`: restrict to these rows (a notebook cell)."""
    import libcst as cst

    nl = src.newline
    if part is not None:
        m = re.search(r"\r\n|\r|\n", src.text[src.line_starts[part[0] - 1]:src.line_after(part[1])])
        nl = m.group(0) if m else nl
    statement = cst.Module(body=[]).code_for_node(
        cst.Import(names=[cst.ImportAlias(name=cst.parse_expression(module))])).strip()
    body = [s for s in tree.body if part is None or part[0] <= s.lineno <= part[1]]
    block = _leading_imports(body)
    if block:
        anchor = next((s for s in block if _imports_torch(s)), None) if module == "torch" else None
        if anchor is not None:
            offset = src.line_starts[anchor.lineno - 1]
            return TextEdit(offset, offset, f"{src.indentation(anchor.lineno)}{statement}{nl}",
                            key=f"import {module}")
        plain = _plain_imports_first(block)
        if plain is not None:
            offset = src.line_after(plain.end_lineno)
            return TextEdit(offset, offset, f"{src.indentation(plain.lineno)}{statement}{nl}", key=f"import {module}")
        return _after_block(src, block, module, statement, nl)
    return _at_top(src, body, statement, module, part, nl)


def _after_block(src: SourceText, block: List[ast.stmt], module: str, statement: str, nl: str) -> TextEdit:
    """Where `AddImportsVisitor` puts the import in the block: after its last import."""
    import libcst as cst
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor

    start = src.line_starts[block[0].lineno - 1]
    end = src.line_after(block[-1].end_lineno)
    text = src.text[start:end]
    if not text.endswith(("\n", "\r")):
        text += nl
    context = CodemodContext()
    AddImportsVisitor.add_needed_import(context, module)
    new = AddImportsVisitor(context).transform_module(cst.parse_module(text)).code
    prefix = _common_prefix(text, new)
    inserted = new[prefix:len(new) - (len(text) - prefix)] if len(new) > len(text) else ""
    offset = start + prefix
    if offset > len(src.text):
        offset = len(src.text)
    if not inserted.strip():
        inserted = statement + nl
    if offset == len(src.text) and src.text and not src.text.endswith(("\n", "\r")):
        return TextEdit(offset, offset, nl + inserted.rstrip("\r\n"), key=f"import {module}")
    return TextEdit(offset, offset, inserted, key=f"import {module}")


def _at_top(src: SourceText, body: List[ast.stmt], statement: str, module: str,
            part: Optional[Tuple[int, int]], nl: str) -> TextEdit:
    key = f"import {module}"
    first = body[0] if body else None
    if first is not None and _is_docstring(first):
        offset = src.line_after(first.end_lineno)
        if offset == len(src.text) and not src.text.endswith(("\n", "\r")):
            return TextEdit(offset, offset, nl + statement, key=key)
        return TextEdit(offset, offset, statement + nl, key=key)
    if first is None:
        end = len(src.text) if part is None else src.line_after(part[1])
        sep = "" if not src.text[:end] or src.text[:end].endswith(("\n", "\r")) else nl
        return TextEdit(end, end, sep + statement + nl, key=key)
    row = min([first.lineno] + [d.lineno for d in getattr(first, "decorator_list", [])])
    # Before a top-level `def`/`class`, keep PEP 8's two blank lines after the import.
    gap = nl * 2 if isinstance(first, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else ""
    return TextEdit(src.line_starts[row - 1], src.line_starts[row - 1], statement + nl + gap, key=key)


def _leading_imports(body: List[ast.stmt]) -> List[ast.stmt]:
    """The first run of top-level imports (after a docstring)."""
    out: List[ast.stmt] = []
    for i, stmt in enumerate(body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            out.append(stmt)
        elif out:
            break
        elif not ((i == 0 and _is_docstring(stmt)) or _is_magic(stmt)):
            break
    return out


def _plain_imports_first(block: List[ast.stmt]) -> Optional[ast.stmt]:
    """The last `import x` of a block that opens with plain imports and goes on with `from`
    imports (`import os`, `import numpy as np`, `from data import get_batch`): the new import
    joins the plain ones, as isort orders a section, not the project's own names after them."""
    last = None
    for stmt in block:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            continue
        if isinstance(stmt, ast.Import):
            last = stmt
            continue
        return last
    return None


def _is_magic(stmt: ast.stmt) -> bool:
    target = stmt.value if isinstance(stmt, ast.Expr) else stmt.value if isinstance(stmt, ast.Assign) else None
    return isinstance(target, ast.Name) and _MAGIC.fullmatch(target.id) is not None


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _imports_torch(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Import):
        return any(a.name == "torch" or a.name.startswith("torch.") for a in stmt.names)
    return isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and bool(stmt.module) and \
        (stmt.module == "torch" or stmt.module.startswith("torch."))


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    # Back up to a line start: the insertion is a whole line.
    while n > 0 and a[n - 1] not in "\n\r":
        n -= 1
    return n


# ---------------------------------------------------------------------- removing


def unused_variable_imports(text: str, tree: ast.Module, *, keep_star_exported: bool = False,
                            was_used: Optional[Set[str]] = None, extra_used: Optional[Set[str]] = None,
                            dead_too: bool = True) -> List[TextEdit]:
    """Edits removing `Variable` (and `import torch.autograd as ag`) bindings nothing uses.
    `was_used`: names the original text used (only imports the fixes made unused go). A
    `from torch.autograd import Variable` nothing used before goes too with `dead_too` (the
    fixes migrated the file's legacy autograd: the import is a leftover of it)."""
    if keep_star_exported:
        return []
    imports = [stmt for stmt in tree.body
               if isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module in _VARIABLE_MODULES
               or isinstance(stmt, ast.Import) and any(a.asname and a.name in _VARIABLE_MODULES for a in stmt.names)]
    if not imports:
        return []  # nothing to remove: the names used are not needed (a walk of the whole tree)
    src = SourceText(text)
    used = _names_in_all(tree)
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            used.add(n.id)
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
            used.add(n.value.id)
    used |= extra_used or set()
    edits = []
    for stmt in imports:
        if isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module in _VARIABLE_MODULES:
            drop = [a for a in stmt.names if a.name == "Variable" and (a.asname or a.name) not in used
                    and (dead_too or was_used is None or (a.asname or a.name) in was_used)]
        elif isinstance(stmt, ast.Import):
            drop = [a for a in stmt.names if a.asname and a.name in _VARIABLE_MODULES and a.asname not in used
                    and (was_used is None or a.asname in was_used)]
        else:
            continue
        if not drop:
            continue
        edit = _removal(src, stmt, drop)
        if edit is not None:
            edits.append(edit)
    return edits


def _names_in_all(tree: ast.Module) -> set:
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets):
            if isinstance(stmt.value, (ast.List, ast.Tuple)):
                return {e.value for e in stmt.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def _removal(src: SourceText, stmt: ast.stmt, drop: list) -> Optional[TextEdit]:
    first, last = stmt.lineno, stmt.end_lineno
    before = src.line(first)[: src.char_col(first, stmt.col_offset)]
    after = src.line(last)[src.char_col(last, stmt.end_col_offset):]
    if len(drop) < len(stmt.names):  # type: ignore[attr-defined]
        return _remove_names(src, stmt, drop)
    if before.strip():
        return None  # shares its line (`import x; from torch.autograd import Variable`)
    comment = after.strip()
    if comment and not comment.startswith("#"):
        return None
    inner = src.comments_between(src.start(stmt), src.end(stmt))
    kept = " ".join(inner + ([comment] if comment else []))
    if kept:
        return TextEdit(src.start(stmt), src.line_end(last), kept)
    # Blank lines on both sides would pile up (`import torch`, blank, the import, two blanks,
    # `def`: three blanks): the blank lines above go too, the larger run stays.
    above = 0
    while first - above - 1 >= 1 and not src.line(first - above - 1).strip():
        above += 1
    below = 0
    while last + below + 1 <= len(src.line_starts) and src.line_after(last + below) < len(src.text) \
            and not src.line(last + below + 1).strip():
        below += 1
    if first - above == 1 and src.line_after(last + below) < len(src.text):
        # The file's first statement: the blank lines after it would open the file.
        return TextEdit(src.line_starts[first - 1], src.line_after(last + below), "")
    if above and below and first - above > 1:
        drop_above = min(above, below)
        return TextEdit(src.line_starts[first - 1 - drop_above], src.line_after(last), "")
    return TextEdit(src.line_starts[first - 1], src.line_after(last), "")


def _remove_names(src: SourceText, stmt: ast.stmt, drop: list) -> Optional[TextEdit]:
    """libcst's RemoveImportsVisitor on this one statement."""
    import libcst as cst
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import RemoveImportsVisitor

    start, end = src.start(stmt), src.end(stmt)
    text = src.text[start:end]
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError:
        return None
    context = CodemodContext()
    for alias in drop:
        if isinstance(stmt, ast.ImportFrom):
            RemoveImportsVisitor.remove_unused_import(context, stmt.module, alias.name, alias.asname)
        else:
            RemoveImportsVisitor.remove_unused_import(context, alias.name, asname=alias.asname)
    new = RemoveImportsVisitor(context).transform_module(module).code
    if new == text or not new.strip():
        return None
    return TextEdit(start, end, new.rstrip("\r\n") if not text.endswith(("\n", "\r")) else new)
