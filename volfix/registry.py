"""Finds every Rule subclass in the volfix.rules package; codes must be unique."""
from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import Dict, FrozenSet, Iterable, Type

from .rules.base import Rule


@functools.lru_cache(maxsize=None)
def rules() -> Dict[str, Type[Rule]]:
    """code -> rule class, sorted by code."""
    from . import rules as package

    for info in pkgutil.iter_modules(package.__path__):
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
    from .config import VolfixConfigError

    codes = frozenset(codes)
    out = set()
    for raw in selectors:
        sel = raw.strip().upper()
        if not sel:
            continue
        if sel == "ALL":
            out |= {c for c in codes if _default_enabled(c)}
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

