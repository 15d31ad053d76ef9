"""The whole migration as a libcst codemod, for libcst's own codemod tool:

    volfix fix --select VF301 src/
    python -m libcst.tool codemod --no-format -x volfix.codemod.VolatileMigration src/
    python -m libcst.tool codemod --no-format -x volfix.codemod.VolatileMigration --unsafe-fixes train.py

`--no-format`: the tool runs black on changed files by default (volfix keeps the formatting).
libcst's tool parses every file with libcst before the codemod runs, and libcst cannot parse
`async=` keywords (VF301): a file with them fails in the tool, never reaching this codemod, so
they are renamed first with `volfix fix --select VF301` (a token-level pass, no parse needed).

or from Python through libcst's API (`VolatileMigration(CodemodContext()).transform_module(tree)`).
Each file is migrated on its own, with the settings of its nearest `pyproject.toml` /
`volfix.toml` and the options given; what volfix cannot fix is reported as a codemod warning.
Helpers whose callers live in other files are linked only by `volfix fix`, which sees the
whole project.
"""
from __future__ import annotations

import argparse
import os
from typing import Optional, Sequence

import libcst as cst
from libcst.codemod import CodemodCommand, CodemodContext, SkipFile

from .settings.config import Config
from .settings.config_file import load_config, merge_cli
from .engine import fix_text


class VolatileMigration(CodemodCommand):
    DESCRIPTION = ("Migrate PyTorch code written for the `volatile` era (PyTorch <= 0.3) to torch.no_grad(), "
                   "torch.set_grad_enabled, requires_grad_() and detach() (volfix).")

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.add_argument("--unsafe-fixes", action="store_true", default=False,
                                help="Apply the unsafe fixes too (see `volfix rule CODE`).")
        arg_parser.add_argument("--select", default=None, help="Rules to run (comma-separated codes or prefixes).")
        arg_parser.add_argument("--extend-select", default=None, help="Rules to run in addition.")
        arg_parser.add_argument("--legacy-semantics", action="store_true", default=False,
                                help="Genuine 0.3 code: every Variable(x) wraps a plain tensor.")

    def __init__(self, context: CodemodContext, unsafe_fixes: bool = False, select: Optional[str] = None,
                 extend_select: Optional[str] = None, legacy_semantics: bool = False,
                 config: Optional[Config] = None) -> None:
        super().__init__(context)
        self.unsafe_fixes = unsafe_fixes
        self.options = {"select": _codes(select), "extend_select": _codes(extend_select),
                        "legacy_semantics": True if legacy_semantics else None}
        self.config = config

    def config_for(self, path: Optional[str]) -> Config:
        if self.config is not None:
            return self.config
        base = load_config(None, os.path.dirname(os.path.abspath(path)) if path else os.getcwd())
        return merge_cli(base, **self.options)

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        path = self.context.filename
        result = fix_text(tree.code, path=path or "<codemod>", config=self.config_for(path),
                          unsafe_fixes=self.unsafe_fixes)
        for d in result.diagnostics:
            self.warn(f"{d.location.row}:{d.location.column}: {d.code} {d.text}")
        if not result.changed:
            raise SkipFile("no legacy autograd code to migrate")
        return cst.parse_module(result.fixed_source)


def _codes(value: Optional[str]) -> Optional[Sequence[str]]:
    if not value:
        return None
    return tuple(part.strip() for part in value.split(",") if part.strip())
