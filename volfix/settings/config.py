"""Configuration: `[tool.volfix]` and command-line options, resolved into one `Config`.

(The loader from pyproject.toml / volfix.toml lives below the dataclass.)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, Optional, Tuple

from ..rules import registry
from ..errors import VolfixConfigError

__all__ = ["Config", "DEFAULT_CONFIG", "NO_GRAD_STYLES", "VolfixConfigError"]

NO_GRAD_STYLES = ("auto", "with", "decorator")


@dataclass(frozen=True)
class Config:
    # Rule selection, as in ruff: prefixes such as "VF1" or "VF101", or "ALL" (every rule).
    # The default, "VF", is every rule that is on by default: a prefix shorter than a code
    # does not switch on VF010, VF104 or VF407.
    select: Tuple[str, ...] = ("VF",)
    ignore: Tuple[str, ...] = ()
    extend_select: Tuple[str, ...] = ()
    exclude: Tuple[str, ...] = ()
    extend_exclude: Tuple[str, ...] = ()
    # glob -> codes
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    respect_gitignore: bool = True
    unsafe_fixes: bool = False
    no_grad_style: str = "auto"
    # Treat every Variable(x) argument as a plain tensor (genuine 0.3 code guarantees it),
    # which makes VF110/VF111 fixes safe.
    legacy_semantics: bool = False
    # Where the config was read from (for messages), or None.
    source: Optional[str] = None

    def enabled_codes(self) -> FrozenSet[str]:
        """The rule codes this configuration runs (before per-file ignores)."""
        codes = registry.all_codes()
        chosen = registry.expand_selectors(self.select, codes) | registry.expand_selectors(self.extend_select, codes)
        return frozenset(chosen - registry.expand_selectors(self.ignore, codes))

    def cache_key(self) -> str:
        """A stable text that changes whenever a setting that affects results changes."""
        return repr((sorted(self.enabled_codes()), self.per_file_ignores, self.no_grad_style,
                     self.legacy_semantics))


DEFAULT_CONFIG = Config()
