"""Which attributes a file keys by a tensor element are dicts another file of its project builds
(`Links.dict_attributes`, VF405 across files): `data_loader.output_lang.index2word[ni]` in
`train.py`, where `datasets/data_loader.py` holds `self.index2word = {0: "SOS", 1: "EOS"}`.

An attribute counts when every assignment of `<anything>.name` in the project's Python files
gives it a dict or a set (a display, a comprehension, `dict(...)`, `OrderedDict()`,
`defaultdict(...)`, `Counter(...)`, `set(...)`), and at least one does. A file that assigns it
otherwise (`self.itos = vocab.itos`, `self.a, self.index2word = ...`, `x.index2word += ...`)
leaves it out: then no file is told it is a dict.
"""
from __future__ import annotations

import re
from typing import Callable, Dict, FrozenSet, Iterable, Optional, Sequence, Tuple

from ..files.prefilter import ELEMENT_KEY, attribute_keys

Reader = Callable[[str], Optional[bytes]]

# What makes a dict or a set, by the name a call spells (`collections.OrderedDict` too).
DICT_MAKERS = frozenset({"dict", "set", "frozenset", "OrderedDict", "defaultdict", "Counter"})


def asked_attributes(raw: Optional[bytes]) -> FrozenSet[str]:
    """The attributes a file may key by a tensor element (`prefilter.attribute_keys`), when
    VF405 reads it at all, but those the file assigns itself (VF405 reads its own assignments
    then: `self.layers = ...` above `self.layers[i]`)."""
    if raw is None or not ELEMENT_KEY(raw):
        return frozenset()
    keyed = attribute_keys(raw)
    if not keyed:
        return keyed
    return keyed - {m.group(1).decode("ascii") for pattern in _stores(keyed) for m in pattern.finditer(raw)}


def dict_attribute_links(run: Iterable[str], read_run: Reader, files: Sequence[str],
                         read: Reader) -> Dict[str, Tuple[str, ...]]:
    """Each file of `run` (`read_run` gives its bytes) -> the attributes it may key by an element
    that the Python files of `files` (read with `read`) assign dicts only."""
    asked = {path: asked_attributes(read_run(path)) for path in run}
    wanted = frozenset().union(*asked.values()) if asked else frozenset()
    if not wanted:
        return {}
    dicts = project_dicts(wanted, (raw for path in files if path.endswith(".py") for raw in (read(path),)
                                   if raw is not None))
    return {path: tuple(sorted(names & dicts)) for path, names in asked.items() if names & dicts}


def project_dicts(names: FrozenSet[str], sources: Iterable[bytes]) -> FrozenSet[str]:
    """Those of `names` that the sources assign, each time a dict or a set. Read from the bytes
    (a project may have hundreds of files; this runs in the link step): `x.name = {`,
    `x.name: Dict[str, int] = dict(`... give a dict; any other value, an augmented assignment
    (`x.name += [w]`) or a tuple target (`self.name, self.size = ...`) something else."""
    alternatives = _alternation(names)
    assign, augmented = _stores(names)
    tuple_target = re.compile(rb"(?m)^[ \t]*(?:[\w.\[\]]+[ \t]*,[ \t]*)*[\w.\[\]]*\.(" + alternatives
                              + rb")\b[ \t]*,[^\n=(]*=(?!=)")
    last_of_tuple = re.compile(rb",[ \t]*[\w.\[\]]*\.(" + alternatives + rb")\b[ \t]*=(?!=)")
    dicts, others = set(), set()
    dotted = [b"." + n.encode("ascii") for n in names]
    for raw in sources:
        if not any(d in raw for d in dotted):  # most files: one C-speed search per name
            continue
        for m in assign.finditer(raw):
            (dicts if _DICT_VALUE.match(raw, m.end()) else others).add(m.group(1).decode("ascii"))
        for pattern in (augmented, tuple_target, last_of_tuple):
            others.update(m.group(1).decode("ascii") for m in pattern.finditer(raw))
    return frozenset(dicts - others)


# A dict or a set made where it is assigned: a display or comprehension, or a call of a maker.
_DICT_VALUE = re.compile(rb"\{|(?:collections\.)?(?:" + b"|".join(sorted(n.encode("ascii") for n in DICT_MAKERS))
                         + rb")\(")


def _alternation(names: Iterable[str]) -> bytes:
    return b"|".join(re.escape(n.encode("ascii")) for n in sorted(names))


def _stores(names: Iterable[str]) -> Tuple["re.Pattern[bytes]", "re.Pattern[bytes]"]:
    """`x.name = ...` (annotated too; the value, after a backslash continuation, starts where the
    match ends) and `x.name += ...`, for `names`."""
    alternatives = _alternation(names)
    return (re.compile(rb"\.(" + alternatives + rb")\b[ \t]*(?::[^=\n]*)?=(?!=)[ \t]*(\\\n[ \t]*)?"),
            re.compile(rb"\.(" + alternatives + rb")\b[ \t]*(?:[-+*/%@&|^]|//|\*\*|<<|>>)="))
