"""parse -> detect -> plan (SPEC §3): one document's findings, with their fixes as plans.

Every rule's handlers run on the nodes they asked for (`Rule.on`), the planner places the
regions of the volatile sources they registered, and each finding becomes a `Diagnostic`.
Fix edits are rendered only when asked (`with_fixes`): a plain check never imports libcst.
"""
from __future__ import annotations

import ast
import dataclasses
import re
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Tuple

from ..files import prefilter
from ..rules import registry
from ..findings import Finding, FixPlan
from ..flow.helper_calls import HELPER_CALL, callee_names
from ..model import Applicability, Diagnostic, Fix, Location
from ..rules.base import MODULE, VARIABLE_CALL, handles_node
from ..rules.context import RuleContext
from ..syntax import names as nm
from ..syntax.document import Document, ParseError, compile_error, parse_document

_RANK = {Applicability.SAFE: 0, Applicability.UNSAFE: 1, Applicability.DISPLAY_ONLY: 2}
_SUPPRESSION = re.compile(r"(?i)volfix\s*:\s*ignore|noqa\s*:[^\n]*\bVF\d")


@dataclass
class FixGroup:
    """Findings fixed together (they share a region), and their merged plan."""

    key: object
    applicability: Applicability
    diagnostics: List[Diagnostic]
    plan: FixPlan


@dataclass
class Analysis:
    text: str
    diagnostics: List[Diagnostic]
    groups: List[FixGroup] = field(default_factory=list)
    doc: Optional[Document] = None
    ctx: Optional[RuleContext] = None
    # VF407's reads when VF407 is not selected: a clean `check` names how many it left undecided
    undecided: int = 0


@dataclass
class Options:
    """What an analysis needs besides the text."""

    enabled: frozenset
    legacy_semantics: bool = False
    no_grad_style: str = "auto"
    links: object = None  # volfix.flow.project.Links
    with_fixes: bool = False  # render every fix's edits into its Diagnostic


def analyse(text: str, options: Options, doc: Optional[Document] = None,
            parse_errors: Tuple[ParseError, ...] = ()) -> Analysis:
    """Findings of `text` (or of `doc`, a notebook's joined cells)."""
    if doc is None:
        parsed = parse_document(text)
        if isinstance(parsed, ParseError):
            found = [] if parsed.code == "VF001" and not parse_failure_in_scope(text, options) \
                else [parse_diagnostic(text, parsed)]
            return finish(text, found, [], options, None)
        doc = parsed
    diagnostics = [parse_diagnostic(text, e) for e in parse_errors]
    words = registry.tree_words(frozenset(options.enabled)) if options.links is None else None
    if words is not None and not spells_any(doc.tree, *words):
        # Nothing any enabled rule starts from is in the code (the prefilter's words were in
        # docstrings or prose): no index, no analysis. Suppressions are still checked.
        return finish(doc.text, diagnostics, [], options, doc)
    ctx = detect(doc, options)
    groups: Dict[object, FixGroup] = {}
    for finding in ctx.findings:
        if finding.code not in options.enabled:
            continue
        diagnostic = to_diagnostic(doc, finding, ctx, options)
        diagnostics.append(diagnostic)
        plan = finding.fix
        if plan is None:
            continue
        key = ("group", finding.group) if finding.group is not None else ("finding", finding.start, finding.code)
        group = groups.get(key)
        if group is None:
            groups[key] = FixGroup(key, plan.applicability, [diagnostic], plan)
        else:
            group.diagnostics.append(diagnostic)
            group.plan = group.plan.merged(plan)
            if _RANK[plan.applicability] > _RANK[group.applicability]:
                group.applicability = plan.applicability
    diagnostics = _group_applicability(diagnostics, groups)
    # (a notebook's cells are checked one by one when fixed: its joined text is no module)
    if groups and not any(part.number is not None for part in doc.parts):
        error = compile_error(doc.text)
        if error is not None:
            # `fix` never hands back a text that does not compile, and this one did not to begin
            # with: no fix is offered, and each finding says why
            line = f", line {error.lineno}" if error.lineno else ""
            why = f"no fix: the file does not compile ({error.msg}{line})"
            fixed = {id(d) for g in groups.values() for d in g.diagnostics}
            diagnostics = [dataclasses.replace(d, fix=None, note=f"{why}; {d.note}" if d.note else why)
                           if id(d) in fixed else d for d in diagnostics]
            groups = {}
    analysis = finish(doc.text, diagnostics, list(groups.values()), options, doc)
    analysis.ctx = ctx
    if "VF401" in options.enabled and "VF407" not in options.enabled:
        analysis.undecided = sum(f.code == "VF407" for f in ctx.findings)
    return analysis


def _group_applicability(diagnostics: List[Diagnostic], groups: Dict[object, "FixGroup"]) -> List[Diagnostic]:
    """A finding fixed only together with an unsafe one (a helper's unwrap whose caller's region
    is unsafe) is unsafe too: `check` marked it fixable and `fix` applied nothing. Its note
    names the finding that decides."""
    swapped: Dict[int, Diagnostic] = {}
    for group in groups.values():
        worse = [d for d in group.diagnostics if d.fix is not None and d.fix.applicability is group.applicability]
        if not worse:
            continue
        for d in group.diagnostics:
            if d.fix is None or _RANK[d.fix.applicability] >= _RANK[group.applicability]:
                continue
            why = f"unsafe fix: fixed together with the unsafe fix of line {worse[0].location.row}"
            swapped[id(d)] = dataclasses.replace(d, fix=dataclasses.replace(d.fix, applicability=group.applicability),
                                                 note=f"{why}; {d.note}" if d.note else why)
        group.diagnostics = [swapped.get(id(d), d) for d in group.diagnostics]
    return [swapped.get(id(d), d) for d in diagnostics] if swapped else diagnostics


def spells_any(tree: ast.AST, names: FrozenSet[str], strings: FrozenSet[str]) -> bool:
    """Does the tree spell one of `names` (an identifier, attribute, keyword argument or
    imported name) or `strings` (a string constant)? One walk without the index: a tenth of
    the cost of analysing a file whose words were all in its docstrings."""
    AST, Name, Constant, Attribute, keyword, alias = ast.AST, ast.Name, ast.Constant, ast.Attribute, ast.keyword, ast.alias
    stack = [tree]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is Name:
            if node.id in names:
                return True
            continue
        if kind is Constant:
            if node.value in strings and type(node.value) is str:
                return True
            continue
        if (kind is Attribute and node.attr in names) or (kind is keyword and node.arg in names) \
                or (kind is ast.arg and node.arg in names) \
                or (kind is alias and (node.name.rpartition(".")[2] in names or node.asname in names)):
            return True
        for name in node._fields:
            value = getattr(node, name, None)
            if type(value) is list:
                stack.extend(item for item in value if isinstance(item, AST))
            elif isinstance(value, AST):
                stack.append(value)
    return False


def detect(doc: Document, options: Options) -> RuleContext:
    index = doc.index()
    links = options.links
    if links is not None:
        links.bind_star_imports(index.module_names)
        index.grad_shims.update(links.grad_shims)
        index.scalar_returns.update(links.scalar_returns)
    ctx = RuleContext(doc, index, legacy_semantics=options.legacy_semantics,
                      no_grad_style=options.no_grad_style, links=links)
    rules = [cls() for cls in registry.rules().values()]
    callees = variable_callees(ctx)
    helper_names = callee_names(links, index.module_names) if links is not None else []
    called = links.helper_map().get(nm.METHOD_PREFIX + "__call__") if links is not None else None
    if called is not None and called.param:  # `iterator(instances, for_training=False)`: an instance's call
        helper_names += [name for name, calls in index.calls.items()
                         if any(k.arg == called.param for c in calls for k in c.keywords)]
    for rule in rules:
        for handler, name in rule.handlers():
            method = getattr(rule, name)
            for node in nodes_for(handler, index, callees, helper_names):
                if handles_node(handler, node):
                    method(node, ctx)
    from ..fixes.planner import Planner

    Planner(ctx).plan()
    for rule in rules:
        rule.after_planning(ctx)
    ctx.findings.sort(key=lambda f: (f.start, f.code))
    return ctx


def variable_callees(ctx: RuleContext) -> List[str]:
    """Callee names that may call torch's Variable here: `Variable`, its import aliases and
    the project's wrappers."""
    module = ctx.index.module_names
    names = {"Variable"}
    for name in module.final:
        if any(nm.is_variable(q) for q in module.every(name)):
            names.add(name)
    names.update(ctx.wrappers())
    if ctx.links is not None:  # a wrapper in another file (`from utils import wrap`; `wrap(x, volatile=True)`)
        wrappers = {qual for qual, sig in ctx.links.helpers if sig.wrapper}
        names.update(qual.rpartition(".")[2] for qual in wrappers)
        names.update(name for name in module.final if any(q in wrappers for q in module.every(name)))
    for name, qual in module.final.items():
        if qual in ("torch.autograd", "torch.autograd.variable"):
            names.add("Variable")
    return sorted(names)


def nodes_for(handler, index, callees: List[str], helper_names: List[str]) -> list:
    kind = handler.kind
    if kind == MODULE:
        return [index.tree]
    if kind == HELPER_CALL:
        found = {id(c): c for name in helper_names for c in index.calls.get(name, ())}
        return sorted(found.values(), key=_position)
    if kind == VARIABLE_CALL:
        found = {id(c): c for name in callees for c in index.calls.get(name, ())}
        return sorted(found.values(), key=_position)
    if kind is ast.Call:
        return sorted((c for name in handler.callee for c in index.calls.get(name, ())), key=_position)
    if kind is ast.Attribute:
        return sorted((a for name in handler.attr for a in index.attributes.get(name, ())), key=_position)
    return list(index.by_type.get(kind, ()))


def _position(node: ast.AST) -> Tuple[int, int]:
    return node.lineno, node.col_offset  # type: ignore[attr-defined]


# ---------------------------------------------------------------------- diagnostics


def to_diagnostic(doc: Document, finding: Finding, ctx: RuleContext, options: Options) -> Diagnostic:
    src = doc.src
    row, col = src.row_col(finding.start)
    erow, ecol = src.row_col(finding.end)
    snippet = finding.snippet
    if snippet is None:
        snippet = doc.text[finding.start:finding.end].splitlines()[0] if finding.end > finding.start else ""
    fix = None
    note = finding.note
    plan = finding.fix
    if plan is not None:
        rule = registry.get(finding.code)
        title = plan.title or fix_title(plan, rule, finding, doc)
        plan.title = title
        blocked = any(site_inside(plan, s, src) for s in doc.async_sites) and finding.code != "VF301"
        if blocked:
            note = "; ".join(n for n in (note, "not fixed yet: fix the `async=` keywords (VF301) first") if n)
            finding.fix = None
        else:
            # with_fixes: the edits are rendered per fix group, clean-up included, by
            # engine.fixing.with_fix_edits once the groups are known.
            fix = Fix(plan.applicability, title, ())
    message = finding.message or registry.get(finding.code).MESSAGE
    return Diagnostic(code=finding.code, message=message, location=Location(row, col + 1),
                      end_location=Location(erow, ecol + 1), fix=fix, note=note, snippet=snippet.strip())


def site_inside(plan: FixPlan, site, src) -> bool:
    """Does a fix copy a masked `async=` keyword (it must wait until VF301 renamed it)?"""
    offset = src.line_starts[site.row - 1] + site.col
    spans = [(e.start, e.end) for e in plan.edits if e.content] + [(r.start, r.end) for r in plan.regions]
    return any(start <= offset < end for start, end in spans)


def fix_title(plan: FixPlan, rule, finding: Finding, doc: Document) -> str:
    """What the fix does, naming its regions so a reviewer can size them up: "Unwrap and run
    lines 8-10 under `with torch.no_grad():`", "Unwrap and decorate `evaluate()` with
    `@torch.no_grad()`". Lines are the file's (a notebook's: the cell's) before the fix."""
    unwrap = "" if finding.call_site else "Unwrap and "
    if not plan.regions:
        if finding.call_site:  # `fixes.planner.Planner.unflag_call`
            return "Stop passing the flag (its helper is unwrapped in its own file)"
        return rule.FIX_TITLE or "Apply the fix"
    home = doc.part_of_row(doc.src.row_col(finding.start)[0])
    decorated = [r for r in plan.regions if r.form == "decorator"]
    blocks: Dict[str, List[Tuple[Optional[int], str]]] = {}
    for region in plan.regions:
        if region.form != "decorator":
            blocks.setdefault(region.header, []).append(_lines(doc, region, home))
    parts = []
    if decorated:
        names = " and ".join(f"`{_function_name(doc.text, r.start)}()`" for r in decorated)
        headers = " / ".join(dict.fromkeys(f"`@{r.header}`" for r in decorated))
        parts.append(f"decorate {names} with {headers}")
    for header, spans in blocks.items():
        parts.append(f"run {_spans(spans)} under `with {header}:`")
    return _sentence(unwrap + "; ".join(parts))


_DEF = re.compile(r"\s*(?:async\s+)?def\s+([A-Za-z_][A-Za-z0-9_]*)")


def _function_name(text: str, start: int) -> str:
    match = _DEF.match(text, start)
    return match.group(1) if match else "the function"


def _lines(doc: Document, region, home) -> Tuple[Optional[int], str]:
    """(None, `8`) or (None, `8-10`); (5, `2-3`) for a region in cell 5, another cell than
    the finding's."""
    src = doc.src
    first = src.row_col(region.start)[0]
    last = src.row_col(max(region.start, region.end - 1))[0]
    part = doc.part_of_row(first)
    cell = None
    if part is not None and part.number is not None:
        first, last = first - part.first_row + 1, last - part.first_row + 1
        if home is None or part.number != home.number:
            cell = part.number
    return cell, f"{first}" if first == last else f"{first}-{last}"


def _spans(spans: List[Tuple[Optional[int], str]]) -> str:
    """[(None, "8-10")] -> "lines 8-10"; "30", "32-33", "40" -> "lines 30, 32-33 and 40";
    [(5, "2-3")] -> "lines 2-3 of cell 5"; spans in the finding's cell and in cell 3 ->
    "line 1 of this cell and line 1 of cell 3" (not "lines 1 and 1 of cell 3")."""
    cells: Dict[Optional[int], List[str]] = {}
    for cell, span in spans:
        cells.setdefault(cell, []).append(span)
    groups = []
    for cell, listed in cells.items():
        where = "" if len(cells) == 1 and cell is None else " of this cell" if cell is None else f" of cell {cell}"
        groups.append(f"{_span_list(listed)}{where}")
    return groups[0] if len(groups) == 1 else ", ".join(groups[:-1]) + " and " + groups[-1]


def _span_list(spans: List[str]) -> str:
    word = "line" if len(spans) == 1 and "-" not in spans[0] else "lines"
    listed = spans[0] if len(spans) == 1 else ", ".join(spans[:-1]) + " and " + spans[-1]
    return f"{word} {listed}"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def parse_diagnostic(text: str, error: ParseError) -> Diagnostic:
    message = error.message
    if error.code == "VF001":
        from ..syntax.py2 import python2_reason

        reason = python2_reason(text) if error.part is None else None
        what = "File" if error.part is None else "Cell"  # a notebook's cell: the others are checked
        message = f"{what} cannot be parsed: {reason or error.message}"
    else:
        message = f"File cannot be read: {error.message}"
    return Diagnostic(code=error.code, message=message, location=Location(error.row, error.col),
                      end_location=Location(error.row, error.col), cell=error.part)


# ---------------------------------------------------------------------- suppressions


def finish(text: str, diagnostics: List[Diagnostic], groups: List[FixGroup], options: Options,
           doc: Optional[Document]) -> Analysis:
    enabled = options.enabled
    diagnostics = [d for d in diagnostics if d.code in enabled]
    diagnostics, unused = apply_suppressions(diagnostics, text, enabled)
    kept = {id(d) for d in diagnostics}
    groups = [g for g in groups if all(id(d) in kept for d in g.diagnostics)]
    for d in unused:  # VF010: stale suppression comments, fixed like any other finding
        if d.fix is not None:
            from ..fixes.edits import TextEdit
            from ..syntax.positions import SourceText

            src = doc.src if doc is not None else SourceText(text)
            edits = [TextEdit(_offset(src, e.location), _offset(src, e.end_location), e.content) for e in d.fix.edits]
            groups.append(FixGroup(("VF010", d.location), d.fix.applicability, [d],
                                   FixPlan(d.fix.applicability, d.fix.message, edits)))
    diagnostics = diagnostics + unused
    diagnostics.sort(key=lambda d: (d.cell or 0, d.location, d.code))
    return Analysis(text, diagnostics, groups, doc)


def _offset(src, loc: Location) -> int:
    return src.line_starts[loc.row - 1] + loc.column - 1


def apply_suppressions(diagnostics: List[Diagnostic], text: str, enabled) -> Tuple[list, list]:
    lowered = text.lower()
    if "noqa" not in lowered and "volfix" not in lowered:
        return diagnostics, []  # no suppression comment can exist: skip tokenizing
    from ..settings.suppression import apply_suppressions as apply

    kept, unused = apply(diagnostics, text)
    return list(kept), [d for d in unused if d.code in enabled]


def parse_failure_in_scope(text: str, options: Options) -> bool:
    """Whether a text that does not parse is volfix's to report (VF001): not when it never
    names torch and only VF401's `.data[0]` made it a candidate (the prefilter reads such
    modules because a project's tensors reach them from other files; a Python 2 Caffe script
    reading `net.blobs['data'].data[0]` is no legacy PyTorch code)."""
    data = text.encode("utf-8", "surrogatepass")
    if "VF401" not in options.enabled or prefilter.names_torch(data):
        return True
    return registry.prefilter(frozenset(options.enabled) - {"VF401"})(data)


def may_have_findings(text: str, enabled: frozenset, links) -> bool:
    """The bytes prefilter the runner uses (`volfix.files.prefilter`): can any enabled rule fire?
    Texts that fail it are not parsed (so VF001 is reported only for texts that could hold
    legacy code)."""
    if links is not None and links.helpers:
        return True
    return registry.prefilter(frozenset(enabled))(text.encode("utf-8", "surrogatepass"))


def suppression_only(text: str) -> bool:
    return _SUPPRESSION.search(text) is not None
