"""VF001: a file that cannot be parsed as Python 3 (reported by the engine)."""
from ..files import prefilter
from .base import Rule


class UnparsableFile(Rule):
    """
    ## What it does
    Reports a file that cannot be parsed as Python 3, naming the parser's reason;
    Python 2 files (print statements, `except E, e:`, backticks) are named as such.

    ## Why is this bad?
    volfix cannot analyse or fix what it cannot parse, so legacy `volatile` code in the file
    stays as it is. Files that Python 3 refuses would also fail when PyTorch 2.x imports them.

    ## Example
    ```python2
    print "loss", loss.data[0]
    ```

    ## Use instead
    ```python
    print("loss", loss.item())
    ```

    ## Fix safety
    No fix is offered: port the file to Python 3 first, then run volfix again. For a Python 2
    file use a tool that reads Python 2: `2to3` (in the standard library up to Python 3.12)
    or `futurize` (the `future` package); `pyupgrade` cannot help, it only reads files that
    already parse as Python 3. `async=` keywords are not a reason for this code: VF301 repairs them
    (but an `async` *parameter* is: renaming it would change an API). Only files that could hold
    legacy code (they mention `Variable` with an import of `torch.autograd`, `volatile` with
    torch, or an `async=` keyword) are parsed, so only those are reported: volfix is not a
    syntax checker for the rest of the tree.
    """

    CODE = "VF001"
    MESSAGE = "File cannot be parsed"
    NEEDS = prefilter.TOKENLESS
    NAMES: frozenset = frozenset()  # reported before or after the analysis, not by it
