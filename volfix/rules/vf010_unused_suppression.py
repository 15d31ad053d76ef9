"""VF010: suppression comments that suppress nothing (reported by volfix.settings.suppression)."""
from ..files import prefilter
from ..model import Applicability
from .base import Rule


class UnusedSuppression(Rule):
    """
    ## What it does
    Finds `# volfix: ignore` and `# noqa` comments that suppress no volfix finding on their
    line, and the codes in them that suppress nothing (`# volfix: ignore[VF101, VF201]` on a
    line where only VF101 is reported). Not enabled by default: select it with
    `--extend-select VF010`.

    ## Why is this bad?
    A suppression outlives the code it was written for. Once the legacy call is migrated, a
    stale `# noqa: VF101` silently hides the next finding on that line. A bare `# noqa`, or
    one naming only other tools' codes (`# noqa: E501`), is never reported: volfix cannot
    know whether another tool needs it.

    ## Example
    ```python
    with torch.no_grad():
        out = model(batch)  # volfix: ignore[VF101]
    ```

    ## Use instead
    ```python
    with torch.no_grad():
        out = model(batch)
    ```

    ## Fix safety
    Safe: the fix deletes the directive, or only its unused codes, keeping other tools' codes
    (`# noqa: E501, VF101` becomes `# noqa: E501`) and any comment that follows the
    directive. When other text follows the directive inside the same comment, no fix is
    offered.
    """

    CODE = "VF010"
    DEFAULT_ENABLED = False
    MESSAGE = "unused suppression comment"
    FIX = Applicability.SAFE
    FIX_TITLE = "Remove the unused suppression"
    NEEDS = prefilter.SUPPRESSION
    NAMES: frozenset = frozenset()  # reported before or after the analysis, not by it
