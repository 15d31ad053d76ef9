"""Run a script under the 0.3 semantics, as `python script.py` would (runpy-like)."""
from __future__ import annotations

import builtins
import contextlib
import os
import sys
import tokenize
import types
from typing import Any, Dict, Iterator, List, Optional, Sequence

from ..syntax.async_keywords import find_async_keywords, replace_keywords


def read_script(path: str, rewrite_async: bool = True) -> str:
    """The script's text; when it does not compile because of `async=` keyword arguments
    (a keyword since Python 3.7), those PyTorch keywords renamed `non_blocking` (VF301's
    token-level rewrite: every other byte stays). Any other SyntaxError is raised."""
    with tokenize.open(path) as handle:  # honours a coding cookie, as `python script.py`
        source = handle.read()
    try:
        compile(source, path, "exec", dont_inherit=True)
    except SyntaxError:
        if not rewrite_async:
            raise
        sites = [site for site in find_async_keywords(source) if site.safe]
        if not sites:
            raise
        source = replace_keywords(source, sites, "non_blocking")
    return source


@contextlib.contextmanager
def _script_environment(path: str, argv: Sequence[str], run_name: str,
                        module: types.ModuleType) -> Iterator[None]:
    saved_argv, saved_path = sys.argv, list(sys.path)
    saved_module = sys.modules.get(run_name)
    sys.argv = [path, *argv]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    sys.modules[run_name] = module
    try:
        yield
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
        if saved_module is None:
            sys.modules.pop(run_name, None)
        else:
            sys.modules[run_name] = saved_module


@contextlib.contextmanager
def legacy_semantics(strict: bool = False) -> Iterator[None]:
    """Install the 0.3 semantics in this process; on exit torch is exactly as before.

    `torch.autograd.Variable` (and `torch.autograd.variable.Variable`) become the 0.3 class,
    so enter before the program runs `from torch.autograd import Variable`. Entries nest
    (the outermost exit restores). `strict=True` makes `Variable(variable)` raise as 0.3 did.
    The state is process-wide: threads started inside see it too.
    """
    from . import _runtime

    _runtime.enter(strict=strict)
    try:
        yield
    finally:
        _runtime.leave()


def run_path(path: str, argv: Optional[List[str]] = None, run_name: str = "__main__",
             rewrite_async: bool = True, strict: bool = False) -> Dict[str, Any]:
    """Run the script at `path` under `legacy_semantics()` and return its globals.

    As `python path args...`: `sys.argv` is `[path, *argv]`, the script's directory comes
    first on `sys.path` (sibling imports work) and the module is `sys.modules[run_name]`
    while it runs; all three are restored afterwards. `rewrite_async`: see `read_script`.
    """
    source = read_script(path, rewrite_async=rewrite_async)
    code = compile(source, path, "exec", dont_inherit=True)
    module = types.ModuleType(run_name)
    module.__dict__.update(__file__=path, __builtins__=builtins, __package__=None,
                           __spec__=None, __loader__=None, __cached__=None)
    with _script_environment(path, argv or [], run_name, module), legacy_semantics(strict=strict):
        exec(code, module.__dict__)
    return dict(module.__dict__)
