"""VF301: `async=` keyword arguments, which the parser refuses.

Python >= 3.7 cannot parse `x.cuda(async=True)`, so this pass runs before parsing. In check
mode the keyword is masked with a same-length identifier (columns of every other finding on
the line stay exact); in fix mode it is renamed to `non_blocking`.

`mask_async` guesses first: every `async` followed by `=` becomes the placeholder, and the
guess is parsed. When it parses, the sites are the keywords and parameters of the tree that
sit where the text said `async` (found by descending to the innermost statement of each
match, not by walking the tree), and the tree is reused when no match was elsewhere (in a
string or a comment). When it does not, the tokenizer finds the sites (`find_async_keywords`):
exact in any file, but tokenizing in Python costs as much as parsing.
"""
from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

from .positions import for_tokenize

_ASYNC_KEYWORD = re.compile(r"\basync\s*=(?!=)")
_ASYNC_WORD = re.compile(r"\basync(?=\s*=(?!=))")  # the word alone, for a same-length mask
PLACEHOLDER = "asyn_"  # same length as "async": keeps every column on the line unchanged
# PyTorch methods that took `async` before 0.4 and take `non_blocking` since.
TORCH_METHODS = frozenset({"cuda", "to", "type", "copy_", "pin_memory", "cpu"})


@dataclass(frozen=True)
class AsyncKeyword:
    row: int  # 1-based
    col: int  # 0-based, characters
    callee: str  # the name before the call's "(", or ""
    in_def: bool  # a parameter of a def/lambda, not a call argument

    @property
    def safe(self) -> bool:
        return not self.in_def and self.callee in TORCH_METHODS


def find_async_keywords(text: str, tokens: Optional[Callable[[], list]] = None) -> List[AsyncKeyword]:
    """`tokens`, when given, returns the text's tokens (shared with other passes), [] on error."""
    if "async" not in text or _ASYNC_KEYWORD.search(text) is None:
        return []
    skip = (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)
    if tokens is not None:
        tokens = [t for t in tokens() if t.type not in skip]
    else:
        try:
            tokens = [t for t in tokenize.generate_tokens(io.StringIO(for_tokenize(text)).readline)
                      if t.type not in skip]
        except (tokenize.TokenError, IndentationError, SyntaxError):
            return []
    found: List[AsyncKeyword] = []
    # One entry per open bracket: (is a def's parameter list, callee name).
    stack: List[Tuple[bool, str]] = []
    lambda_depths: List[int] = []
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.OP and tok.string in "([{":
            prev = tokens[i - 1] if i else None
            prev2 = tokens[i - 2] if i > 1 else None
            is_def = bool(tok.string == "(" and prev and prev.type == tokenize.NAME
                          and prev2 is not None and prev2.string == "def")
            callee = prev.string if (prev is not None and prev.type == tokenize.NAME) else ""
            stack.append((is_def, callee))
        elif tok.type == tokenize.OP and tok.string in ")]}":
            if stack:
                stack.pop()
        elif tok.type == tokenize.NAME and tok.string == "lambda":
            lambda_depths.append(len(stack))
        elif tok.type == tokenize.OP and tok.string == ":" and lambda_depths and lambda_depths[-1] == len(stack):
            lambda_depths.pop()
        elif tok.type == tokenize.NAME and tok.string == "async":
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            prev = tokens[i - 1] if i else None
            if not (nxt and nxt.type == tokenize.OP and nxt.string == "="):
                continue
            if not (prev and prev.type == tokenize.OP and prev.string in "(,"):
                if not (prev and prev.string == "lambda"):
                    continue
            in_lambda = bool(lambda_depths and lambda_depths[-1] == len(stack))
            is_def, callee = stack[-1] if stack else (False, "")
            found.append(AsyncKeyword(tok.start[0], tok.start[1], callee, is_def or in_lambda))
    return found


def replace_keywords(text: str, sites: List[AsyncKeyword], new: str) -> str:
    """Replace the `async` token of each site by `new`."""
    if not sites:
        return text
    # Rows as the tokenizer counts them: str.splitlines would also split at form feeds.
    lines = re.split(r"(?<=\r\n)|(?<=\r)(?!\n)|(?<=\n)", text)
    by_row = {}
    for site in sites:
        by_row.setdefault(site.row, []).append(site.col)
    for row, cols in by_row.items():
        line = lines[row - 1]
        for col in sorted(cols, reverse=True):
            line = line[:col] + new + line[col + len("async"):]
        lines[row - 1] = line
    return "".join(lines)


def mask_async(text: str, guess_first: bool = True) -> Tuple[str, List[AsyncKeyword], Optional[ast.Module]]:
    """(the text with each `async=` keyword masked, the sites, the masked text's tree when it
    was parsed on the way, else None). `guess_first=False`: tokenize only (a big file is
    never parsed whole: `volfix.syntax.big_files`)."""
    if "async" not in text or _ASYNC_KEYWORD.search(text) is None:
        return text, [], None
    matches = [m.start() for m in _ASYNC_WORD.finditer(text)]
    guess = _ASYNC_WORD.sub(PLACEHOLDER, text)
    try:
        if not guess_first:
            raise ValueError("tokenize only")
        tree = ast.parse(guess)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        sites = find_async_keywords(text)
        return replace_keywords(text, sites, PLACEHOLDER), sites, None
    sites = _sites_in_tree(tree, text, matches)
    masked = replace_keywords(text, sites, PLACEHOLDER)
    return masked, sites, tree if masked == guess else None


def _sites_in_tree(tree: ast.Module, text: str, offsets: List[int]) -> List[AsyncKeyword]:
    line_starts = [0] + [m.end() for m in _LINE_END.finditer(text)]
    out = []
    for offset in offsets:
        row = bisect.bisect_right(line_starts, offset)
        line = text[line_starts[row - 1]:line_starts[row] if row < len(line_starts) else len(text)]
        col = offset - line_starts[row - 1]
        col_bytes = len(line[:col].encode("utf-8"))
        site = _site_at(tree, row, col_bytes, col)
        if site is not None:
            out.append(site)
    return out


_LINE_END = re.compile(r"\r\n|\r|\n")


def _site_at(tree: ast.Module, row: int, col_bytes: int, col: int) -> Optional[AsyncKeyword]:
    """The keyword argument or parameter named by the placeholder at (row, col), if any."""
    stmt = _innermost(tree.body, row, col_bytes)
    if stmt is None:
        return None
    for node in ast.walk(stmt):
        if isinstance(node, ast.keyword) and node.arg == PLACEHOLDER and node.lineno == row \
                and node.col_offset == col_bytes:
            owner = _call_of(stmt, node)
            func = owner.func if owner is not None else None
            callee = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            return AsyncKeyword(row, col, callee, False)
        if isinstance(node, ast.arg) and node.arg == PLACEHOLDER and node.lineno == row \
                and node.col_offset == col_bytes:
            owner = next((n for n in ast.walk(stmt) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                          and node in n.args.args + n.args.posonlyargs + n.args.kwonlyargs), None)
            return AsyncKeyword(row, col, owner.name if owner is not None else "", True)
    return None


def _call_of(stmt: ast.AST, keyword: ast.keyword) -> Optional[ast.Call]:
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and any(k is keyword for k in node.keywords):
            return node
    return None


def _innermost(body: List[ast.stmt], row: int, col: int) -> Optional[ast.stmt]:
    """The innermost statement that holds position (row, col), col in UTF-8 bytes."""
    found = None
    where = (row, col)
    while body:
        starts = [min([(s.lineno, s.col_offset)] + [(d.lineno, d.col_offset) for d in getattr(s, "decorator_list", ())])
                  for s in body]
        i = bisect.bisect_right(starts, where) - 1
        if i < 0 or (body[i].end_lineno, body[i].end_col_offset) < where:  # type: ignore[attr-defined]
            return found
        found = body[i]
        body = [child for field in ("body", "orelse", "finalbody") for child in getattr(found, field, None) or ()
                if isinstance(child, ast.stmt)]
        for holder in list(getattr(found, "handlers", ())) + list(getattr(found, "cases", ())):
            body.extend(holder.body)
        body.sort(key=lambda s: (s.lineno, s.col_offset))
    return found
