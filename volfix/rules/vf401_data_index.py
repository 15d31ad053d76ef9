"""VF401: `loss.data[0]` on values that are 0-dim tensors since PyTorch 0.4."""
import ast
from typing import Optional

from ..files import prefilter
from ..fixes.edits import TextEdit
from ..flow.bindings import NameBindings
from ..flow.scalars import ScalarValues
from ..flow.shapes import is_zero
from ..model import Applicability
from .base import Rule, on
from .loss_values import (MOVES, bound_to_full_index, full_index, index_parts, loss_callee, loss_named,
                          made_by_loss_callee, unknown_factors)
from .scalar_evidence import accumulated_unknowns, loss_dict_member, losses_passed, scalar_helper


INDEX_MESSAGE = "`[0]` on a 0-dim tensor raises since PyTorch 0.4; use `.item()`"
NUMPY_MESSAGE = "`[0]` on the NumPy array of a 0-dim tensor raises since PyTorch 0.4; use `.item()`"
VIEW_MESSAGE = "`[0]` on a 0-dim tensor raises since PyTorch 0.4; use `.view(1)` where a tensor is used next"
VIEW_TITLE = "Use `.view(1)` (0.3's `[0]` of a Variable had shape (1,))"
DROP_MESSAGE = "`[0]` on a 0-dim tensor raises since PyTorch 0.4; use the tensor itself"
DROP_TITLE = "Drop `[0]`: the 0-dim tensor is what the next step needs"
TOLIST_MESSAGE = "`.tolist()` of a 0-dim tensor is a number since PyTorch 0.4, so `[0]` raises; use `.item()`"


class ScalarDataIndex(Rule):
    """
    ## What it does
    Finds `x.data[0]` where `x` is a loss or a full reduction (`criterion(out, y)` with
    `criterion = nn.CrossEntropyLoss()`, `F.nll_loss(...)`, `x.sum()`, `x.mean()`, a name
    bound to one), and `x[0]` where `x` certainly is one (`total_loss[0]` after `total_loss +=
    len(data) * criterion(...).data`; `prec1[0]` after `prec1, prec5 = accuracy(...)`, whose
    list holds sums over the one dimension of `correct[:k].view(-1)`; also when `accuracy` is
    a function nested in the one calling it, a closure of `main()`); a value only named
    like a loss (`loss`, `d_loss`, `self.loss`, `losses[name]`, `state['loss']`) gets an unsafe
    fix. A value the code calls `.backward()` on as a term of a sum is one element, whatever made
    it (`dist_entropy` in `(value_loss + action_loss - dist_entropy * coef).backward()`). Also a value 0-dim by the
    ranks of what it indexes: `p[targets[idx].data]` with `p` a row of `softmax(out.view(-1,
    n))` and `targets` 1-dim, an element of a `topk` order's row, `torch.std(torch.cat(ts), 0)`
    of shape-(1,) values, the largest of a 1-dim value (`choice_logit.max(0)[0]` with `choice_logit
    = torch.sum(torch.cat(logits, 1), 1, keepdim=True).squeeze(1)`, `logits` grown by
    `.append(torch.gather(row, 0, idx).unsqueeze(1))`: `gather` has its index's shape and as many
    dimensions as its source, `unsqueeze(1)` needs one before the new one, `squeeze(1)` drops
    the dimension a keepdim sum left), one label of a batch from a `DataLoader` of `torchvision.datasets.MNIST`
    (or another dataset of class numbers). In a program (a notebook, or a script with a
    `__main__` guard) a function's parameter holds what the calls there pass (`for ii in x`
    after `f(V(t.arange(-2., 4.)))`; `loss.forward(fx, y)` in `train(model, loss, ...)` when
    every call passes `nn.CrossEntropyLoss()`); a parameter called as a function (`f(True).data[0]` in
    a line search) returns what the defs the calls pass return, in a program or in a module
    whose function no other file of the project names; so does what a class's `__init__` keeps
    (`self.translator = translator`, then `self.translator.score(...).data[0]`, the score an
    `nn.NLLLoss` output) when its constructions are in a program or no other file names the
    class. Files are read when they hold a `.data[0]`,
    also a module that never imports torch (its tensors come from the project's other modules:
    `correct.float().sum().data[0]` in a `utils.py`); such a module that does not parse is not
    reported (a Python 2 Caffe script's `net.blobs['data'].data[0]` is no legacy PyTorch code).
    A comparison of one-element values is one element too (`(loss == loss).data[0]`), and a
    name rebound to its own `.data[0]` is a number again (`k = k.data[0]` after `k = k + lam *
    (gamma * D(x) - D(g))`, then `k = min(max(k, 0), 1)`). A function whose one-element return
    depends on a parameter is read with what the call passes or keeps: `pytorch_ssim.ssim(sr,
    hr)` keeps `size_average=True`, which `_ssim` tests before `return ssim_map.mean()`; so
    does an instance made keeping it (`SSIM(window_size=11)`, whose `forward` passes on
    `self.size_average`), and a value such an `if` rebinds before the `return` (`if average:
    loss = torch.mean(loss)`, then `return loss, re, kl`, read as `loss, re, kl =
    self.calculate_loss(x, average=True)`). Another file's module is found where the project's layout puts it, or
    in a directory the importing script adds to `sys.path` itself
    (`sys.path.append("../semi-supervised")`).

    ## Why is this bad?
    In PyTorch 0.3 a loss was a one-element tensor and `loss.data[0]` its Python number.
    Since 0.4 losses and reductions are 0-dim tensors: `loss.data[0]` raises
    `IndexError: invalid index of a 0-dim tensor`. Code that volfix otherwise reports clean
    crashes at its first logging line.

    ## Example
    ```python
    import torch
    import torch.nn as nn

    criterion = nn.CrossEntropyLoss()


    def step(model, x, y):
        loss = criterion(model(x), y)
        correct = model(x).max(1)[1].eq(y).sum()
        return loss.data[0], correct.data[0]
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn

    criterion = nn.CrossEntropyLoss()


    def step(model, x, y):
        loss = criterion(model(x), y)
        correct = model(x).max(1)[1].eq(y).sum()
        return loss.item(), correct.item()
    ```

    ## Fix safety
    Safe when the value is certainly one element: the output of a loss module (also moved,
    `nn.MSELoss().cuda()` or `criterion = criterion.cuda()`, also called through its
    `.forward(...)`) or `torch.nn.functional` loss
    without `reduction='none'` / `reduce=False`, a reduction over every element (`.sum()`,
    `.mean()`, `torch.sum(x)`, ...), the builtin `sum` of such values, a reduction over the
    one dimension of a 1-dim value (`x.view(-1).sum(0)`, also `correct = correct.view(-1)`
    first), element-wise functions of them (`torch.abs(...)`, `.exp()`), arithmetic of those
    with numbers (`len(data) * loss`, `.mul_(100.0 / n)`, `self.k * err` where every method
    sets `self.k` to numbers: `self.k = 0.`, `self.k = min(max(temp_k, 0), 1)`), the result
    of a function of the module (or a method of the class) whose every `return` is one of
    those, the call of an instance of a class (`crit = SplitLoss()`: the `forward` of an
    `nn.Module` subclass, or `__call__`) or the call of its method (`agent.update(...)`, every
    class the name may hold agreeing; a loop's target holds the members of the list it walks,
    `for sl in style_losses: score += sl.backward()` after `style_losses.append(StyleLoss(...))`)
    whose every `return` is one, an attribute `self.loss` every method of the class sets to
    one (a `None` it starts as is never read), the item of a returned
    tuple (`loss, n = compute(x)` with `return crit(out, y), len(y)`), an element of a list built only from them (`[torch.mean(l) for l in ls]`,
    `.append(loss)`), also unpacked from a function returning such a list, a value of a dict
    filled only with them (`losses['l2'] = ...`, read through `.values()`, `.items()` or a key;
    also a dict attribute the class's methods fill so, `self._losses[k] = ...`, or copy into,
    `self._summaries[k] = self._losses[k]`, and no code outside the class writes), an
    element of a 1-dim value (`for t in target.view(-1)`, or `targets` of `data, targets =
    get_batch(...)` where each return's second item is one), `enumerate` and `zip` of those,
    or a local name bound only to such values and numbers (also a number made from its own
    `[0]`, `total = total[0] / n`; a `None` it is also bound to never reaches the read; the
    1-dim `torch.zeros(1)` a moving average starts as, whose number `.item()` reads as
    `.data[0]` did; `loss += w.pow(2).sum() * l2_reg`, in place, keeps the loss one element
    whatever it adds; an option of `parser.parse_args()`, `args.lr` or `args['beta']`, is a
    number; a name bound by an assignment the same block follows, with no jump between, by a
    `.backward()` without a gradient on a sum it is a term of: `(value_loss * c + action_loss -
    dist_entropy * coef).backward()` after `values, log_probs, dist_entropy =
    self.actor_critic.evaluate_actions(...)`, whose model volfix cannot read: 0.3 ran such a
    `backward()` only on one element, and no term of element-wise arithmetic has more elements
    than its result; so is an attribute every store of which is such a term, `self.loss_G_GAN`
    before `self.loss_G = self.loss_G_GAN + self.loss_G_L1; self.loss_G.backward()`, unless a
    method of the class called between stores it again). A
    name holds what the assignment before the read gave it: `losses = [torch.mean(l) for l in
    losses]` after `losses = model(x)` is a list of one-element values. The function or class
    may be another file's of the project (`from miscc.utils import compute_discriminator_loss`,
    also through a package's `__init__`, or a name only `from dataController.Batching import *`
    binds, when no star-imported module sets `__all__`): volfix reads it there. `.item()` then returns the
    Python number `.data[0]` returned in 0.3.

    In 0.3 a comparison made a ByteTensor, whose element was the int 1 or 0 (bool tensors
    came with 1.2). Where the read is only tested or counted (`if (loss > 100).data[0]:`,
    `assert (l == l).data[0] == 1`, `agree += ...`) the fix is `.item()`, where True and
    False act as 1 and 0; elsewhere (`positive = (total > 0).data[0]`, formatted by `'%s' %`,
    combined by `&`, `|`, `^`, where two bools stay a bool) it is `.int().item()`, which keeps
    the int. A name only some of whose values are comparisons gets an unsafe `.item()`.

    `[0]` of such a value read through `.data` and moved (`loss.data.cpu()[0]`) is read as
    `loss.data[0]` is, and rewritten to `loss.item()`.

    `[0]` of the list of such a value (`losses.append(loss.data.tolist()[0])`, also through
    `.cpu()` and `.numpy()`) raises too: 0.3's list held one number, today's `.tolist()` is the
    number. `.item()` is that number: safe when the value is certainly one element, unsafe as
    for `.data[0]` otherwise (a chain without `.data` is left: no 0.3 Variable had a list).

    `[0]` of the NumPy array of such a value (`loss.data.cpu().numpy()[0]`) raises too (a
    0-d array): the fix is unsafe, since 0.3 gave a NumPy scalar (`numpy.float32`) and
    `.item()` gives the same value as a Python number, which prints with more digits.
    `loss.data[0].item()`, written for 0.4 (where `[0]` of a 0-dim tensor still gave a
    tensor), becomes one `.item()`.

    The fix is unsafe for a value named like a loss (`loss`, `d_loss`, `self.loss`; also an
    entry of a collection named like losses, `losses[loss_name]`, or under a key named like a
    loss, `state['loss']`; also moved first, `loss.cpu().data[0]`) or made
    by a callee named like one that volfix cannot see (`criterion` passed in as a parameter,
    also stored by a constructor, `self.criterion = criterion`, and bound to a name first,
    `err = self.criterion(output, target)`; or `crit = Criterion(...)` of a module no file of
    the project holds: a library's loss, or `from engine import Criterion` in a tree without
    `engine.py`):
    if it held several elements, `.data[0]` meant its first one and `.item()` raises. So it
    is for arithmetic of one-element values (or values named like a loss) with a name or an
    attribute volfix cannot type (`(self.gamma * d_loss_real - d_loss_fake).data[0]` with
    `self.gamma = config.gamma`, set from another file): the note names them. It is
    unsafe for `t[i, j, k, l].data[0]` too (also `t[idx[0], idx[1] + k, ...]`: an index per
    dimension is one element, but volfix does not know how many dimensions `t` has; also a
    name bound only to such an index, `local_logprob = ys[q, c]` in a beam search; also the
    chained `t[0][top_idx[0][i]]`, when `t` is a local name bound only to calls, such as
    `out_logit = model(x)`: a loop's batch, a parameter or an unpacked result may be a list,
    whose first index only picks a tensor), and for
    `x[0]` on a one-element Variable (in 0.3 a one-element Variable that kept its graph;
    `.item()` is a number; where the code reads a tensor attribute of it next, `best[0].unsqueeze(0)`,
    the fix is `best.view(1)`, 0.3's shape (1,), since a number has no `.unsqueeze`, and
    `loss[0].backward()`, `loss[0].data[0]` drop the `[0]`) or
    on a value volfix cannot tell was a tensor or a Variable (`prec1[0]`: a number for a
    tensor, a one-element Variable for a Variable), and for a running total a function is
    given and adds one-element values to (`total_loss += loss.data`, then `total_loss[0]`, with
    `total_loss` a parameter: one element when the caller starts it at a number, which volfix
    does not see), or one that adds up one-element values times a name volfix cannot type
    (`total_loss += word_cnt * criterion(out, y).data`, the note names `word_cnt`), for the
    parameter of a function named for a scalar (`unwrap_scalar_variable(var)`, called from other
    files), and for a parameter whose every call in the file passes one element or a value named like a
    loss (`def _get_data(self, d): return d.data[0]`, called as `self._get_data(g_loss)`; also
    `err = err.data[0]` first thing in `def show(err)`, where the read is of the parameter: a
    call from another file may pass something else). A dict read at a string key is one
    element when every value the name holds spells that key with one (`errs =
    self._errs(pi, a)` of a method returning `dict(policy_err=self.policy_loss(...))`, then
    `errs["policy_err"].data[0]`), and nothing stores into it. `x[0]` on a tensor read through `.data`
    is safe. Other `x.data[0]` and `x[0]` (the first row of a
    batch) are not reported, nor a read the code indexes again (`loss.data[0][0]`): in 0.3
    that `[0]` gave a row, so the value had two dimensions or more and still has.

    A read of a value whose rank only the data tells (a model's output, an environment's
    observation, a loss chosen at run time) is not reported: `volfix verify` runs the program
    and names each read the original made on a one-element value; `volfix verify --fix`
    rewrites those to `.item()`.
    """

    CODE = "VF401"
    MESSAGE = "`.data[0]` on a 0-dim tensor raises since PyTorch 0.4; use `.item()`"
    FIX = Applicability.SAFE
    FIX_TITLE = "Use `.item()`"
    NEEDS = prefilter.TORCH_DATA_INDEX
    NAMES = frozenset({"data", "max", "min"})  # `score, idx = row.max(0)`, then `idx[0]`

    @on(ast.Subscript)
    def subscript(self, node, ctx):
        if not (isinstance(node.ctx, ast.Load) and is_zero(node.slice)):
            return
        if indexed_again(node, ctx):
            return
        attribute = node.value
        scalars = ScalarValues(ctx.index)  # one per read: its memos serve each question below
        listed = _listed(attribute)
        moved = _moved_data(attribute) if listed is None else None
        if listed is not None:  # `loss.data.tolist()[0]`: 0.3's list of one number, a number today
            found = self.data_index(listed, node, ctx, scalars)
            found = found and (found[0], found[1], found[2] and found[2].replace("`.data[0]`", "`[0]`"),
                               TOLIST_MESSAGE)
        elif moved is not None:  # `loss.data.cpu()[0]`: `loss.data[0]`, moved first
            found = self.data_index(moved, node, ctx, scalars)
            found, listed = found and (found[0], found[1], found[2], INDEX_MESSAGE), moved
        elif isinstance(attribute, ast.Attribute) and attribute.attr == "data":
            found = self.data_index(attribute.value, node, ctx, scalars)
            if not found:
                ctx.unreported_reads[id(node)] = scalars  # VF407's question, with these memos
        else:
            found = self._plain_index(attribute, node, ctx, scalars)
        if not found:
            return
        subject, applicability, note = found[:3]
        message = found[3] if len(found) > 3 else None if subject is not attribute else INDEX_MESSAGE
        replacement, title = ".item()", self.FIX_TITLE
        comparison = _comparison(subject, node, scalars.names)
        if comparison and not _read_as_number(node, ctx):
            shown = ctx.src.segment(subject)
            if comparison == "certainly":  # 0.3's ByteTensor gave an int: so does `.int().item()`
                replacement, title = ".int().item()", "Use `.int().item()` (0.3's comparison gave 1 or 0)"
            elif applicability is Applicability.SAFE:
                applicability, note = Applicability.UNSAFE, (
                    f"unsafe fix: `{shown}` may be a comparison: in 0.3 (a ByteTensor) its `[0]` was "
                    f"the int 1 or 0, `.item()` is True or False, which prints as a word")
        text = ctx.src.text
        if listed is not None:  # `loss.data.cpu().tolist()[0]`: from the first `.` after `loss`
            start = text.index(".", ctx.src.end(subject), ctx.src.end(attribute))
        elif subject is attribute:  # `total[0]`: from the `[` (after any `)` closing `total`)
            start = text.index("[", ctx.src.end(subject), ctx.src.end(node))
        else:  # `(a + b).data[0]`: from the `.` after `)`
            start = text.rindex(".", ctx.src.end(subject), ctx.src.end(attribute))
        end = ctx.src.end(node)
        parent = ctx.index.parents.get(node)
        if isinstance(parent, ast.Attribute) and parent.attr == "item" and replacement.endswith(".item()"):
            # `loss.data[0].item()`, written for 0.4 (where `[0]` of a 0-dim tensor still gave
            # a tensor): one `.item()`, not `.item().item()` on a float
            end, replacement = ctx.src.end(parent), replacement[:-len("()")]
        if subject is attribute and applicability is Applicability.UNSAFE and not comparison \
                and _used_as_tensor(node, ctx):
            # `n[0].unsqueeze(0)`: 0.3's `[0]` of a Variable was a shape-(1,) Variable; a number has no
            # `.unsqueeze`, so `.item()` would raise where `.view(1)` is what 0.3 gave
            attribute_read = ctx.index.parents[node].attr  # type: ignore[attr-defined]
            replacement, title, message = ".view(1)", VIEW_TITLE, VIEW_MESSAGE
            if _shape_free(node, ctx):  # `loss[0].backward()`, `loss[0].data[0]`: the value itself serves
                replacement, title, message = "", DROP_TITLE, DROP_MESSAGE
            note = _view_note(ctx.src.segment(subject), attribute_read, replacement)
        edit = TextEdit(start, end, replacement)
        ctx.report(self.CODE, node, note=note, message=message,
                   fix=ctx.edit_fix(applicability, title, [edit]))

    @staticmethod
    def data_index(subject, node, ctx, scalars: ScalarValues):
        """`x.data[0]`: reported when `x` is certainly one element (safe), a full index
        `t[i, j]` or a value named like a loss (unsafe)."""
        shown = ctx.src.segment(subject)
        if scalars.one_element(subject, node):
            return subject, Applicability.SAFE, None
        indexed = subject if full_index(subject, ctx.index) else bound_to_full_index(subject, ctx.index)
        if indexed is not None:
            value, count = index_parts(indexed, ctx.index)  # type: ignore[misc]
            base = ctx.src.segment(value)
            bound = "" if indexed is subject else f" (`{shown} = {ctx.src.segment(indexed)}`, line {indexed.lineno})"
            element = shown if indexed is subject else ctx.src.segment(indexed)
            return subject, Applicability.UNSAFE, (
                f"unsafe fix: `{element}`{bound} is one element when `{base}` has exactly {count} dimensions; "
                f"if it has more, `.data[0]` meant its first element and `.item()` raises")
        unknown = unknown_factors(subject, node, scalars)
        if unknown:
            names = ", ".join(f"`{ctx.src.segment(u)}`" for u in unknown)
            return subject, Applicability.UNSAFE, (
                f"unsafe fix: volfix cannot tell that {names} "
                f"{'is a number or one element' if len(unknown) == 1 else 'are numbers or one element each'}; "
                f"with a tensor of several elements there, `.data[0]` of `{shown}` meant the first and "
                f"`.item()` raises")
        if scalars.accumulated_parameter(subject, node):
            return subject, Applicability.UNSAFE, _accumulator_note(shown)
        passed = losses_passed(subject, node, ctx, scalars)
        if passed is not None:
            return subject, Applicability.UNSAFE, (
                f"unsafe fix: every call of `{passed[0]}()` in this file passes {passed[2]} for "
                f"`{shown}` ({passed[1]}); a call from elsewhere with several elements would make `.item()` raise")
        helper = scalar_helper(subject, node, ctx, scalars.names)
        if helper is not None:
            return subject, Applicability.UNSAFE, (
                f"unsafe fix: `{helper}()` is named for a scalar and `{shown}` is its parameter; a call "
                f"with several elements would make `.item()` raise")
        made = made_by_loss_callee(subject, ctx, scalars, node)
        if made is not None:
            return subject, Applicability.UNSAFE, (
                f"unsafe fix: volfix cannot tell that `{shown}` has one element (it is `{made}`, "
                f"not bound to a known loss or reduction); if it has several, `.data[0]` meant the first "
                f"and `.item()` raises")
        if loss_named(subject) or (loss_callee(subject) and not scalars.known_callee(subject.func, node)):
            outside = scalars.outside_callee(subject.func, node) if isinstance(subject, ast.Call) else None
            why = f"`{outside}` comes from a module volfix finds in no file of the project" if outside \
                else "it is not bound to a known loss or reduction"
            return subject, Applicability.UNSAFE, (
                f"unsafe fix: volfix cannot tell that `{shown}` has one element ({why}); if it has "
                f"several, `.data[0]` meant the first and `.item()` raises")
        member = loss_dict_member(subject, node, ctx, scalars)
        if member is not None:
            return subject, Applicability.UNSAFE, (
                f"unsafe fix: `{shown}` is a value of `{member[0]}`, which holds {member[1]}: volfix cannot tell "
                f"that it has one element (not bound to a known loss or reduction); if it has several, "
                f"`.data[0]` meant the first and `.item()` raises")
        return None

    @staticmethod
    def _plain_index(subject, node, ctx, scalars: ScalarValues):
        """`total[0]` without `.data`: reported only when `total` is certainly one element
        (today a 0-dim tensor, which `[0]` cannot index). Safe when it is a tensor (built
        from `.data`), whose `[0]` was the Python number in 0.3; unsafe for a Variable,
        whose `[0]` was a one-element Variable that kept its graph."""
        shown = ctx.src.segment(subject)
        if not scalars.one_element(subject, node):
            if scalars.accumulated_parameter(subject, node):
                return subject, Applicability.UNSAFE, _accumulator_note(shown)
            unknown = accumulated_unknowns(subject, node, scalars)
            if unknown:
                names = ", ".join(f"`{ctx.src.segment(u)}`" for u in dict.fromkeys(unknown))
                return subject, Applicability.UNSAFE, (
                    f"unsafe fix: `{shown}` adds up one-element values times {names}, which volfix cannot tell "
                    f"{'is a number' if len(unknown) == 1 else 'are numbers'}; with a tensor of several "
                    f"elements there, `[0]` meant the first and `.item()` raises")
            base = _numpy_of(subject)  # `calc_loss(...).data.cpu().numpy()[0]`
            if base is not None and (loss_named(base) or (loss_callee(base)
                                                           and not scalars.known_callee(base.func, node))):
                return subject, Applicability.UNSAFE, (
                    f"unsafe fix: volfix cannot tell that `{ctx.src.segment(base)}` has one element (it is not "
                    f"bound to a known loss or reduction); if it has several, `[0]` meant the first and "
                    f"`.item()` raises; if one, `.item()` is the NumPy scalar's value as a Python number, "
                    f"which prints with more digits"), NUMPY_MESSAGE
            return None
        if scalars.numpy_array(subject, node):
            return subject, Applicability.UNSAFE, (
                f"unsafe fix: in 0.3 `{shown}[0]` was a NumPy scalar (`numpy.float32` for a float tensor); "
                f"`.item()` is the same value as a Python number, which prints with more digits"), NUMPY_MESSAGE
        if scalars.plain_tensor(subject, node):
            return subject, Applicability.SAFE, None
        if scalars.variable(subject, node):
            return subject, Applicability.UNSAFE, (
                f"unsafe fix: in 0.3 `{shown}[0]` was a one-element Variable that kept its graph; "
                f"`.item()` is its Python number, so a `backward()` or autograd use of it breaks")
        return subject, Applicability.UNSAFE, (
            f"unsafe fix: volfix cannot tell whether `{shown}` was a tensor in 0.3 (`[0]` was its "
            f"Python number, as `.item()` is) or a Variable (`[0]` was a one-element Variable that "
            f"kept its graph)")


def _listed(expr: ast.AST) -> Optional[ast.AST]:
    """`x` of `x.data.tolist()` (also `x.data.cpu().tolist()`, `x.data.cpu().numpy().tolist()`,
    `x.cpu().data.tolist()`): the chain reads `.data`, so in 0.3 it was a tensor's list (a
    Variable had none), whose `[0]` was the number `.item()` gives; else None."""
    if not (isinstance(expr, ast.Call) and not expr.args and not expr.keywords
            and isinstance(expr.func, ast.Attribute) and expr.func.attr == "tolist"):
        return None
    expr, data = expr.func.value, False
    while True:
        if isinstance(expr, ast.Attribute) and expr.attr == "data":
            expr, data = expr.value, True
        elif isinstance(expr, ast.Call) and not expr.args and not expr.keywords \
                and isinstance(expr.func, ast.Attribute) and expr.func.attr in ("cpu", "numpy"):
            expr = expr.func.value
        else:
            return expr if data else None


def _moved_data(expr: ast.AST) -> Optional[ast.AST]:
    """`x` of `x.data.cpu()` (also `x.data.cuda()`, `x.data.cpu().float()`): a tensor read
    through `.data` and moved or copied, whose `[0]` is `x.data[0]`'s; else None."""
    moved = False
    while isinstance(expr, ast.Call) and not expr.args and not expr.keywords \
            and isinstance(expr.func, ast.Attribute) and expr.func.attr in MOVES:
        expr, moved = expr.func.value, True
    if moved and isinstance(expr, ast.Attribute) and expr.attr == "data":
        return expr.value
    return None


def _numpy_of(expr: ast.AST) -> Optional[ast.AST]:
    """`x` of `x.data.cpu().numpy()` (also `x.cpu().data.numpy()`, `x.data.numpy()`), else None."""
    if not (isinstance(expr, ast.Call) and not expr.args and isinstance(expr.func, ast.Attribute)
            and expr.func.attr == "numpy"):
        return None
    expr = expr.func.value
    while True:
        if isinstance(expr, ast.Attribute) and expr.attr == "data":
            expr = expr.value
        elif isinstance(expr, ast.Call) and not expr.args and isinstance(expr.func, ast.Attribute) \
                and expr.func.attr == "cpu":
            expr = expr.func.value
        else:
            return expr


def _comparison(subject: ast.AST, at: ast.AST, names: NameBindings) -> Optional[str]:
    """"certainly" for `(l == l)` or a name every value of which here is a comparison (`same =
    a.data == b.data`), "maybe" when only some are, else None. 0.3 had no bool tensors: a
    comparison made a ByteTensor, whose element was the int 1 or 0 (pytorch/pytorch#21113)."""
    if isinstance(subject, ast.Attribute) and subject.attr == "data":
        subject = subject.value
    if isinstance(subject, ast.Compare):
        return "certainly"
    if not isinstance(subject, ast.Name):
        return None
    values = names.bindings(subject.id, at) or []  # None: a binding of unknown value
    compared = [v for v in values if isinstance(v, ast.Compare)]
    return None if not compared else "certainly" if len(compared) == len(values) else "maybe"


# Bitwise operators: two bools give a bool (`True & True`), where 0.3's ints gave an int.
_BOOL_KEEPING = (ast.BitAnd, ast.BitOr, ast.BitXor)


def _read_as_number(node: ast.AST, ctx) -> bool:
    """The read's value is only tested or counted, where True and False act as 1 and 0: the
    test of an `if`, `while`, `assert` or conditional expression, an operand of `not`, `-`, a
    comparison (`... == 1`) or arithmetic (`correct += ...`; not the right of a `%`, which may
    format it: `'%s' % x`, nor `&`, `|`, `^`, which keep two bools a bool), or of an `and`/`or`
    read so."""
    parent = ctx.index.parents.get(node)
    if isinstance(parent, (ast.If, ast.While, ast.Assert, ast.IfExp)):
        return parent.test is node
    if isinstance(parent, ast.BoolOp):  # `x or 0` is `x` itself: as the `or` is read
        return _read_as_number(parent, ctx)
    if isinstance(parent, ast.BinOp) and (isinstance(parent.op, ast.Mod) and parent.right is node
                                          or isinstance(parent.op, _BOOL_KEEPING)):
        return False  # `'%s' % x`: formatted, True is not 1; `True & True` stays a bool
    return isinstance(parent, (ast.UnaryOp, ast.Compare, ast.BinOp)) \
        or isinstance(parent, ast.AugAssign) and parent.value is node \
        and not isinstance(parent.op, _BOOL_KEEPING + (ast.Mod,))


# What a Python number has too: `x[0].real` may be either reading.
_NUMBER_ATTRIBUTES = frozenset({
    "item", "real", "imag", "conjugate", "is_integer", "hex", "as_integer_ratio", "bit_length", "to_bytes",
    "numerator", "denominator"})


def _used_as_tensor(node: ast.Subscript, ctx) -> bool:
    """`n[0].unsqueeze(0)`, `loss[0].data`: the read's value is the receiver of a tensor
    attribute, which a number lacks: the code used it as 0.3's one-element Variable."""
    parent = ctx.index.parents.get(node)
    return isinstance(parent, ast.Attribute) and parent.value is node and parent.attr not in _NUMBER_ATTRIBUTES


def _shape_free(node: ast.Subscript, ctx) -> bool:
    """`loss[0].backward()`, `loss[0].data[0]`: the next step gives the same for the 0-dim value
    as for 0.3's shape-(1,) one (its gradient; the number, which VF401 reads as `.item()`)."""
    parent = ctx.index.parents[node]
    if parent.attr == "backward":  # type: ignore[attr-defined]
        above = ctx.index.parents.get(parent)
        return isinstance(above, ast.Call) and above.func is parent and not above.args and not above.keywords
    above = ctx.index.parents.get(parent)
    return parent.attr == "data" and isinstance(above, ast.Subscript) and above.value is parent \
        and is_zero(above.slice)  # type: ignore[attr-defined]


def _view_note(shown: str, attribute: str, replacement: str) -> str:
    today = "the 0-dim value itself gives the same" if not replacement else "`.view(1)` is that value today"
    return (f"unsafe fix: in 0.3 `{shown}[0]` was a Variable of shape (1,) that kept its graph, and the code "
            f"reads its `.{attribute}`, which a number lacks: {today} (`.item()` would be a Python number); "
            f"if `{shown}` was a plain tensor, 0.3's `[0]` was a number and this line raised there")


def indexed_again(node: ast.Subscript, ctx) -> bool:
    """`loss.data[0][0]`, `x.data[0][1:]`: code that ran on 0.3 indexed what `[0]` gave, so it
    was a row of a value with two or more dimensions, never a Python number. No reduction
    changed such a value's rank in 0.4: the read still works, and `.item()[0]` would raise."""
    parent = ctx.index.parents.get(node)
    return isinstance(parent, ast.Subscript) and parent.value is node


def _accumulator_note(shown: str) -> str:
    return (f"unsafe fix: `{shown}` adds one-element values to what its caller passes in; volfix cannot "
            f"tell that is a number or one element (as a running total starts), and with several "
            f"elements `[0]` meant the first and `.item()` raises")


