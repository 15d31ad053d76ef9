"""VF301: `async=` keyword arguments, found with the tokenizer because the parser refuses them.

Python >= 3.7 cannot parse `x.cuda(async=True)`, so this pass runs before parsing. In check
mode the keyword is masked with a same-length identifier (columns of every other finding on
the line stay exact); in fix mode it is renamed to `non_blocking`.
"""
from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

_ASYNC_KEYWORD = re.compile(r"\basync\s*=(?!=)")
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
            tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type not in skip]
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
