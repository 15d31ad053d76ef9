"""The Rule base class: a code, a name, a message and ruff-style documentation."""
from __future__ import annotations

from typing import ClassVar

from ..model import Applicability

DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety")


class Rule:
    """Base of every rule. Subclasses set CODE, MESSAGE and write the docstring."""

    CODE: ClassVar[str] = ""
    MESSAGE: ClassVar[str] = ""
    # The best applicability the rule's fix can have; None when it never offers one.
    FIX: ClassVar[Applicability | None] = None
    # Rules off by default run only when selected by their own code (or a prefix like "VF01").
    DEFAULT_ENABLED: ClassVar[bool] = True
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
        import inspect

        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        """The first sentence under 'What it does'."""
        text = cls.doc()
        marker = "## What it does"
        if marker in text:
            body = text.split(marker, 1)[1].strip().split("\n\n", 1)[0]
            return " ".join(body.split())
        return cls.MESSAGE

    @classmethod
    def url(cls) -> str:
        return f"{cls.URL_BASE}{cls.CODE.lower()}"
