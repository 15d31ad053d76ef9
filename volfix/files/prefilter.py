"""The bytes-level prefilter: which files could hold a finding, decided before any parse.

Each rule needs certain words in the raw bytes; a file without them cannot produce that
rule's finding, so it is neither decoded nor parsed. The words are ASCII, so the test is
exact for every encoding Python accepts for source (PEP 263 encodings are ASCII-compatible)
and for notebooks (JSON keeps these words verbatim in cell sources).

    VF101-VF103, VF110-VF112   `torch`, and the words `Variable` and `autograd` in code
        The name must resolve to `torch.autograd.Variable`, and every way to bind it
        (`from torch.autograd import Variable as V`, `import torch.autograd as ag`,
        `from torch import autograd`, `torch.autograd.variable.Variable`,
        `from torch.autograd import *`) spells all three in the file. VF101 is keyed on
        `Variable`, not `volatile`: the flag may be the third positional argument.
        `Variable` must also be *bound* where it occurs (in an import, as an attribute
        `autograd.Variable`, or with a star import of `torch.autograd`) and *used* other
        than as `Variable.<attr>`: a string `"Variable"`, prose in a docstring and
        `Variable._execution_engine` (PyTorch's own code) make no candidate. A file that
        uses `Variable` under a star import of any module (`from main import *`) is a
        candidate too: the project linker follows the star import to a module that binds it.
    VF201-VF203                `torch` (or a package built on it: allennlp, fastai, pyro,
                               ...), and the word `volatile` in code, as an attribute
                               (`x.volatile`), a string (`"volatile"`) or a keyword
                               (`volatile=`)
        `.volatile` reads and writes count in files that import torch or such a
        package (torchtext, allennlp: `batch.text.volatile`), and not on a class's
        descriptor (`Tensor.volatile.__get__`). A file importing neither (torchtext's own test
        helper asserting `batch.text.volatile is not train`) is a candidate when it spells
        `x.volatile`: the link step tells whether another file of its project imports torch
        (`Links.torch_project`); in a project without torch the read is nobody's flag. `getattr(x, "volatile")` and
        `{"volatile": True}` spell it as a string; a string counts after a comma or before
        `:` or `]` (`methods.remove("volatile")` does not).
    VF105                      `torch` (or such a package), and `volatile=` in code (a
                               keyword argument, or a parameter's default)
    VF301                      the word `async`, then optional whitespace, then `=` (not `==`)
    VF401                      `.data[0]` in code (also in a module that never names torch:
                               its tensors may come from the project's other modules,
                               `utils.py`'s `correct.float().sum().data[0]`); or `torch`,
                               `.data`, and `[0]` after a name ending in `loss`/`cost` or
                               added to on a line ending in `.data` (`total_loss += raw_loss.data`)
    VF402-VF406                `.data.resize_`; `cat(`; `.backward(` and a constructor;
                               `torch`, a plain tensor (`.data`, `Tensor(`, `from_numpy(`...)
                               and, for VF405, `{`, `dict(`, `Counter(` or an attribute keyed
                               by a name (`lang.index2word[ni]`: a dict another file may build,
                               `project.dict_attributes`), for VF406 an item or in-place write
    VF010                      `volfix` or `VF<digit>`, case-insensitive: an unused
                               suppression needs a `# volfix: ignore` or `# noqa: VF...`

Two stages. First C-speed `in` scans for the plain substrings (most files stop here).
Then, for the few files left, each occurrence is checked: a *word* that is *in code*
(`files.code_words`).

A code without a decision here makes every file a candidate (`compile_prefilter`), so a new
rule is never silently starved; `tests/test_prefilter.py` asks every registered code for one.

VF001 (cannot parse) and VF002 (cannot read) have no token. A file without any token is
skipped without being read as text or parsed, so **VF001 is reported only for files that
could hold another finding** (and not for a file that never names torch and is read only for
VF401's `.data[0]`: a Python 2 Caffe script's `net.blobs['data'].data[0]` is not legacy
PyTorch code): a syntax error in a file that never mentions these words is
out of volfix's scope (that is what `ruff check --select E9` or the compiler is for), and
finding it would mean parsing every file, the cost the prefilter exists to avoid. A file
that cannot be *read* is always a candidate (the runner passes it on and the engine reports
VF002).

Cross-file analysis (SPEC §2.6, "later the same package") would break this per-file test:
a module that calls a helper imported from another module holds none of the tokens. So the
runner links files first (`volfix.project.index`): when a candidate may define a helper
(`HELPER_HINT` below: a `volatile=<name>` keyword, or a `Variable(data, *args)` forwarder), every
file of the run that mentions a helper's name is read, and the callers join the candidates.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, FrozenSet, Iterable, Optional, Tuple

from .code_words import (ANY_STAR_IMPORT, AS, BACKSLASH, DOT_AFTER, GAP_BYTES, IDENT_BYTES, JSON_ESCAPES,
                         STAR_IMPORT, after_dot, attribute_key_or_keyword, code_word, in_comment, in_import,
                         keyword, starts_word)

Predicate = Callable[[bytes], bool]


def _variable_bound_and_used(data: bytes) -> bool:
    """torch's `Variable` is both reachable and used: some occurrence of the word in code
    binds it (an attribute `autograd.Variable`, an import `from torch.autograd import grad,
    Variable`, or a star import of `torch.autograd`) and some occurrence uses it other than
    for a class attribute (`Variable(...)`, `isinstance(x, Variable)`, `as V` in the import,
    `ag.Variable(...)`). Not: a string (`"Variable",`), prose in a docstring (`Variable
    trackers are ...`), `Variable._execution_engine` (torch's own uses): half of torch's
    own candidates. Errs on the side of yes (an import's tail is only roughly checked)."""
    bound = STAR_IMPORT.search(data) is not None
    used = False
    find = data.find
    n = len(data)
    i = find(b"Variable")
    while i >= 0:
        j = i + 8
        if (j >= n or data[j] not in IDENT_BYTES) and starts_word(data, i) and not in_comment(data, i):
            if in_import(data, i):
                bound = True
                used = used or AS.match(data, j) is not None
            else:
                bound = bound or after_dot(data, i)
                used = used or DOT_AFTER.match(data, j) is None
            if bound and used:
                return True
        i = find(b"Variable", j)
    return False


# The tokens known to be absent from the file `may_need` is testing: families share tokens
# (`Variable`, `volatile`), and each scan of a missing token reads the whole file.
_absent: Tuple[Optional[bytes], set] = (None, set())


def _contains(token: bytes) -> Predicate:
    """`token in data`, by the faster of two C scans. `re` looks for a literal's first byte
    and compares from there; `in` skips by the last byte. `V` and `v` are rare in code and
    `e` is the commonest letter, so `re` reads a tree without `Variable` and `volatile` in
    60% of the time `in` takes (torch's 49 MB: 13 ms and 18 ms against 22 ms and 27 ms)."""
    if token[:1] in (b"V", b"v"):
        search = re.compile(re.escape(token)).search
        return lambda data: search(data) is not None
    return lambda data: token in data


def _attribute_word(word: bytes, after: Optional[Callable[[bytes, int], bool]] = None) -> Predicate:
    """`code_word` for an attribute or method: `word` right after a `.` (and, with `after`,
    where `after(data, end)` accepts what follows it)."""
    return code_word(word, lambda data, start, end: start > 0 and data[start - 1] == 46
                      and (after is None or after(data, end)))


def _family(substrings: Tuple[bytes, ...], word_tests: Tuple[Predicate, ...]) -> Predicate:
    """All `substrings` present (fast scans, most selective first), then every one of
    `word_tests` (per-occurrence checks, only for the files left)."""
    scans = tuple((token, _contains(token)) for token in substrings)

    def test(data: bytes) -> bool:
        memo = _absent[1] if _absent[0] is data else None
        for token, contains in scans:
            if memo is not None and token in memo:
                return False
            if not contains(data):
                if memo is not None:
                    memo.add(token)
                return False
        for word_test in word_tests:
            if not word_test(data):
                return False
        return True

    return test


_YNC = re.compile(rb"ync").search


def has_async_keyword(data: bytes) -> bool:
    """Whether `async` occurs as a whole word followed by optional whitespace and `=`
    (not `==`), outside comments: the legacy `x.cuda(async=True)` keyword. A loop over
    `find` rather than a regex: `re` is ~20x slower at scanning for a word boundary.
    Errs on the side of yes."""
    if _YNC(data) is None:  # `re` finds the rarer `y` first: 14 ms for torch's 49 MB against 25 ms
        return False
    find = data.find
    n = len(data)
    i = find(b"async")
    while i >= 0:
        if starts_word(data, i):
            j = i + 5
            while j < n:
                c = data[j]
                if c in GAP_BYTES:
                    j += 1
                elif c == BACKSLASH:  # a line continuation, or a JSON escape
                    j += 2 if j + 1 < n and data[j + 1] in JSON_ESCAPES else 1
                else:
                    break
            if j < n and data[j] == 61 and (j + 1 >= n or data[j + 1] != 61) \
                    and not in_comment(data, i):  # "=", not "=="
                return True
        i = find(b"async", i + 5)
    return False


_CODE_IN_LOWER = re.compile(rb"(?<![a-z0-9_])vf[0-9]")


def _has_suppression(data: bytes) -> bool:
    # Suppressions are case-insensitive. One lower() copy and two C scans is ~5x faster
    # than a case-insensitive regex, but still the most expensive test here: VF010 should
    # stay opt-in.
    low = data.lower()
    return b"volfix" in low or (b"vf" in low and _CODE_IN_LOWER.search(low) is not None)


@dataclass(frozen=True)
class Needs:
    """What a file's bytes must contain for a rule to fire: a description (for `volfix rule`
    and the docs) and the test. Rules name one in `Rule.NEEDS`."""

    description: str
    test: Predicate

    def __call__(self, data: bytes) -> bool:
        return self.test(data)


def _any(*tests: Predicate) -> Predicate:
    def test(data: bytes) -> bool:
        return any(t(data) for t in tests)

    return test


SUPPRESSION = Needs("`volfix` or a `VF<digit>` code (case-insensitive): a suppression comment",
                    _has_suppression)
# `torch` first: it comes early in the files that have it (the import block), and a file
# without it is rejected by one scan. A `Variable` call with a `volatile=` keyword is also
# read without an import of `torch.autograd`: the name may come from a star import (SPEC §2.9).
TORCH_VARIABLE = Needs(
    "`torch`, and `Variable` and `autograd` as words in code, `Variable` bound (an import, "
    "`autograd.Variable`) and used; or `Variable` and a `volatile=` keyword; or `Variable` "
    "and a star import (`from main import *`: a project module's `Variable`)",
    _any(_family((b"torch", b"Variable", b"autograd"),
                 (_variable_bound_and_used, code_word(b"autograd"))),
         _family((b"Variable", b"volatile"), (code_word(b"Variable"), code_word(b"volatile", keyword))),
         _family((b"Variable", b"import *"), (code_word(b"Variable"), lambda data: ANY_STAR_IMPORT.search(data)
                                             is not None))))
# Packages built on torch that the files of a project import instead of torch itself (the
# ones without "torch" in their name; `volfix.rules.volatile_attributes.TORCH_PACKAGES`).
_TORCH_PACKAGE = re.compile(rb"\b(?:allennlp|fastai|pyro|ignite|onmt|inferno|skorch)\b")


def names_torch(data: bytes) -> bool:
    """The bytes spell `torch` or a package built on it (allennlp, fastai, pyro, ...)."""
    return b"torch" in data or _TORCH_PACKAGE.search(data) is not None


TORCH_VOLATILE = Needs(
    "`torch` (or a package built on it: allennlp, fastai, pyro, ...), and `volatile` as a word "
    "in code: an attribute (not `.volatile.__get__`), a getattr name or dict key, or a keyword",
    _family((b"volatile",), (lambda data: b"torch" in data or _TORCH_PACKAGE.search(data) is not None,
                             code_word(b"volatile", attribute_key_or_keyword))))


def _attribute(data: bytes, start: int, end: int) -> bool:
    """`volatile` as an attribute (`x.volatile`), not a descriptor (`Tensor.volatile.__get__`)
    and not a string or a keyword: what VF201 and VF202 read and write."""
    return after_dot(data, start) and not data.startswith(b".__", end)


_VOLATILE_ATTRIBUTE = code_word(b"volatile", _attribute)


# The modules an import of torch or of a package built on it names
# (`rules.volatile_attributes.TORCH_PACKAGES`).
TORCH_MODULES = rb"(?:torch\w*|allennlp|fastai|pyro|ignite|onmt|inferno|skorch|pytorch_lightning)\b"
# Such an import at any indentation (a module-level one inside `try:` or `if`); a file without
# one has no tensors of its own to read `.volatile` of.
_TORCH_IMPORT_LINE = re.compile(rb"^[ \t]*(?:import|from)[ \t]+" + TORCH_MODULES, re.M)


def torchless_volatile_attribute(data: bytes) -> bool:
    """`x.volatile` in a file that imports neither torch nor a package built on it (a
    project's test helper asserting `batch.text.volatile`; a trainer setting
    `src_seq.volatile = True` on a torchtext batch, whose comments may well say "torch"), or a
    `def` with a `volatile` parameter in a file that names neither (a helper `def wrap(tensor,
    volatile, gpu)` whose `Variable` a fix removed with the import): a tensor's flag only when
    another file of its project imports torch (`Links.torch_project`)."""
    return _torchless_volatile_def(data) or (b"volatile" in data and _TORCH_IMPORT_LINE.search(data) is None
                                             and _VOLATILE_ATTRIBUTE(data))


def _torchless_volatile_def(data: bytes) -> bool:
    return b"volatile" in data and not names_torch(data) and VOLATILE_PARAM_DEF.search(data) is not None


# VF201/VF202: a `.volatile` read or write. In a file without torch it counts only in a project
# whose other files import it; the link step asks the project (`volfix.run.linking`).
VOLATILE_ATTRIBUTE = Needs(
    "`volatile` as a word in code, in the forms of `TORCH_VOLATILE`; in a file naming neither "
    "torch nor a package built on it, as an attribute (`batch.text.volatile`) in a project "
    "whose other files import torch",
    _any(TORCH_VOLATILE, torchless_volatile_attribute))
TORCH_VOLATILE_KEYWORD = Needs(
    "`torch` (or a package built on it), and `volatile=` in code: a keyword argument or a "
    "parameter's default; or, in a file naming neither, a `def` with a `volatile` parameter (the "
    "project decides, as for `VOLATILE_ATTRIBUTE`)",
    _any(_family((b"volatile",), (names_torch, code_word(b"volatile", keyword))), _torchless_volatile_def))
ASYNC_KEYWORD = Needs("the word `async`, then whitespace and `=`", has_async_keyword)
_ACCUMULATED_NAME = re.compile(rb'[ \t"]*([A-Za-z_]\w*)[ \t]*\+=')
# One scan each (a literal prefix makes `re` skip fast): `.data` ending a line (the last: a
# line of a notebook cell), and `[0]` after a name ending in `loss` or `cost`.
_DATA_LINE_END = re.compile(rb"\.data(?:\r|\n|\\n)")
_LOSS_INDEX = re.compile(rb"os[st]\[0\]")


def _loss_or_accumulator_indexed(data: bytes) -> bool:
    """`total_loss[0]` without `.data[0]`: `[0]` right after a name ending in `loss`/`cost`,
    or after a name that a line ending in `.data` adds to (`total_loss += raw_loss.data`,
    `total += len(x) * criterion(out, y).data`): the values VF401's plain index is about.
    Only `+=`: `x = x.data` then `x[0]` is everyday code (torch's own inductor)."""
    if _LOSS_INDEX.search(data) is not None:
        return True
    for end in _DATA_LINE_END.finditer(data):
        i = end.start()
        start = data.rfind(b"\n", 0, i) + 1
        escaped = data.rfind(b"\\n", start, i)  # a notebook cell's source in one JSON string
        match = _ACCUMULATED_NAME.match(data, escaped + 2 if escaped >= 0 else start)
        if match is not None and _indexed_name(data, match.group(1)):
            return True
    return False


def _indexed_name(data: bytes, name: bytes) -> bool:
    token = name + b"[0]"
    i = data.find(token)
    while i >= 0:
        if i == 0 or (data[i - 1] not in IDENT_BYTES and data[i - 1] != 46):
            return True
        i = data.find(token, i + 1)
    return False


TORCH_DATA_INDEX = Needs(
    "`.data[0]` in code; or `torch`, `.data` and `[0]` after a name ending in `loss`/`cost` or "
    "added to on a line ending in `.data`; or `.data` and `.numpy()[0]` or `.tolist()[0]`; or "
    "`.data.cpu()[0]`; or `.max(0)` or `.min(0)` and `[0]`",
    _any(_family((b".data[0]",), (_attribute_word(b"data", lambda data, end: data.startswith(b"[0]", end)),)),
         _family((b"torch", b"[0]", b".data"), (_loss_or_accumulator_indexed,)),
         _family((b".numpy()[0]", b".data"), ()),
         _family((b".tolist()[0]", b".data"), ()),
         _family((b".data.cpu()[0]",), ()),
         _family((b".max(0)", b"[0]"), ()),
         _family((b".min(0)", b"[0]"), ())))


def asks_other_files(data: bytes) -> bool:
    """Whether a file's bytes may ask the project what other files define: a VF401 read (what
    a function returns), a call of what a call made (VF501: `RoIAlignFunction(7, 7, 1 / 16)
    (features, rois)` of a class another module defines), or a `volatile=` whose region must
    not cover another file's training step (`train_step(G, opt, z)` imported from `trainer`)."""
    return TORCH_DATA_INDEX(data) or b")(" in data or TORCH_VOLATILE_KEYWORD(data)


# VF402: `x.data.resize_(...)` / `x.data.resize_as_(...)`.
DATA_RESIZE = Needs("`.data.resize_` in code", _family((b".data.resize_",), (
    _attribute_word(b"data", lambda data, end: data.startswith(b".resize_", end)),)))
# VF404: `torch.cat(values)` of 0-dim values.
CONCATENATION = Needs("`cat(` and `torch` in code", _family((b"cat(", b"torch"), (code_word(b"cat"),)))
# VF405: an element of a plain tensor (`.data`, a constructor's) as the key of a dict the file builds.
_PLAIN_TENSORS = (b".data", b"Tensor(", b"from_numpy(", b"arange(", b"randperm(")


def _names_plain_tensor(data: bytes) -> bool:
    return any(token in data for token in _PLAIN_TENSORS)


# An attribute keyed by a name (`lang.index2word[ni]`, `vocab.get(w)`, `w in self.stoi`): a dict
# another file of the project may build (`project.dict_attributes`). `.data` is a tensor's.
_ATTRIBUTE_KEY = re.compile(rb"\.([A-Za-z_]\w*)(?:\[\s*[A-Za-z_][\w.]*(?:\[[^\[\]\n]*\])*\s*\]"
                            rb"|\.(?:get|pop|setdefault)\(\s*[A-Za-z_]\w*)"
                            rb"|\bin[ \t]+[A-Za-z_][\w.]*\.([A-Za-z_]\w*)\b")


def attribute_keys(data: bytes) -> FrozenSet[str]:
    """The attributes `data` keys by a name or an element read (`_ATTRIBUTE_KEY`), but `data`
    and what a `for` iterates (`for g in optimizer.param_groups:`: no membership test)."""
    found = set()
    for m in _ATTRIBUTE_KEY.finditer(data):
        if m.group(2) is not None and b"for " in data[data.rfind(b"\n", 0, m.start()) + 1:m.start()]:
            continue
        found.add((m.group(1) or m.group(2)).decode("ascii"))
    return frozenset(found - {"data"})


def _keys_something(data: bytes) -> bool:
    return b"{" in data or b"dict(" in data or b"Counter(" in data or bool(attribute_keys(data))


ELEMENT_KEY = Needs(
    "`torch`; `.data` or a constructor (`Tensor(`, `from_numpy(`, `arange(`, `randperm(`); and `{`, `dict(`, "
    "`Counter(` or an attribute keyed by a name (`lang.index2word[ni]`) in code",
    _family((b"torch",), (_names_plain_tensor, _keys_something)))
# VF408: `str()` of an element of a plain tensor.
ELEMENT_TEXT = Needs(
    "`torch`; `.data` or a constructor (`Tensor(`, `from_numpy(`, `arange(`, `randperm(`); and `str(` in code",
    _family((b"torch",), (_names_plain_tensor, lambda data: b"str(" in data)))
# VF411: an element of a plain tensor passed to an environment's `step(`.
_ENVIRONMENT_STEP = re.compile(rb"(?i)env\w*\s*\.step\(")
ELEMENT_ACTION = Needs(
    "`torch` and `gym`; `.data` or a constructor (`Tensor(`, `from_numpy(`, `arange(`, `randperm(`); and "
    "`env.step(` (or another name holding `env`) in code",
    _family((b"torch", b"gym", b".step("),
            (_names_plain_tensor, lambda data: _ENVIRONMENT_STEP.search(data) is not None)))
# VF409: a ByteTensor mask written through.
def _mask_use(data: bytes) -> bool:
    return b"masked_" in data or b"index_put" in data or b"] =" in data or b"]=" in data


BYTE_MASK = Needs(
    "`.byte()` or `ByteTensor`, or `uint8` and `from_numpy` or `torch.uint8`; and `masked_`, `index_put` "
    "or `] =` in code",
    _any(_family((b"yte",), (lambda data: b".byte()" in data or b"ByteTensor" in data, _mask_use)),
         _family((b"uint8",), (lambda data: b"from_numpy" in data or b"torch.uint8" in data, _mask_use))))
# VF410: `/` of an integer tensor (a beam search's flat `topk` indices) by an integer.
_INTEGER_MAKERS = re.compile(rb"topk\(|\.max\(|\.min\(|\.sort\(|argmax|argmin|\.long\(\)|LongTensor|IntTensor"
                             rb"|nonzero|multinomial|randperm")
INTEGER_DIVISION = Needs(
    "`torch` and `/`; and a maker of integer tensors (`topk(`, `.max(`, `.sort(`, `argmax`, `.long()`, "
    "`LongTensor`, `nonzero`, `multinomial`, `randperm`...) in code",
    _family((b"torch", b"/"), (lambda data: _INTEGER_MAKERS.search(data) is not None,)))
# VF406: an element of a plain tensor kept in a name, then the tensor written in place.
ELEMENT_ALIAS = Needs(
    "`torch`; `.data` or a constructor (`Tensor(`, `from_numpy(`, `arange(`, `randperm(`); and `] =` or `_(` in "
    "code, or `.append(` with `-=`, `+=` or `.backward(`",
    _family((b"torch",), (_names_plain_tensor, lambda data: b"] =" in data or b"]=" in data or b"_(" in data or (
        b".append(" in data and (b"-=" in data or b"+=" in data or b".backward(" in data)))))
# VF403: `x.backward(g)` with a one-element gradient made by a constructor.
_GRADIENT_MAKERS = (b"Tensor(", b"ones(", b"tensor(")
BACKWARD_GRADIENT = Needs(
    "`.backward(` and a tensor constructor (`Tensor(`, `ones(`, `tensor(`)",
    _family((b".backward(",), (lambda data: any(token in data for token in _GRADIENT_MAKERS),)))
# VF302: `retain_variables=` in a call.
RETAIN_VARIABLES = Needs("`retain_variables` as a word in code", _family((b"retain_variables",), (
    code_word(b"retain_variables"),)))
# VF303: `x.multinomial()` without a sample count (only keywords other than `num_samples`).
_COUNTLESS = re.compile(rb"\(\s*(?:\)|replacement|generator)")
MULTINOMIAL_SAMPLES = Needs("`.multinomial(` followed by `)` or a `replacement=` or `generator=` keyword", _family(
    (b".multinomial(",), (_attribute_word(b"multinomial", lambda data, end: _COUNTLESS.match(data, end) is not None),)))
# VF304: `action.reinforce(reward)`.
STOCHASTIC_REINFORCE = Needs("`.reinforce(` in code", _family((b".reinforce(",), (_attribute_word(b"reinforce"),)))
# VF501: a subclass of `torch.autograd.Function` whose `forward` is a method.
LEGACY_FUNCTION = Needs(
    "`Function` and `def forward(self` in code, or `)(`: a call of what a call made (`Fn(7, 7)(x, rois)` of a "
    "class another module defines)",
    _any(_family((b"def forward(self", b"Function"), (code_word(b"Function"),)), _family((b")(",), ())))
# VF001/VF002: no token of their own; reported for files another rule needs (module docstring).
TOKENLESS = Needs("nothing of its own: reported for files another rule needs", lambda data: False)


def compile_prefilter(needs: Iterable[Optional[Needs]]) -> Predicate:
    """A function `bytes -> bool` telling whether a file may need analysis by the rules
    whose `NEEDS` are given. A rule without one makes every file a candidate."""
    needs = list(needs)
    if any(n is None for n in needs):
        return lambda data: True
    tests = tuple(dict.fromkeys(n for n in needs if n is not TOKENLESS))

    def may_need(data: bytes) -> bool:
        global _absent
        _absent = (data, set())
        try:
            for test in tests:
                if test(data):
                    return True
            return False
        finally:
            _absent = (None, set())

    return may_need


# A `volatile=` keyword whose value is a name (the flag parameter), or a Variable call that
# forwards `*args` (a wrapper): what a helper's file must spell.
HELPER_HINT = re.compile(rb"volatile\s*=\s*(?!(?:True|False|None|0|1)\b)(?:not\s+)?[A-Za-z_]"
                          rb"|Variable\((?:[^()]{0,200}?,)?\s*\*")


def helper_hint(data: bytes) -> bool:
    """`HELPER_HINT.search(data)`: the regex only for bytes spelling a literal every match
    starts with (five times faster on a tree whose files mostly spell neither)."""
    return (b"volatile" in data or b"Variable(" in data) and HELPER_HINT.search(data) is not None


# A `with` entering a grad-mode function of the project (`with utils.maybe_no_grad():`,
# `with no_grad_context():`), or one imported from a project module under any name
# (`from .core import no_grad_context as ngc`): torch's own spellings need no other file.
# The name must spell a grad mode (`no_grad`, `enable_grad`, `grad_mode`, `grad_enabled`,
# `inference_mode`): any `grad` (`from .debug import set_kernel_post_grad` in torch's own
# tree) linked whole packages for nothing (torch's tree: 0.5 -> 6.5 s).
_GRAD_MODE_NAME = rb"(?:no_?grad|enable_grad|grad_mode|grad_enabled|inference_mode)"
GRAD_FUNCTION_HINT = re.compile(rb"with\s+(?!torch\.|autograd\.)(?:[A-Za-z_][\w.]*)?" + _GRAD_MODE_NAME + rb"\w*\s*\("
                                rb"|^[ \t]*from[ \t]+(?!torch\b)[\w.]+[ \t]+import[ \t][^\n]*" + _GRAD_MODE_NAME,
                                re.M)
# `def to_variable(batch, cuda=False, volatile=False):` (its head on one line): a function with a
# `volatile` parameter, whose callers in other files VF105 must know before dropping it
# (In a notebook's JSON a line starts after `"` or an escaped `\n`.)
VOLATILE_PARAM_DEF = re.compile(rb'(?:^|"|\\n)[ \t]*def[ \t]+(\w+)[ \t]*\([^)\n]*\bvolatile\b', re.M)
