"""VF104 (opt-in): a helper parameter that only chose `volatile=`."""
import ast
from typing import Dict, List, Optional, Set, Tuple

from ..files import prefilter
from ..fixes.edits import TextEdit
from ..flow.calls import argument_for, bound_positional, call_sites, parameter_defaults
from ..model import Applicability
from .base import Rule


class VolatileFlagParameter(Rule):
    """
    ## What it does
    Finds a helper's parameter that only selected `volatile`:
    `get_batch(source, i, evaluation=False)` creating `Variable(..., volatile=evaluation)`.
    Off by default: select it (`--extend-select VF104`) to drop such parameters.

    ## Why is this bad?
    Once VF103 moved the decision to the call sites (a `torch.no_grad()` region where a
    call passes a true flag), the parameter does nothing: every call still passes
    `evaluation=True`, which reads as if it mattered.

    ## Example
    ```python
    import torch
    from torch.autograd import Variable


    def get_batch(source, i, evaluation=False):
        return Variable(source[i:i + 35], volatile=evaluation)


    for i in range(0, len(val_data), 35):
        data = get_batch(val_data, i, evaluation=True)
        print(model(data).sum())
    ```

    ## Use instead
    ```python
    import torch


    def get_batch(source, i):
        return source[i:i + 35]


    for i in range(0, len(val_data), 35):
        with torch.no_grad():
            data = get_batch(val_data, i)
            print(model(data).sum())
    ```

    ## Fix safety
    Unsafe, and only offered when every use of the helper is a call in the same file that
    volfix can edit (no call in another file of the project, no call passing later arguments
    by position, no use other than a call): the fix applies the helper's VF103 fix, removes
    the parameter from the signature and its argument from every call. Callers outside the
    project that still pass it would raise a `TypeError`, which is why volfix keeps
    signatures unless this rule is selected.

    ## References
    - [PyTorch 0.4.0 migration guide](https://pytorch.org/blog/pytorch-0_4_0-migration-guide/)
    """

    CODE = "VF104"
    MESSAGE = "A parameter that only selected `volatile` is unused once the flag is gone"
    FIX = Applicability.UNSAFE
    FIX_TITLE = "Drop the parameter and its arguments, and apply the helper's fix"
    DEFAULT_ENABLED = False
    NEEDS = prefilter.TORCH_VARIABLE
    NAMES = frozenset({"Variable"})

    def after_planning(self, ctx) -> None:
        groups: Dict[Tuple[int, str], list] = {}
        for record in ctx.helpers:
            if record.flag.param is None or not isinstance(record.source.node, ast.Call) \
                    or record.source.call_site or record.local:
                continue
            groups.setdefault((id(record.fn), record.flag.param), []).append(record)
        for (_, param), members in groups.items():
            fn = members[0].fn
            calls = {id(m.source.node) for m in members}
            if self.used_otherwise(ctx, fn, param, calls):
                continue  # the parameter still means something without the flag
            start, end = self.param_span(ctx, fn, param)
            finding = ctx.report_span(
                self.CODE, start, end,
                message=f"Parameter `{param}` of `{fn.name}()` only chose `volatile=`, which PyTorch 0.4 removed: "
                        f"it is unused once the flag is gone")
            findings = [m.source.finding for m in members]
            why = self.blocker(ctx, fn, param, members)
            if why is None and any(f.fix is None for f in findings):
                why = "the flag's own fix is not available (see the VF103 finding)"
            if why is not None:
                finding.note = f"no fix: {why}"
                continue
            edits = self.drop_parameter(ctx, fn, param)
            if edits is None:
                finding.note = "no fix: the signature cannot be edited safely"
                continue
            sites, _ = call_sites(ctx.index, fn)
            for site in sites:
                arg, _known = argument_for(ctx.index, site, fn, param)
                node = next((k for k in site.keywords if k.arg == param), None) or \
                    next((a for a in site.args if a is arg), None)
                if node is not None:
                    edits += ctx.expr.drop_argument(site, node)
            plan = ctx.edit_fix(Applicability.UNSAFE, self.FIX_TITLE, edits)
            for f in findings:
                plan = plan.merged(f.fix)
            plan.applicability = Applicability.UNSAFE
            finding.fix = plan
            finding.note = ("unsafe fix: a caller outside the project that passes the parameter would raise "
                            "a TypeError")

    @staticmethod
    def used_otherwise(ctx, fn, param: str, calls: Set[int]) -> bool:
        """Is `param` read anywhere but as the `volatile=` of these Variable calls?"""
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and node.id == param and not isinstance(node.ctx, ast.Del):
                kw = ctx.index.parents.get(node)
                call = ctx.index.parents.get(kw) if isinstance(kw, ast.keyword) else None
                if not (isinstance(kw, ast.keyword) and kw.arg == "volatile" and id(call) in calls):
                    return True
        return False

    @staticmethod
    def blocker(ctx, fn, param: str, members: list) -> Optional[str]:
        for m in members:
            report = m.report
            if report.elsewhere or report.outside or report.unresolved or report.through:
                return "the helper is also used where its arguments cannot be edited from this file"
        sites, other = call_sites(ctx.index, fn)
        if other:
            return "the helper is also used other than by a call"
        args = fn.args
        positional = [a.arg for a in args.posonlyargs + args.args]
        if param in positional:
            if param in [a.arg for a in args.posonlyargs] or len(positional) == 1:
                return "the parameter cannot be removed from the signature here"
            index = bound_positional(fn, ctx.index.method_class(fn) is not None).index(param)
            for site in sites:
                if len(site.args) > index + 1 or any(isinstance(a, ast.Starred) for a in site.args):
                    return f"the call at line {site.lineno} passes arguments after it by position"
        elif param not in [a.arg for a in args.kwonlyargs][1:]:
            return "the parameter cannot be removed from the signature here"
        return None

    @staticmethod
    def param_span(ctx, fn, param: str) -> Tuple[int, int]:
        args = fn.args
        for a in args.posonlyargs + args.args + args.kwonlyargs:
            if a.arg == param:
                return ctx.src.start(a), ctx.src.end(a)
        return ctx.src.start(fn), ctx.src.start(fn)

    @staticmethod
    def drop_parameter(ctx, fn, param: str) -> Optional[List]:
        """Remove `, param=default` (or `param=default, `) from the signature."""
        args = fn.args
        positional = args.posonlyargs + args.args
        defaults = parameter_defaults(fn)
        items = positional if param in [a.arg for a in positional] else args.kwonlyargs
        index = next(i for i, a in enumerate(items) if a.arg == param)
        node = items[index]
        end = ctx.src.end(defaults.get(param, node))
        if index == 0:
            return None
        previous = items[index - 1]
        start = ctx.src.end(defaults.get(previous.arg, previous))
        if ctx.src.comments_between(start, end):
            return None
        return [TextEdit(start, end, "")]
