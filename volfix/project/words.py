"""Which files may call a helper of another file, read from their bytes (`volfix.project.index`).

Most files of a large project spell no helper's name: they are ruled out without a parse, by
whole words found in one scan of their bytes (`_call_filter`).
"""
from __future__ import annotations

import os
import re
from typing import Callable, Dict, List, Set

from ..files.code_words import in_comment


def _module_word(path: str) -> bytes:
    """The word an import of the module in `path` must spell (`utils` for `pkg/utils.py`);
    empty for a package's `__init__.py` (`from . import to_var` spells none)."""
    stem = os.path.splitext(os.path.basename(path))[0]
    return b"" if stem == "__init__" else stem.encode("utf-8", "surrogateescape")


def _call_filter(by_module: Dict[bytes, Set[bytes]], method_names: List[bytes]) -> Callable[[bytes], bool]:
    """Can a file with these bytes call a helper of another file? It must spell a helper's
    name and, for a function, the name of the helper's module (in its import); any file
    that spells a helper method's name may call it. Words are whole identifiers (`to_var`
    inside `to_variable` calls nothing), collected in one scan of the file."""
    methods = set(method_names)
    if not methods and not by_module:
        return lambda raw: False
    # Most files spell no helper's name at all: one C-level search for any of them first.
    spells_any = _any_word(methods.union(*by_module.values()))

    def may_call(raw: bytes) -> bool:
        if not spells_any(raw):
            return False
        found = set(_WORD.findall(raw))
        if not methods.isdisjoint(found):
            return True
        return any((not word or word in found) and not names.isdisjoint(found) for word, names in by_module.items())
    return may_call


_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")


def _any_word(words: Set[bytes]) -> Callable[[bytes], bool]:
    """Whether bytes hold any of `words` (as a substring: a necessary condition for a whole
    identifier), by one regex shaped as a trie of the words (an alternation of hundreds
    of names tries each of them at every position: 30 times slower)."""
    trie: Dict[int, dict] = {}
    for word in words:
        node = trie
        for byte in word:
            if -1 in node:
                break  # a shorter word ends here: longer ones add nothing to a search
            node = node.setdefault(byte, {})
        else:
            node.clear()
            node[-1] = {}

    def pattern(node: Dict[int, dict]) -> bytes:
        if -1 in node:
            return b""
        branches = [re.escape(bytes([byte])) + pattern(child) for byte, child in sorted(node.items())]
        return branches[0] if len(branches) == 1 else b"(?:" + b"|".join(branches) + b")"

    if not trie or -1 in trie:
        return lambda raw: True  # no word, or the empty word
    search = re.compile(pattern(trie)).search
    # The regex looks at every position of the bytes; a plain substring search does not. When
    # the words share a few heads (`to_var_1`, `to_var_2`, ...), bytes holding none of them
    # hold no word: the regex only runs on the others (a monorepo's files: 4x faster).
    size = min(MAX_HEAD, min(len(word) for word in words))
    heads = {word[:size] for word in words}
    if len(heads) > MAX_HEADS:
        return lambda raw: search(raw) is not None
    return lambda raw: any(head in raw for head in heads) and search(raw) is not None


MAX_HEAD = 8  # bytes of a word's head
MAX_HEADS = 16  # distinct heads searched before the regex


# An import's text just before a name it imports: `from x import a, ` or a parenthesised list.
_IMPORTING = re.compile(rb"import(?:[ \t\w,\\]*|[ \t]*\([\s\w,#]*)\Z")


def other_use(raw: bytes, name: str) -> int:
    """The line of the first use of the word `name` in a file's bytes other than an import of
    it, a comment, or a call of what calling it makes (`Fn(...)(...)`): `self.grl =
    GradReverse(lambd)`, `crf = RoICropFunction()` then `crf.forward(...)`, a subclass. 0 when
    there is none. Read from the bytes (approximately, never
    missing a use: a call whose parentheses a string unbalances counts as a use)."""
    word = re.compile(rb"(?<![\w.])" + re.escape(name.encode("utf-8")) + rb"(?!\w)")
    for found in word.finditer(raw):
        start = found.start()
        if _IMPORTING.search(raw, max(0, start - 2000), start) or in_comment(raw, start):
            continue
        at = _closing(raw, found.end())
        if at is not None and raw[at:at + 1] == b"(":
            continue
        return raw.count(b"\n", 0, start) + 1
    return 0


def _closing(raw: bytes, at: int):
    """After `Fn` at `at`: the offset after the blanks that follow its call's `)`; None if no
    call follows."""
    while raw[at:at + 1] in (b" ", b"\t"):
        at += 1
    if raw[at:at + 1] != b"(":
        return None
    depth = 0
    for i in range(at, len(raw)):
        if raw[i] in b"([{":
            depth += 1
        elif raw[i] in b")]}":
            depth -= 1
            if depth == 0:
                i += 1
                while raw[i:i + 1] in (b" ", b"\t"):
                    i += 1
                return i
    return None
