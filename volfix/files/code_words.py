"""Words in code, at the bytes level: the second stage of the prefilter (`files.prefilter`).

An occurrence counts when it is a whole *word* (not `VariableTracker`, `volatile_reads`) that
is *in code*: it is ignored only when its line, before it, holds a `#` and no quote character
at all. That rule never hides code: if the `#` does not start a comment it is inside a string,
and a string that ends before the occurrence puts a quote in front of it. (Docstrings are not
detected; the engine handles them.) In notebooks, a JSON escape (`\\n`) before a word counts
as a word boundary, and every cell line holds a quote, so notebook occurrences always count.
Also here: the contexts a word is tested in (a keyword argument, an attribute or dict key, a
string, an import).
"""
from __future__ import annotations

import re
from typing import Callable, Optional

Predicate = Callable[[bytes], bool]


IDENT_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
                        ) | frozenset(range(0x80, 0x100))
BACKSLASH = 92
JSON_ESCAPES = frozenset(b"nrt")
# Whitespace and backslash continuations; in a notebook's JSON also `"` and `,` between the
# lines of a cell's source.
GAP_BYTES = frozenset(b" \t\r\n\f\",")


def starts_word(data: bytes, i: int) -> bool:
    if i == 0:
        return True
    prev = data[i - 1]
    if prev not in IDENT_BYTES:
        return True
    # `\nVariable` in a notebook's JSON: the escape ends the previous line.
    return prev in JSON_ESCAPES and i >= 2 and data[i - 2] == BACKSLASH


def in_comment(data: bytes, i: int) -> bool:
    """True only when the occurrence at `i` is certainly not code (see module docstring)."""
    prefix = data[max(data.rfind(b"\n", 0, i), data.rfind(b"\r", 0, i)) + 1:i]  # a lone CR ends a line too
    return b"#" in prefix and b'"' not in prefix and b"'" not in prefix


def code_word(word: bytes, context: Optional[Callable[[bytes, int, int], bool]] = None
              ) -> Predicate:
    """Whether `word` occurs as a whole word, outside comments (and, with `context`, where
    `context(data, start, end)` accepts it)."""
    n = len(word)

    def test(data: bytes) -> bool:
        find = data.find
        end = len(data)
        i = find(word)
        while i >= 0:
            j = i + n
            if (j >= end or data[j] not in IDENT_BYTES) and starts_word(data, i) \
                    and not in_comment(data, i) and (context is None or context(data, i, j)):
                return True
            i = find(word, j)
        return False

    return test


QUOTES = frozenset(b"'\"")
SPACE_BYTES = frozenset(b" \t\r\n\f")


def keyword(data: bytes, start: int, end: int) -> bool:
    """`volatile` followed by `=` (not `==`): a keyword argument."""
    n = len(data)
    j = end
    while j < n and data[j] in b" \t\\":
        j += 1
    return j < n and data[j] == 61 and (j + 1 >= n or data[j + 1] != 61)


def attribute_key_or_keyword(data: bytes, start: int, end: int) -> bool:
    """`volatile` as an attribute (`x.volatile`, `x . volatile`), a string where VF203 reads
    one (`volatile_string`) or a keyword (`volatile=`): every form VF2xx looks at. Not: an
    annotation (`volatile: bool` in a stub), prose in a docstring, `asm volatile`, a
    descriptor of a class (`Tensor.volatile.__get__`, PyTorch's override tables)."""
    n = len(data)
    if start and data[start - 1] in QUOTES:
        return volatile_string(data, start, end)
    i = start - 1
    while i >= 0:
        c = data[i]
        if c in QUOTES:  # a notebook's JSON between two lines of a cell, or a string's end
            return True
        if c in SPACE_BYTES or c == BACKSLASH:
            i -= 1
        elif c in JSON_ESCAPES and i >= 1 and data[i - 1] == BACKSLASH:  # `\n` in a notebook
            i -= 2
        else:
            break
    if i >= 0 and data[i] == 46:  # "."
        return not data.startswith(b".__", end)  # `Tensor.volatile.__get__`: not a flag
    j = end
    while j < n and data[j] in b" \t\\":
        j += 1
    return j < n and data[j] == 61 and (j + 1 >= n or data[j + 1] != 61)  # "=", not "=="


def volatile_string(data: bytes, start: int, end: int) -> bool:
    """A quote before `volatile`: whether it is a string VF203 reads, the name of a
    `getattr(x, "volatile")` / `setattr` / `hasattr` (after a comma), a dict key
    (`{"volatile": True}`) or a subscript key (`kw["volatile"] = True`). Not
    `methods.remove("volatile")` (`torch._tensor`). Errs on the side of yes: in a notebook's
    JSON (escaped quotes), after a string prefix, and across a line break."""
    if (start >= 2 and data[start - 2] == BACKSLASH) or JSON_START.match(data):
        return True
    quote = data[start - 1]
    if end >= len(data) or data[end] != quote:
        return False  # `"volatile mode"`: not the exact string
    i = start - 2
    while i >= 0 and data[i] in b" \t":
        i -= 1
    if i < 0 or data[i] in IDENT_BYTES or data[i] in b"\r\n\\" or data[i] == 44:  # a prefix, a line break, ","
        return True
    n = len(data)
    j = end + 1
    while j < n and data[j] in b" \t":
        j += 1
    return j >= n or data[j] in b":]\r\n\\#"


# What may stand between `import` and a name it binds: names, `as`, commas, parentheses,
# line breaks and continuations, comments, and (a notebook's JSON) quotes.
# A comment runs to its line's end (a newline, or `\n` in a notebook's JSON): it cannot stop
# early and hand its words to the first alternative, which made the match exponential in
# the number of comments.
IMPORT_TAIL = re.compile(rb'(?:[\w\s,()\\"]|#(?:[^\r\n\\]|\\(?!n))*(?=\r|\n|\\n|$))*')
JSON_SEPARATOR = re.compile(rb'"\s*,\s*"')
JSON_START = re.compile(rb"\s*\{")
STAR_IMPORT = re.compile(rb"autograd(?:\.variable)?\s+import\s+\*")
# A star import of any module, at a line start (in a notebook's JSON: after `"` or `\n`).
ANY_STAR_IMPORT = re.compile(rb'(?:^|"|\\n)[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]+\*', re.M)


def after_dot(data: bytes, start: int) -> bool:
    """`.` before `start`, across spaces and a backslash continuation (not a bare line
    break: `Dynamo.\nVariable trackers` in a docstring is prose)."""
    i = start - 1
    while i >= 0 and data[i] in b" \t":
        i -= 1
    if i >= 2 and data[i] == 10 and data[i - 1] == 13 and data[i - 2] == BACKSLASH:
        i -= 1  # `\\` CRLF: on to the CR
    if i >= 1 and data[i] in (10, 13) and data[i - 1] == BACKSLASH:
        i -= 2
        while i >= 0 and data[i] in b" \t":
            i -= 1
    return i >= 0 and data[i] == 46


AS = re.compile(rb"[ \t]+as[ \t]")
DOT_AFTER = re.compile(rb"[ \t]*\.")


def in_import(data: bytes, i: int) -> bool:
    """Whether the name at `i` is one an `import` statement binds: only names, `as`,
    commas and comments since the last `import`, and no line break unless a parenthesis
    is open or the line is continued. In a notebook's JSON the tail is unescaped first."""
    k = data.rfind(b"import", 0, i)
    if k < 0 or IMPORT_TAIL.fullmatch(data, k + 6, i) is None:  # cheap: fails at `=`, `.`
        return False
    tail = data[k + 6:i]
    if JSON_START.match(data):  # a notebook: `"...import (\n",\n    "    Variable`
        tail = (JSON_SEPARATOR.sub(b"", tail).replace(b"\\\\", b"\0").replace(b"\\n", b"\n")
                .replace(b"\0", b"\\"))
        if IMPORT_TAIL.fullmatch(tail) is None:
            return False
    breaks = tail.count(b"\n") + tail.count(b"\r") - tail.count(b"\r\n")  # CRLF, CR or LF
    return breaks == 0 or tail.count(b"(") > tail.count(b")") or breaks == tail.count(b"\\\n") + tail.count(b"\\\r")
