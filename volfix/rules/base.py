"""The Rule base class: a code, a message, ruff-style documentation, the bytes a file needs for
the rule to fire (the prefilter is built from these), and the handlers that detect it.

A rule is one module `volfix/rules/vfNNN_<name>.py` (the registry imports the modules named
so, and builds the prefilter and the rule docs from their classes). Its handlers are methods
decorated with `on(...)`,
naming the nodes they want; the module index collects those nodes in its one walk and the
engine calls each handler in source order with a `RuleContext`:

    class VariableTypeComparison(Rule):
        CODE = "VF112"
        NEEDS = prefilter.TORCH_VARIABLE

        @on(ast.Compare)
        def compare(self, node, ctx): ...

Rules that need the whole analysis first (VF104 reads the helper summaries) override
`after_planning(ctx)`.
"""
from __future__ import annotations

import ast
import inspect
from typing import Callable, ClassVar, FrozenSet, List, Optional, Tuple

from ..model import Applicability

DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety")

# `on(VARIABLE_CALL)`: calls of torch.autograd.Variable (any import form, aliases, wrappers).
VARIABLE_CALL = "variable-call"
# `on(MODULE)`: called once with the module node.
MODULE = "module"


class Handler:
    """Which nodes a handler method wants."""

    def __init__(self, kind, attr: Tuple[str, ...] = (), callee: Tuple[str, ...] = ()):
        self.kind = kind
        self.attr = attr
        self.callee = callee


def on(kind, *, attr=(), callee=()) -> Callable:
    """Mark a method as the handler of `kind` nodes (an ast class, VARIABLE_CALL or MODULE),
    optionally only attributes named `attr` / calls whose callee's last name is `callee`."""
    attrs = (attr,) if isinstance(attr, str) else tuple(attr)
    callees = (callee,) if isinstance(callee, str) else tuple(callee)

    def mark(method: Callable) -> Callable:
        method._volfix_handler = Handler(kind, attrs, callees)  # type: ignore[attr-defined]
        return method

    return mark


class Rule:
    """Base of every rule. Subclasses set CODE, MESSAGE, NEEDS and write the docstring."""

    CODE: ClassVar[str] = ""
    MESSAGE: ClassVar[str] = ""
    # The best applicability the rule's fix can have; None when it never offers one.
    FIX: ClassVar[Optional[Applicability]] = None
    # The fix's title (what `--show-fixes`, the editor's quick fix and the report say).
    FIX_TITLE: ClassVar[str] = ""
    # Rules off by default run only when selected by their own code (or a prefix like "VF01").
    DEFAULT_ENABLED: ClassVar[bool] = True
    # What a file's bytes must contain for the rule to fire (`volfix.files.prefilter`); None: any
    # file may need it (then no file is skipped).
    NEEDS: ClassVar[Optional[object]] = None
    # What a parsed file must spell for the rule to fire: NAMES as an identifier, attribute,
    # keyword argument or imported name, STRINGS as a string constant. A file that spells
    # none of any enabled rule's is not analysed (`engine.analyse`; a docstring that says
    # "Variable" is no code). None: every parsed file is analysed.
    NAMES: ClassVar[Optional[FrozenSet[str]]] = None
    STRINGS: ClassVar[FrozenSet[str]] = frozenset()
    URL_BASE: ClassVar[str] = "https://github.com/volfix/volfix/blob/main/docs/rules.md#"

    @classmethod
    def name(cls) -> str:
        """kebab-case name derived from the class name (VolatileInVariableCall -> volatile-in-variable-call)."""
        out = []
        for i, ch in enumerate(cls.__name__):
            if ch.isupper() and i:
                out.append("-")
            out.append(ch.lower())
        return "".join(out)

    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        """The first paragraph under 'What it does'."""
        text = cls.doc()
        marker = "## What it does"
        if marker in text:
            body = text.split(marker, 1)[1].strip().split("\n\n", 1)[0]
            return " ".join(body.split())
        return cls.MESSAGE

    @classmethod
    def section(cls, title: str) -> str:
        """The body of one documentation section ('' when absent)."""
        doc = cls.doc()
        marker = f"## {title}"
        if marker not in doc:
            return ""
        return doc.split(marker, 1)[1].split("\n## ", 1)[0].strip()

    @classmethod
    def url(cls) -> str:
        return f"{cls.URL_BASE}{cls.CODE.lower()}"

    @classmethod
    def handlers(cls) -> List[Tuple[Handler, str]]:
        """(what, method name) for every handler of the rule (found once per class)."""
        found = cls.__dict__.get("_handlers")
        if found is None:
            found = []
            for name, member in inspect.getmembers(cls, predicate=inspect.isfunction):
                handler = getattr(member, "_volfix_handler", None)
                if handler is not None:
                    found.append((handler, name))
            cls._handlers = found  # type: ignore[attr-defined]
        return list(found)

    def after_planning(self, ctx) -> None:
        """Called once the regions are planned (for rules that read the whole analysis)."""


def handles_node(handler: Handler, node: ast.AST) -> bool:
    """Does `node` (already of the handler's kind) pass the handler's name filters?"""
    if handler.attr and getattr(node, "attr", None) not in handler.attr:
        return False
    return True
