"""parse -> detect -> plan edits -> apply -> verify. (Being written: signatures are final.)"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

from .config import Config
from .model import FileResult


@dataclass
class ModuleContext:
    """What a text inherits from outside itself: used for notebook cells.

    `imports` maps local names to qualified names bound by earlier cells
    (e.g. {"Variable": "torch.autograd.Variable", "torch": "torch"}).
    `may_add_imports`: whether a fix may add `import torch`/`import contextlib` to this text.
    `may_remove_imports`: whether a fix may remove the now-unused Variable import from this text.
    """

    imports: dict = field(default_factory=dict)
    may_add_imports: bool = True
    may_remove_imports: bool = True


def check_text(source: Union[str, bytes], *, path: str, config: Config, with_fixes: bool = False,
               context: Optional[ModuleContext] = None) -> FileResult:
    raise NotImplementedError


def fix_text(source: Union[str, bytes], *, path: str, config: Config, unsafe_fixes: bool = False,
             context: Optional[ModuleContext] = None) -> FileResult:
    raise NotImplementedError


def module_imports(text: str, context: Optional[ModuleContext] = None) -> dict:
    """The name -> qualified-name bindings in effect after running `text` (module level)."""
    raise NotImplementedError


def process_file(path: str, *, config: Config, mode: str = "check", unsafe_fixes: bool = False,
                 display_path: Optional[str] = None) -> FileResult:
    """Read one file (.py/.pyi/.ipynb), check or fix it, write it back in fix mode."""
    raise NotImplementedError
