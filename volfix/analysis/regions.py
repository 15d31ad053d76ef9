"""Region placement (SPEC §2.3-§2.8): from taint to `with torch.no_grad():` / `@torch.no_grad()`."""
from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Set, Tuple

from ..model import Applicability
from .edits import TextEdit
from .flow import ScopeFlow, describe, iter_statements
from .legacy import (GRAD_FUNCS, LOGGING_FUNCS, SAFE, UNSAFE, LegacyAnalysis, Region,
                     Source)

_NEWLINE = re.compile(r"\r\n|\r|\n")


class RegionPlanner:
    def __init__(self, analysis: LegacyAnalysis):
        self.a = analysis
        self.src = analysis.src
        self.blocks: Dict[tuple, list] = {}

    # -------------------------------------------------------------- structure
    def path(self, stmt: ast.stmt, scope: ast.AST) -> list:
        """[(block_key, index), ...] from the scope's body down to `stmt`."""
        out = []
        node = stmt
        while node is not scope:
            parent = self.a.parents[node]
            if isinstance(node, ast.stmt) and not self.is_elif(node, parent):
                for name in ("body", "orelse", "finalbody"):
                    block = getattr(parent, name, None)
                    if isinstance(block, list):
                        idx = next((i for i, s in enumerate(block) if s is node), None)
                        if idx is not None:
                            key = (id(parent), name)
                            self.blocks[key] = block
                            out.append((key, idx))
                            break
            node = parent
        out.reverse()
        return out

    def is_elif(self, node: ast.stmt, parent: ast.AST) -> bool:
        if not (isinstance(node, ast.If) and isinstance(parent, ast.If) and parent.orelse
                and parent.orelse[0] is node and len(parent.orelse) == 1):
            return False
        line = self.src.line(node.lineno)
        return line[self.src.char_col(node.lineno, node.col_offset):].startswith("elif")

    @staticmethod
    def choose(paths: List[list]) -> Tuple[list, tuple, int, int]:
        """(prefix, block, first, last): the innermost block holding every path."""
        level = 0
        while True:
            elems = [p[level] for p in paths]
            block = elems[0][0]
            idxs = {e[1] for e in elems}
            if (len(idxs) == 1 and all(len(p) > level + 1 for p in paths)
                    and len({p[level + 1][0] for p in paths}) == 1):
                level += 1
                continue
            return paths[0][:level], block, min(idxs), max(idxs)

    def place(self, region: Region) -> None:
        region.prefix, region.block, region.first, region.last = self.choose(region.paths)

    # -------------------------------------------------------------- planning
    def plan(self) -> None:
        pending = list(self.a.sources)
        followed: Set[int] = set()
        for _round in range(3):  # attributes set from attributes: a short chain at most
            by_scope: Dict[int, List[Source]] = {}
            for source in pending:
                by_scope.setdefault(id(source.scope), []).append(source)
            pending = []
            for sources in by_scope.values():
                scope = sources[0].scope
                flow = ScopeFlow(scope, self.a.parents)
                regions = [self.region_for([s], flow) for s in sources]
                regions = self.merge(regions, flow)
                for region in regions:
                    pending.extend(self.follow_attributes(region, followed))
                    self.finish(region, flow, regions)
            if not pending:
                break
        self.finalize()

    def follow_attributes(self, region: Region, followed: Set[int]) -> List[Source]:
        """Volatility stored on `self.priors` in one method reaches the reads of `self.priors`
        in the class's other methods (SPEC §2.6): each read becomes a source there. Not
        followed when the class assigns the attribute elsewhere too (which value a read sees
        is then unknown): the diagnostic names the reads."""
        scope = region.scope
        cls = self.a.parents.get(scope)
        if (region.kind != "no_grad" or region.taint is None
                or not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) or not isinstance(cls, ast.ClassDef)
                or not scope.args.args):
            return []
        me = scope.args.args[0].arg
        out: List[Source] = []
        for escape in region.taint.escapes:
            node = escape.node
            if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == me):
                continue
            reads, stores = [], []
            for other in self.a.attributes.get(node.attr, []):
                if other is node:
                    continue
                method = self.a.scope_of(other)
                if (not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or self.a.parents.get(method) is not cls
                        or not method.args.args or not isinstance(other.value, ast.Name)
                        or other.value.id != method.args.args[0].arg):
                    continue
                (stores if isinstance(other.ctx, ast.Store) else reads).append((other, method))
            lines = ", ".join(str(n) for n in sorted({o.lineno for o, _ in reads}))
            what = f"`{me}.{node.attr}`"
            if stores or not reads:
                if reads:
                    why = (f"unsafe fix: volatility escapes through {what}; its reads at line"
                           f"{'s' if len(reads) > 1 else ''} {lines} are not covered "
                           f"(`{node.attr}` is also assigned at line {stores[0][0].lineno})")
                    self.note_all(region.sources, why)
                continue
            escape.followed = True
            methods = ", ".join(dict.fromkeys(f"`{m.name}()`" for _, m in reads))
            self.note_all(region.sources, f"unsafe fix: volatility stored on {what} is followed into {methods} "
                                          f"(line{'s' if len(reads) > 1 else ''} {lines}); reads outside the class "
                                          f"are not covered")
            for other, method in reads:
                if id(other) in followed or method is scope or self.a.covered(other, method):
                    continue
                followed.add(id(other))
                for source in region.sources:
                    out.append(Source(source.finding, other, self.a.statement_of(other), method, "no_grad"))
                    break
        return out

    def note_all(self, sources: List[Source], note: str) -> None:
        """A remark on these sources' findings that also makes their fixes unsafe."""
        for s in sources:
            s.finding.parts.append((None, note, [], None))

    def region_for(self, sources: List[Source], flow: ScopeFlow) -> Region:
        ids = {id(s.node) for s in sources if isinstance(s.node, (ast.Call, ast.Attribute))}
        seed = {s.seed_name: [s.stmt] for s in sources if s.seed_name}
        taint = flow.analyse(lambda n: id(n) in ids, seed)
        stmts = list({id(s): s for s in taint.uses + [s.stmt for s in sources]}.values())
        region = Region(sources[0].scope, sources[0].kind, list(sources), taint=taint)
        region.flag_text = self.src.segment(sources[0].flag) if sources[0].flag is not None else None
        region.paths = [self.path(s, region.scope) for s in stmts]
        self.place(region)
        return region

    def contains(self, outer: Region, inner: Region) -> bool:
        n = len(outer.prefix)
        if inner.block == outer.block:
            return inner.first <= outer.last and outer.first <= inner.last
        if len(inner.prefix) <= n or inner.prefix[:n] != outer.prefix:
            return False
        key, idx = inner.prefix[n]
        return key == outer.block and outer.first <= idx <= outer.last

    def merge(self, regions: List[Region], flow: ScopeFlow) -> List[Region]:
        changed = True
        while changed:
            changed = False
            for i, a in enumerate(regions):
                for b in regions[i + 1:]:
                    same = a.kind == b.kind and a.flag_text == b.flag_text
                    adjacent = a.block == b.block and (a.last + 1 == b.first or b.last + 1 == a.first)
                    if same and (adjacent or self.contains(a, b) or self.contains(b, a)):
                        merged = self.region_for(a.sources + b.sources, flow)
                        regions = [r for r in regions if r is not a and r is not b] + [merged]
                        changed = True
                        break
                if changed:
                    break
        return regions

    # -------------------------------------------------------------- finishing
    def finish(self, region: Region, flow: ScopeFlow, all_regions: List[Region]) -> None:
        block = self.blocks[region.block]
        first, last = self.extend_to_lines(block, region.first, region.last)
        deleted = {id(s.stmt) for s in region.sources if s.deletes_statement}
        while first <= last and id(block[first]) in deleted:
            first += 1
        sources = region.sources
        unwraps = [e for s in sources for e in s.own_edits]
        # A block whose every statement this fix deletes keeps a `pass`.
        seen_blocks = set()
        for s in sources:
            home = self.a.siblings(s.stmt) if id(s.stmt) in deleted else None
            if home is not None and id(home) not in seen_blocks:
                seen_blocks.add(id(home))
                if all(id(st) in deleted for st in home):
                    unwraps = self.keep_block_alive(home, sources, unwraps)
                    deleted.discard(id(home[-1]))  # it becomes `pass`: a line to indent, not to drop
        if first > last:  # nothing to cover: `x.volatile = True` never used afterwards
            self.assign(sources, SAFE, None, unwraps)
            return
        stmts = block[first:last + 1]
        source_stmts = {id(s.stmt) for s in sources}
        computing = [u for u in (region.taint.uses if region.taint else []) if id(u) not in deleted]
        if not computing and region.kind != "flag":
            escapes = self.open_escapes(region)
            if escapes:
                self.assign(sources, UNSAFE, f"unwrapped only: nothing here computes with the value; unsafe fix: "
                                             f"volatility escapes through {self.escape_list(escapes)}; "
                                             f"its consumers are not covered", unwraps)
                return
            self.assign(sources, SAFE, "no region needed: nothing computes with the value once unwrapped", unwraps)
            return
        if all(id(st) in source_stmts for st in stmts) and all(self.trivial(s) for s in sources):
            self.unwrap_only(sources, "no region needed: nothing here computes with the value")
            return
        # A runtime flag is the train/eval switch itself: training inside its region is the point.
        training = self.training_call(stmts) if region.kind != "flag" else None
        if training is not None:
            self.unwrap_only(sources, f"not wrapped: the region trains (`{training[0]}` at line {training[1]})")
            return
        if region.kind == "flag":
            conflict = next((r for r in all_regions if r is not region and r.block == region.block
                             and self.contains(r, region)
                             and (r.kind != "flag" or all_regions.index(r) < all_regions.index(region))),
                            None)
            if conflict is not None:
                line = conflict.sources[0].stmt.lineno
                self.assign(sources, None, f"no fix: the region overlaps the grad-mode region of line {line}", [])
                return
        form, note = self.form(region, flow, block, first, last, deleted)
        if form is None:
            self.assign(sources, None, note, [])
            return
        covered = flow.scope.body if form == "decorator" else stmts  # type: ignore[attr-defined]
        applicability, why = self.safety(region, flow, covered)
        if why and "no fix: " in why:
            self.assign(sources, None, why[why.index("no fix: "):].split("; ")[0], [])
            return
        header = self.header(region, all_regions)
        if form == "decorator":
            edits = [self.decorator_edit(region.scope, header)] + unwraps
        else:
            edits = self.with_edits(block, first, last, header, unwraps, deleted)
        notes = [n for n in (note, why) if n]
        self.assign(sources, applicability, "; ".join(notes) or None, edits)

    def keep_block_alive(self, block: list, sources: List[Source], unwraps: List[TextEdit]) -> List[TextEdit]:
        """Every statement of the block is deleted: the last one becomes `pass` instead."""
        last = block[-1]
        owner = next((s for s in sources if s.stmt is last), None)
        if owner is None:
            return unwraps
        start = self.src.line_starts[last.lineno - 1]
        mine = [e for e in owner.own_edits if e.start >= start]
        keep = [e for e in unwraps if e not in mine]
        comments = self.src.comments_between(self.src.start(last), self.src.line_end(last.end_lineno))
        text = "pass" + ("  " + "  ".join(comments) if comments else "")
        first_col = self.src.start(last)
        return keep + [TextEdit(first_col, self.src.line_end(last.end_lineno), text)]

    def extend_to_lines(self, block: list, first: int, last: int) -> Tuple[int, int]:
        """Grow the range so that no statement outside it shares a line with one inside."""
        while first > 0 and block[first - 1].end_lineno >= self.row_of(block[first]):
            first -= 1
        while last + 1 < len(block) and self.row_of(block[last + 1]) <= block[last].end_lineno:
            last += 1
        return first, last

    @staticmethod
    def row_of(stmt: ast.stmt) -> int:
        decorators = getattr(stmt, "decorator_list", None) or []
        return min([stmt.lineno] + [d.lineno for d in decorators])

    def training_call(self, stmts: list) -> Optional[Tuple[str, int]]:
        for stmt in stmts:
            for inner in iter_statements([stmt]):
                for node in ast.walk(inner) if not isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else ():
                    if not isinstance(node, ast.Call):
                        continue
                    func = node.func
                    if isinstance(func, ast.Attribute) and func.attr == "backward":
                        return f"{describe(func)}()", node.lineno
                    if self.a.qual(func) in GRAD_FUNCS:
                        return f"{describe(func)}()", node.lineno
                    if (isinstance(func, ast.Attribute) and func.attr == "step" and not node.args
                            and not node.keywords):
                        return f"{describe(func)}()", node.lineno
        return None

    def unwrap_only(self, sources: List[Source], note: str) -> None:
        for s in sources:
            edits = list(s.own_edits)
            if s.seed_name or not edits:
                s.finding.parts.append((SAFE, note, edits, None))
                continue
            data = self.data_arg(s.node)
            plain = data is not None and (self.a.legacy_semantics or self.a.is_plain(data))
            own = note if plain else note + "; unsafe fix: if the argument requires grad, gradients will now flow into it"
            s.finding.parts.append((SAFE if plain else UNSAFE, own, edits, None))

    def trivial(self, source: Source) -> bool:
        """The source statement itself records nothing: `p = Variable(a, volatile=True)`,
        `xs = [Variable(t, volatile=True) for t in ts]`, `p = Variable(prior.forward(), volatile=True)`.
        In 0.3 the data of a Variable was a plain tensor (a Variable there raised a TypeError),
        and tensor operations never recorded a graph: computing it needs no region."""
        node = source.node
        if not isinstance(node, ast.Call) or source.call_site:
            return False
        if self.data_arg(node) is None:
            return False
        cur = self.a.parents.get(node)
        while not isinstance(cur, ast.stmt):
            if not isinstance(cur, (ast.Tuple, ast.List, ast.Starred, ast.ListComp, ast.GeneratorExp,
                                    ast.comprehension)):
                return False
            cur = self.a.parents.get(cur)
        return isinstance(cur, (ast.Assign, ast.Return, ast.Expr))

    @staticmethod
    def data_arg(call: ast.AST) -> Optional[ast.AST]:
        if not isinstance(call, ast.Call):
            return None
        if call.args:
            return call.args[0]
        return next((k.value for k in call.keywords if k.arg == "data"), None)

    # -------------------------------------------------------------- form
    def form(self, region: Region, flow: ScopeFlow, block: list, first: int, last: int, deleted: Set[int]):
        scope = region.scope
        is_function = isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef))
        is_async = isinstance(scope, ast.AsyncFunctionDef)
        spans_yield = is_function and any(
            isinstance(n, (ast.Yield, ast.YieldFrom))
            for stmt in block[first:last + 1] for inner in iter_statements([stmt])
            for n in ast.walk(inner) if not isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)))
        if region.kind == "flag":
            if spans_yield:
                return None, "no fix: the region spans a `yield`, where a runtime flag cannot become a decorator"
            return "with", None
        if spans_yield:
            if is_async:
                return None, "no fix: the region spans a `yield` in an async generator, which no grad-mode decorator covers"
            return "decorator", "decorator: a `with` block across `yield` would leak grad mode into the caller"
        if not is_function or is_async or self.a.style == "with":
            return "with", None
        if self.a.style == "decorator":
            return "decorator", None
        body = scope.body
        if block is body and all(id(s) in deleted or self.inert(s) for s in body[:first] + body[last + 1:]):
            return "decorator", None
        return "with", None

    def inert(self, stmt: ast.stmt) -> bool:
        """Statements that cannot touch autograd: docstrings, constants, model.eval(), logging."""
        if isinstance(stmt, (ast.Pass, ast.Global, ast.Nonlocal)):
            return True
        if isinstance(stmt, ast.Expr):
            value = stmt.value
            if isinstance(value, ast.Constant):
                return True
            if isinstance(value, ast.Call):
                func = value.func
                if isinstance(func, ast.Attribute) and func.attr in ("eval", "train"):
                    return all(isinstance(a, ast.Constant) for a in value.args)
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                return name in LOGGING_FUNCS
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            return stmt.value is not None and (is_constant(stmt.value) or self.bookkeeping(stmt.value))
        if isinstance(stmt, ast.Return):
            return stmt.value is None or is_constant(stmt.value) or only_names(stmt.value)
        return False

    def bookkeeping(self, value: ast.AST) -> bool:
        """`time.time()`, `AverageMeter()`: set-up that no grad mode can change."""
        if not isinstance(value, ast.Call):
            return False
        qual = self.a.qual(value.func) or ""
        if qual.split(".", 1)[0] in ("time", "datetime"):
            return True
        name = value.func.id if isinstance(value.func, ast.Name) else ""
        return (not value.args and not value.keywords
                and name.endswith(("Meter", "Timer", "Counter", "Logger", "Tracker")))

    # -------------------------------------------------------------- safety
    def safety(self, region: Region, flow: ScopeFlow, covered: list) -> Tuple[Applicability, Optional[str]]:
        reasons = []
        escapes = self.open_escapes(region)
        if escapes:
            what = self.escape_list(escapes)
            consumers = "its consumers are not covered"
            scope = region.scope
            if (any(w in ("`return`", "`yield`") for _, w in escapes)
                    and isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and isinstance(self.a.parents.get(scope), ast.Module)):
                sites, _ = self.a.call_sites(scope)
                lines = sorted({s.lineno for s in sites})
                if lines:
                    consumers = (f"its consumers (the call{'s' if len(lines) > 1 else ''} of `{scope.name}()` "
                                 f"at line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}) are not covered")
            reasons.append(f"unsafe fix: volatility escapes through {what}; {consumers}")
        extra = self.extra_coverage(region, flow, covered)
        if extra:
            reasons.append(extra)
        if region.kind == "flag" and isinstance(region.scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            reasons.append("unsafe fix: a caller running this under `no_grad` would have recording "
                           "turned back on when the flag is false")
        return (UNSAFE if reasons else SAFE), ("; ".join(reasons) or None)

    @staticmethod
    def open_escapes(region: Region) -> List[Tuple[int, str]]:
        """(line, what) of the escapes no other region follows, in line order."""
        taint = region.taint
        return sorted({(e.line, e.what) for e in taint.escapes if not e.followed}) if taint else []

    @staticmethod
    def escape_list(escapes: List[Tuple[int, str]]) -> str:
        return ", ".join(f"{w} (line {l})" for l, w in escapes[:3])

    def extra_coverage(self, region: Region, flow: ScopeFlow, covered: list) -> Optional[str]:
        inside = [s for stmt in covered for s in iter_statements([stmt])]
        inside_ids = {id(s) for s in inside}
        tainted_defs = {id(d) for defs in region.taint.defs.values() for d in defs} if region.taint else set()
        bound: Dict[str, ast.stmt] = {}
        for stmt in inside:
            if id(stmt) in tainted_defs:
                continue
            for names, value in flow._bindings(stmt):
                if value is not None and autograd_free(value):
                    continue
                for name in names:
                    bound.setdefault(name, stmt)
        if not bound:
            return None
        last_order = max(flow.order.get(id(s), -1) for s in inside)
        region_loops = set()
        for stmt in covered:
            region_loops.update(id(l) for l in flow.loops_of(stmt))
        for stmt in flow.statements:
            if id(stmt) in inside_ids:
                continue
            after = flow.order[id(stmt)] > last_order
            same_loop = any(id(l) in region_loops for l in flow.loops_of(stmt))
            if not (after or same_loop):
                continue
            name = flow.reads_name(stmt, set(bound))
            if name:
                later = [st for st in flow.statements if flow.order[id(st)] > last_order]
                training = self.training_call(later) if (after or same_loop) else None
                if training is not None:
                    # Computed without a graph, the value could not train: the fix would break it.
                    return (f"no fix: the region would also cover `{name}` (line {bound[name].lineno}), "
                            f"which the training step after it needs (`{training[0]}` at line {training[1]})")
                return (f"unsafe fix: the region also covers `{name}` (line {bound[name].lineno}), "
                        f"which is used after it (line {stmt.lineno})")
        return None

    # -------------------------------------------------------------- edits
    def header(self, region: Region, all_regions: List[Region]) -> str:
        scope = region.scope
        if region.kind != "flag":
            return f"{self.a.spell('torch.no_grad', scope)}()"
        flag = region.sources[0].flag
        nested = any(r.kind != "flag" and r is not region and self.contains(r, region) for r in all_regions)
        flag_text = self.src.segment(flag)
        if nested:
            null = self.a.spell("contextlib.nullcontext", scope)
            return f"{self.a.spell('torch.no_grad', scope)}() if {flag_text} else {null}()"
        if isinstance(flag, ast.UnaryOp) and isinstance(flag.op, ast.Not):
            enabled = self.src.segment(flag.operand)
            if isinstance(flag.operand, ast.UnaryOp) and isinstance(flag.operand.op, ast.Not):
                enabled = f"not {self.src.segment(flag.operand.operand)}"
        elif isinstance(flag, (ast.BoolOp, ast.Compare, ast.IfExp, ast.Lambda, ast.NamedExpr)):
            enabled = f"not ({flag_text})"
        else:
            enabled = f"not {flag_text}"
        return f"{self.a.spell('torch.set_grad_enabled', scope)}({enabled})"

    def unit_for(self, indent: str) -> str:
        if indent.startswith("\t"):
            return "\t"
        unit = self.src.indent_unit()
        if indent and "\t" in unit:
            return "    "
        return unit

    def decorator_edit(self, fn: ast.AST, header: str) -> TextEdit:
        row = fn.lineno  # the `def` line (decorators come before it)
        indent = self.src.indentation(row)
        offset = self.src.line_starts[row - 1]
        return TextEdit(offset, offset, f"{indent}@{header}{self.src.newline}")

    def with_edits(self, block: list, first: int, last: int, header: str, unwraps: List[TextEdit],
                   deleted: Set[int]) -> List[TextEdit]:
        src = self.src
        first_stmt, last_stmt = block[first], block[last]
        row = self.row_of(first_stmt)
        col = src.char_col(row, first_stmt.col_offset if row == first_stmt.lineno else
                           first_stmt.decorator_list[0].col_offset - 1)
        line = src.line(row)
        before = line[:col]
        nl = src.newline
        interior = self.a.interior_rows()
        inner = [(e.start, e.end) for e in unwraps if e.end > e.start]
        deleted_rows = set()
        for stmt in block[first:last + 1]:
            for nested in iter_statements([stmt]):  # deleted statements may sit in nested blocks
                if id(nested) in deleted:
                    deleted_rows.update(range(nested.lineno, nested.end_lineno + 1))
        edits: List[TextEdit] = []
        if before.strip():  # a one-line suite: `for x in xs: out = f(x)`
            indent = src.indentation(row)
            unit = self.unit_for(indent)
            colon = src.line_starts[row - 1] + len(before.rstrip())
            stmt_start = src.line_starts[row - 1] + col
            edits.append(TextEdit(colon, stmt_start, f"{nl}{indent}{unit}with {header}:{nl}{indent}{unit}{unit}"))
            start_row = row + 1
        else:
            indent = before
            unit = self.unit_for(indent)
            offset = src.line_starts[row - 1]
            edits.append(TextEdit(offset, offset, f"{indent}with {header}:{nl}{unit}"))
            start_row = row + 1
        for r in range(start_row, last_stmt.end_lineno + 1):
            off = src.line_starts[r - 1]
            if r in interior or r in deleted_rows or not src.line(r).strip():
                continue
            if any(s < off < e for s, e in inner):
                continue
            edits.append(TextEdit(off, off, unit))
        for e in unwraps:
            content = e.content
            if e.end > e.start and _NEWLINE.search(content):
                content = self.indent_content(e, unit, interior)
            edits.append(TextEdit(e.start, e.end, content, e.key))
        return edits

    def indent_content(self, edit: TextEdit, unit: str, interior: Set[int]) -> str:
        first_row, _ = self.src.row_col(edit.start)
        parts = _NEWLINE.split(edit.content)
        seps = _NEWLINE.findall(edit.content)
        out = [parts[0]]
        for k, (sep, part) in enumerate(zip(seps, parts[1:]), start=1):
            row = first_row + k
            out.append(sep + (part if (row in interior or not part.strip()) else unit + part))
        return "".join(out)

    def assign(self, sources: List[Source], applicability: Optional[Applicability],
               note: Optional[str], edits: List[TextEdit]) -> None:
        group = self.a.next_group()
        for s in sources:
            s.finding.parts.append((applicability if edits else None, note, list(edits), group))

    def finalize(self) -> None:
        """Merge what every region said about each finding (a helper's finding has one region
        per call site) into its fix; findings that share a region share a group."""
        parent: Dict[int, int] = {}

        def find(g: int) -> int:
            while parent.get(g, g) != g:
                g = parent[g]
            return g

        for f in self.a.findings:
            groups = [p[3] for p in f.parts if p[3] is not None]
            for g in groups[1:]:
                parent[find(g)] = find(groups[0])
        for f in self.a.findings:
            if not f.parts:
                continue
            edits = list(f.edits)
            notes = [f.note] if f.note else []
            ranks = []
            for applicability, note, part_edits, _group in f.parts:
                edits.extend(e for e in part_edits if e not in edits)
                if note and note not in notes:
                    notes.append(note)
                ranks.append(applicability)
            f.edits = edits
            f.note = "; ".join(notes) or None
            if not edits:
                f.applicability = None
            elif any(r is None or r is UNSAFE for r in ranks) or f.applicability is UNSAFE:
                f.applicability = UNSAFE
            else:
                f.applicability = SAFE
            groups = [p[3] for p in f.parts if p[3] is not None]
            f.group = find(groups[0]) if groups else None


def autograd_free(node: ast.AST) -> bool:
    """A value that cannot carry autograd history: constants, `.item()`, `len()`, arithmetic of those."""
    from .flow import KILL_FUNCS, KILL_METHODS

    from .flow import KILL_ATTRS

    if is_constant(node):
        return True
    if isinstance(node, ast.Attribute):
        return node.attr in KILL_ATTRS or autograd_free(node.value)
    if isinstance(node, ast.Subscript):
        return autograd_free(node.value)
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name == "Variable" and node.args and isinstance(node.args[0], ast.Attribute) \
                and node.args[0].attr == "data" and len(node.args) == 1 and not node.keywords:
            return True  # Variable(h.data): a fresh leaf without history (becomes h.detach())
        if isinstance(func, ast.Attribute):
            if (func.attr in KILL_METHODS and func.attr != "type") or func.attr == "detach":
                return True
            return isinstance(func.value, (ast.Attribute, ast.Subscript, ast.Call)) and autograd_free(func.value)
        return isinstance(func, ast.Name) and func.id in KILL_FUNCS - {"print"}
    if isinstance(node, ast.BinOp):
        return autograd_free(node.left) and autograd_free(node.right)
    if isinstance(node, ast.UnaryOp):
        return autograd_free(node.operand)
    return False


def only_names(node: ast.AST) -> bool:
    """`x`, `self.acc`, `(a, b.c)`: a value that is returned, not computed."""
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Attribute):
        return only_names(node.value)
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(only_names(e) for e in node.elts)
    return False


def is_constant(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(is_constant(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and is_constant(k) and is_constant(v) for k, v in zip(node.keys, node.values))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("dict", "list", "set", "tuple"):
        return not node.args and not node.keywords
    return False
