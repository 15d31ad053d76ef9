"""Finds every Rule subclass in the volfix.rules package (codes must be unique), and builds
what is made of the rules: the selection of codes and the bytes prefilter."""
from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import Dict, FrozenSet, Iterable, Optional, Tuple, Type

from ..errors import VolfixConfigError
from ..files.prefilter import Predicate, compile_prefilter
from .base import Rule


@functools.lru_cache(maxsize=None)
def rules() -> Dict[str, Type[Rule]]:
    """code -> rule class, sorted by code. A rule is a module `vfNNN_<name>.py` of the
    package; only those are imported here, not the helpers they share (`context`, the
    engine's view of a module, is imported with the engine: a check of a tree walks and
    scans it meanwhile)."""
    from .. import rules as package

    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("vf"):
            importlib.import_module(f"{package.__name__}.{info.name}")
    found: Dict[str, Type[Rule]] = {}
    stack = list(Rule.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if not cls.CODE:
            continue
        if cls.CODE in found and found[cls.CODE] is not cls:
            raise RuntimeError(f"duplicate rule code {cls.CODE}: {found[cls.CODE].__name__}, {cls.__name__}")
        found[cls.CODE] = cls
    return dict(sorted(found.items()))


def all_codes() -> FrozenSet[str]:
    return frozenset(rules())


def get(code: str) -> Type[Rule]:
    return rules()[code]


def expand_selectors(selectors: Iterable[str], codes: Iterable[str]) -> FrozenSet[str]:
    """Turn selectors ("ALL", "VF", "VF1", "VF101") into codes; unknown ones raise."""
    codes = frozenset(codes)
    out = set()
    for raw in selectors:
        sel = raw.strip().upper()
        if not sel:
            continue
        if sel == "ALL":  # as in ruff: every rule, the ones off by default too
            out |= codes
            continue
        matched = {c for c in codes if c.startswith(sel)}
        if not matched:
            raise VolfixConfigError(f"unknown rule selector `{raw}`")
        # A broad prefix ("VF", "VF0") does not switch on rules that are off by default.
        out |= {c for c in matched if _default_enabled(c) or len(sel) >= 4}
    return frozenset(out)


def _default_enabled(code: str) -> bool:
    rule = rules().get(code)
    return rule is None or rule.DEFAULT_ENABLED


@functools.lru_cache(maxsize=32)
def prefilter(enabled_codes: FrozenSet[str]) -> Predicate:
    """`bytes -> bool`: may a file with these bytes hold a finding of these rules?"""
    known = rules()
    return compile_prefilter(known[code].NEEDS for code in sorted(enabled_codes) if code in known)


@functools.lru_cache(maxsize=32)
def tree_words(enabled_codes: FrozenSet[str]) -> Optional[Tuple[FrozenSet[str], FrozenSet[str]]]:
    """(names, strings) a parsed file must spell for one of these rules to fire (`Rule.NAMES`,
    `Rule.STRINGS`); None when some rule does not say (then every file is analysed)."""
    known = rules()
    chosen = [known[code] for code in enabled_codes if code in known]
    if any(rule.NAMES is None for rule in chosen):
        return None
    return (frozenset().union(*(rule.NAMES for rule in chosen)),  # type: ignore[arg-type]
            frozenset().union(*(rule.STRINGS for rule in chosen)))


def requirements_for(code: str) -> Optional[str]:
    """What a file needs for `code` to fire, or None when the rule does not say (then every
    file is a candidate)."""
    needs = rules()[code].NEEDS
    return needs.description if needs is not None else None


def may_need_analysis(data: bytes, enabled_codes: Iterable[str]) -> bool:
    """Whether `data` (a file's raw bytes) could produce a finding for `enabled_codes`."""
    return prefilter(frozenset(enabled_codes))(data)
