"""Explaining why legacy text does not parse as Python 3.

`python2_reason(text)` runs only after a parse failure and names the Python 2 construct
responsible ("Python 2 syntax (print statement at line 3): port to Python 3 first").
`parser_limit_reason(text)` runs *before* parsing and refuses text nested so deeply that
libcst's native parser would overflow its stack (it segfaults at about 1,500 nested
brackets or 7,000 chained operators) or Python would refuse it anyway.

Both use a small lexer of their own rather than `tokenize`: it must read Python 2 (`10L`,
backticks, `ur""`) identically on every Python from 3.9 on (3.12's C tokenizer rejects
what 3.11's regex tokenizer accepted), never raise, and run in linear time. Strings and
comments are skipped, so `"print 'x'"` or `# exec code` never count.
"""
from __future__ import annotations

import ast
import re
import warnings
from typing import Iterator, List, NamedTuple, Optional

# Python refuses more than 200 nested brackets ("too many nested parentheses").
MAX_BRACKET_DEPTH = 200
# Chained operators / nested brackets in one expression that libcst parses safely (measured:
# 1,000 nested brackets and 5,000 chained `+` parse; 1,500 and 8,000 crash the process).
MAX_EXPRESSION_DEPTH = 1000


class Token(NamedTuple):
    kind: str  # NAME, NUMBER, STRING, OP, NEWLINE (end of a logical line), ERROR
    text: str
    line: int  # 1-based line where the token starts


_TOKEN_RE = re.compile(r"""
    (?P<ws>[ \t\f]+|\\(?:\r\n|\r|\n))
  | (?P<comment>\#[^\r\n]*)
  | (?P<nl>\r\n|\r|\n)
  | (?P<string>(?:[rRuUbBfF]{1,2})?(?:'''|\"\"\"|'|\"))
  | (?P<number>0[xX][0-9a-fA-F_]*[lL]?|0[oO][0-7_]*|0[bB][01_]*[lL]?
      |(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?[jJlL]?)
  | (?P<name>[^\W\d]\w*)
  | (?P<op>\.\.\.|<>|\*\*=?|//=?|>>=?|<<=?|->|:=|!=|[+\-*/%&|^@=<>]=?|[()\[\]{},:;.~`])
  | (?P<error>.)
""", re.VERBOSE | re.DOTALL)

_LINE_BREAK_RE = re.compile(r"\r\n|\r|\n")
_OPEN, _CLOSE = "([{", ")]}"
_COMPOUND = frozenset({"if", "elif", "else", "for", "while", "try", "except", "finally",
                       "with", "def", "class"})
_NOT_A_PRINT_ARGUMENT = frozenset({"and", "or", "in", "is", "if", "else", "for"})
# Tokens that deepen libcst's tree when chained: binary/unary operators, attribute access,
# keyword operators. Commas, colons and assignments do not.
_CHAIN_OPS = frozenset("+ - * / // % ** @ & | ^ ~ << >> . < > <= >= == != <>".split())
_CHAIN_WORDS = frozenset({"not", "and", "or", "lambda", "if", "else", "await", "in", "is"})


def tokens(text: str) -> Iterator[Token]:
    """Yield the tokens of `text` (Python 2 or 3); NEWLINE marks each logical line's end."""
    pos, line, depth, end = 0, 1, 0, len(text)
    match_token = _TOKEN_RE.match
    while pos < end:
        match = match_token(text, pos)
        kind = match.lastgroup
        value = match.group()
        if kind == "string":
            value = _string_at(text, pos, len(value))
        elif kind == "nl":
            if depth == 0:
                yield Token("NEWLINE", value, line)
        elif kind == "op":
            if value in _OPEN:
                depth += 1
            elif value in _CLOSE and depth:
                depth -= 1
            yield Token("OP", value, line)
        elif kind in ("name", "number", "error"):
            yield Token(kind.upper(), value, line)
        if kind == "string":
            yield Token("STRING", value, line)
        if kind in ("ws", "nl", "string"):
            line += _line_breaks(value)
        pos += len(value)
    yield Token("NEWLINE", "", line)


def _string_at(text: str, start: int, opener_len: int) -> str:
    """The whole string literal starting at `start` (to the end of line/file if unclosed)."""
    quote = text[start + opener_len - 1]
    triple = opener_len >= 3 and text[start + opener_len - 3:start + opener_len] == quote * 3
    closing = quote * 3 if triple else quote
    stop = re.compile(r"\\|" + re.escape(closing) + ("" if triple else r"|\r|\n"))
    pos = start + opener_len
    while True:
        found = stop.search(text, pos)
        if found is None:
            return text[start:]
        token = found.group()
        if token == "\\":
            pos = found.end() + (2 if text.startswith("\r\n", found.end()) else 1)
            continue
        if token in ("\r", "\n"):
            return text[start:found.start()]  # unterminated single-quoted string
        return text[start:found.end()]


def _line_breaks(value: str) -> int:
    if "\n" not in value and "\r" not in value:
        return 0
    return value.count("\n") + value.count("\r") - value.count("\r\n")


# --------------------------------------------------------------------------- Python 2


class _Finding(NamedTuple):
    what: str
    line: int
    strong: bool  # never valid Python 3 and rare outside Python 2 (C files have 10L, 0777)
    end_line: int = 0  # last line of the statement holding it (0: same as `line`)


def python2_reason(text: str, *, error_line: Optional[int] = None) -> Optional[str]:
    """Name the Python 2 construct that keeps `text` from parsing, or None.

    Call it only after a parse failure. `error_line` is the parser's error line when the
    caller has it; otherwise Python's own parser is asked. A construct on the error line
    wins; failing that, only constructs that exist nowhere but in Python 2 count (a C file
    named `.py` with `0777` in it is not called Python 2).
    """
    findings = list(_python2_constructs(text))
    if not findings:
        return None
    if error_line is None:
        error_line = _python3_error_line(text)
    on_error_line = [f for f in findings if error_line is not None and
                     f.line <= error_line <= max(f.line, f.end_line)]
    if _looks_like_c(text):
        # `0777` and `10L` are C as much as Python 2: only a Python-2-only construct counts.
        on_error_line = [f for f in on_error_line if f.strong]
    chosen = on_error_line[0] if on_error_line else None
    if chosen is None:
        chosen = next((f for f in findings if f.strong), None)
    if chosen is None:
        return None
    return f"Python 2 syntax ({chosen.what} at line {chosen.line}): port to Python 3 first"


_C_SOURCE_RE = re.compile(
    r"^[ \t]*#[ \t]*(?:include[ \t]*[<\"]|define[ \t]|ifn?def[ \t]|endif\b|pragma[ \t])"
    r"|^[ \t]*}[ \t]*$", re.MULTILINE)


def _looks_like_c(text: str) -> bool:
    """A vendored C/C++ file named `.py` by accident (preprocessor lines, lone braces)."""
    return _C_SOURCE_RE.search(text) is not None


def _python3_error_line(text: str) -> Optional[int]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(text, "<volfix>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        except SyntaxError as exc:
            return exc.lineno
        except (ValueError, RecursionError, MemoryError, OverflowError):
            return None
    return None


def _python2_constructs(text: str) -> Iterator[_Finding]:
    for statement in _statements(tokens(text)):
        yield from _statement_constructs(statement)


def _statements(stream: Iterator[Token]) -> Iterator[List[Token]]:
    """Split tokens into simple statements: at NEWLINE, `;`, and a compound header's `:`."""
    current: List[Token] = []
    depth = 0
    for tok in stream:
        if tok.kind == "NEWLINE":
            if current:
                yield current
            current, depth = [], 0
            continue
        if tok.kind == "OP" and tok.text in _OPEN:
            depth += 1
        elif tok.kind == "OP" and tok.text in _CLOSE:
            depth = max(depth - 1, 0)
        ends_header = (tok.text == ":" and depth == 0 and current and
                       current[0].kind == "NAME" and current[0].text in _COMPOUND and
                       not any(t.text == "lambda" for t in current))
        if depth == 0 and tok.kind == "OP" and (tok.text == ";" or ends_header):
            current.append(tok)
            yield current
            current = []
            continue
        current.append(tok)
    if current:
        yield current


def _statement_constructs(stmt: List[Token]) -> Iterator[_Finding]:
    for finding in _statement_level(stmt):
        yield finding._replace(end_line=stmt[-1].line)
    for index, tok in enumerate(stmt):
        finding = _token_construct(tok, stmt[index + 1] if index + 1 < len(stmt) else None)
        if finding is not None:
            yield finding


def _statement_level(stmt: List[Token]) -> Iterator[_Finding]:
    first = stmt[0]
    second = stmt[1] if len(stmt) > 1 else None
    if first.kind == "NAME" and second is not None:
        if first.text == "print" and _is_print_argument(second):
            yield _Finding("print statement", first.line, True)
        elif first.text == "exec" and second.kind in ("STRING", "NAME"):
            yield _Finding("exec statement", first.line, True)
        elif first.text in ("except", "raise") and _has_top_level_comma(stmt):
            what = "`except E, e:`" if first.text == "except" else "`raise E, message`"
            yield _Finding(what, first.line, True)
        elif first.text == "def" and _has_tuple_parameter(stmt):
            yield _Finding("tuple parameter", first.line, True)


def _is_print_argument(tok: Token) -> bool:
    if tok.kind in ("STRING", "NUMBER"):
        return True
    if tok.kind == "NAME":
        return tok.text not in _NOT_A_PRINT_ARGUMENT
    return tok.kind == "OP" and tok.text in (">>", "`", "-", "+", "~")


def _has_top_level_comma(stmt: List[Token]) -> bool:
    depth = 0
    for tok in stmt[1:]:
        if tok.kind != "OP":
            continue
        if tok.text in _OPEN:
            depth += 1
        elif tok.text in _CLOSE:
            depth -= 1
        elif depth == 0 and tok.text == ":":
            return False
        elif depth == 0 and tok.text == ",":
            return True
    return False


def _has_tuple_parameter(stmt: List[Token]) -> bool:
    """`def f(a, (b, c)):` -- a bracket opened directly inside the parameter list."""
    depth = 0
    previous: Optional[Token] = None
    for tok in stmt[2:]:
        if tok.kind == "OP" and tok.text in _OPEN:
            depth += 1
            if depth == 2 and tok.text == "(" and previous is not None and \
                    previous.text in ("(", ","):
                return True
        elif tok.kind == "OP" and tok.text in _CLOSE:
            depth -= 1
            if depth == 0:
                return False
        previous = tok
    return False


_OCTAL_RE = re.compile(r"0[0-7]*[1-7][0-7]*[lL]?")


def _token_construct(tok: Token, following: Optional[Token]) -> Optional[_Finding]:
    if tok.kind == "OP":
        if tok.text == "`":
            return _Finding("backticks", tok.line, True)
        if tok.text == "<>":
            return _Finding("`<>` operator", tok.line, False)
        return None
    if tok.kind == "STRING":
        prefix = tok.text[:2].lower()
        if prefix in ("ur", "ru") and tok.text[2:3] in ("'", '"'):
            return _Finding("`ur` string prefix", tok.line, prefix == "ur")
        return None
    if tok.kind == "NAME" and tok.text == "lambda" and following is not None and \
            following.text == "(":
        return _Finding("tuple parameter", tok.line, True)
    if tok.kind == "NUMBER":
        if _OCTAL_RE.fullmatch(tok.text):
            return _Finding(f"octal literal `{tok.text}`", tok.line, False)
        if tok.text[-1] in "lL":
            return _Finding(f"long integer literal `{tok.text}`", tok.line, False)
    return None


# --------------------------------------------------------------------------- parser limits


def parser_limit_reason(text: str) -> Optional[str]:
    """A reason to refuse `text` before parsing it, or None.

    Deeply nested code crashes libcst's native parser (a segfault, which no `except`
    catches), so the engine calls this first and reports VF001 with the reason.
    """
    stack: List[int] = [0]  # per open bracket: chained operators in the current element
    total = 0
    for tok in tokens(text):
        if tok.kind == "NEWLINE" or (tok.text == ";" and len(stack) == 1):
            stack, total = [0], 0
            continue
        if tok.kind == "OP" and tok.text in _OPEN:
            stack[-1] += 1
            stack.append(0)
            total += 1
            if len(stack) - 1 > MAX_BRACKET_DEPTH:
                return (f"too many nested parentheses at line {tok.line} "
                        f"(Python allows {MAX_BRACKET_DEPTH})")
        elif tok.kind == "OP" and tok.text in _CLOSE:
            if len(stack) > 1:
                total -= stack.pop()
        elif tok.text == "," or tok.text == ":":
            total -= stack[-1]
            stack[-1] = 0
        elif (tok.kind == "OP" and tok.text in _CHAIN_OPS) or \
                (tok.kind == "NAME" and tok.text in _CHAIN_WORDS):
            stack[-1] += 1
            total += 1
        if total > MAX_EXPRESSION_DEPTH:
            return (f"expression nested more than {MAX_EXPRESSION_DEPTH} levels deep at line "
                    f"{tok.line}; too deep to parse safely")
    return None
