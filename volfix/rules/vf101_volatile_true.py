"""VF101: `Variable(x, volatile=True)`."""
import ast

from ..files import prefilter
from ..model import Applicability
from ..flow import grad_mode
from ..flow.helper_calls import HELPER_CALL
from .base import VARIABLE_CALL, Rule, on
from .variable_calls import branch_flag, default_note, unbound_note, unresolved_note, unwrap


class VolatileInVariableCall(Rule):
    """
    ## What it does
    Finds `Variable(x, volatile=True)` (as a keyword or as the third positional argument)
    where `Variable` is `torch.autograd.Variable`.

    ## Why is this bad?
    Since PyTorch 0.4 `volatile` only warns and does nothing: `Variable(x, volatile=True)`
    returns `x.detach()`, and everything computed from it records an autograd graph again.
    Inference code written for 0.3 silently uses the memory and time it was written to save.
    Deleting `volatile=True` by hand silences the warning and keeps the loss.

    ## Example
    ```python
    import torch
    from torch.autograd import Variable


    def evaluate(model, loader):
        preds = []
        for batch in loader:
            out = model(Variable(batch, volatile=True))
            preds.append(out.max(1)[1])
        return preds
    ```

    ## Use instead
    ```python
    import torch


    def evaluate(model, loader):
        preds = []
        for batch in loader:
            with torch.no_grad():
                out = model(batch)
                preds.append(out.max(1)[1])
        return preds
    ```

    ## Fix safety
    A fix is safe only when the fixed program cannot be told from the legacy one run with its
    0.3 meaning (`volfix.legacy`): the same values, the same graphs, the same updates.
    volfix unwraps the call and follows the value: the statements that compute with it
    (through assignments, loops and containers; returning, copying or appending a value only
    moves it) go under `torch.no_grad()`. A statement between them that reads no volatile value
    stays outside and the region is split around it, unless it cannot record a graph
    (constants, logging, arithmetic on Python numbers, moves, NumPy copies such as
    `feats[i] = np.array(h.data.cpu().numpy())` and `for i in range(n)` loops of them, a
    method of a `...Meter()` given plain values). A call that trains
    (`backward()`, `torch.autograd.grad()`, an optimizer `step()`, or a function of the file
    that does, followed through its callees with the call's literal flags, also where a callee
    passes its own on by name: `run_one_epoch(loader, training=False)` calling `make_step(data,
    training)`) is never wrapped. A
    region that is a whole function body, apart from a docstring and statements that cannot
    touch autograd (constants, `model.eval()`, logging, `time.time()`, `AverageMeter()`,
    `return x`), becomes `@torch.no_grad()`: never on `async def`, always on generators whose
    region spans a `yield`; a region that is one `if` on a Python number goes inside it. When
    no statement would record a graph (the value is only created, moved or read through
    `.data`) nothing is wrapped: the call is only unwrapped, and the value is followed to where
    it is computed (callers of a helper that returns it, the class's methods reading
    `self.attr`); a value returned to no caller volfix can see stays a finding. A statement
    that computes only with values that cannot require grad there records nothing either and
    stays outside: the region's own output, numbers, names that every binding reaching the
    read makes a fresh tensor (`reward = Variable(torch.FloatTensor(reward))` above `expected =
    reward + GAMMA * next_q.max(1)[0]`: one region over the target forward, not a second one
    over the arithmetic; with a parameter `gamma`, which may be a tensor that requires grad,
    the arithmetic gets its region). A call of a function of the file whose every return is
    without autograd history (`edge_accuracy(logits, rel)` returning `float(correct) / n` of
    `preds.data.eq(...)`) computes with the value, but its result is plain data: the
    accuracies it fills are not followed, and the report after the loop stays outside. A call
    of a method that stores an argument on its object (`bot.observe(caption=c)` appending to
    `self.obs`, on a class of the file) makes the object hold the value: what its methods
    compute afterwards (`bot.predict()`) is in the region, as 0.3 kept it volatile; on an
    object of a class volfix cannot see (another file's), called for its effect
    (`q_bot.observe(-1, caption=c)`) and asked to compute again later (`q_bot.predict_image()`),
    the fix is unsafe and says so. A module-level value read as a global by a function of the
    file (`ques_input = Variable(q, volatile=True)`, then `rank_all = eval()`) makes the call
    compute with it. A value made volatile on one branch of an `if` only, while the other
    path keeps a plain one (`if kw > 1: input = Variable(buf, volatile=True)`), gets no safe
    region after the `if`: on the other path 0.3 recorded a graph there. When the other branch
    binds the same name to a plain `Variable(...)` (`if training: images = Variable(images)`
    / `else: images = Variable(images, volatile=True)`, with no `elif` and no jump), the name
    is volatile after the `if` exactly when the test fails: the test is the flag, as
    `volatile=not training` would be (VF103), and the region is `set_grad_enabled(training)`
    (or, for a parameter, the calls passing a false `training` get theirs). A helper that
    returns a tuple holding the value at some positions only (a replay memory's `return idxs,
    states, next_states` with `next_states` volatile) makes only those names volatile where a
    caller unpacks it (`idxs, states, next_states = mem.sample(n)`, or indexes a name bound
    once to it: `batch = mem.sample(n)`, then `batch[2]`): the region covers the
    target networks' forwards on `next_states`, not the training forward on `states`. A value computed
    in the region and returned carries no graph, as in 0.3: the fix stays safe unless a caller
    in the file trains on it, combines it with a value that may require grad, or feeds it to a
    module (`scores = classifier(h)`: 0.3 kept that volatile too). Callers in other files are
    not followed: when another file of the project calls the function (or one of this file's
    functions handing its result back), spelling `.name(` for a method or `name(` with an import
    of the module, the fix is unsafe and the note names that call (quick-nlp's `hidden_state()`,
    whose state another file's GRU computes with). So does a value the region
    keeps where other functions of the file read it: `self.feat` read by the class's other
    methods (when no other statement of the class stores it), a module-level list it is
    appended to (`features.append(h)`, then `head(torch.cat(features))`). A helper that returns
    a lazy value computing with the volatile one (`return map(model, inputs)`, a generator of
    forwards) makes the fix unsafe: those forwards run when the caller iterates, after the
    region. A region over an `if` that
    also keeps on `self` a value a module of `self` computes (`self.last_w = w` after `w =
    self.hyper(z)`) is unsafe: in 0.3 that value kept its graph. When a caller trains on the
    one value returned (a module's `forward` whose
    index tensor is volatile, `loss = criterion(net(h, idx), y); loss.backward()`: `net(...)`
    runs `forward`), 0.3 raised at that `backward()` and a region would make it raise today:
    the call is only unwrapped, unsafe, and the note names the call. A value one branch
    re-wraps plain (`if frozen: feat = Variable(feat.data)`) and the region then covers with a
    graph on that path makes the fix unsafe; when the region would also cover a training step
    there, there is no fix. A volatile buffer filled by sliced writes (`output[:, k] =
    model(x)`) stays volatile in 0.3 whatever is written into it; unwrapped, each write
    records into it, so the writes go into the region, unsafe: the model calls there no
    longer build the graph 0.3 built and dropped at the write (a number written is exact and
    safe). A plain `Variable(y)` re-wraps data (0.3 only accepted a tensor there), so the
    value stops at it. When the value itself reaches `.backward()` or
    `torch.autograd.grad()`, 0.3 raised there: what it computes before it meets a value that
    may need grad (a DQN's or DDPG's target networks) goes under `no_grad`; otherwise the call
    is only unwrapped and the program now trains. Both are unsafe fixes, and the note says so.
    When the value gets there through a module of the file whose `forward` rebuilds its result
    from `.data` (the image-captioning encoder's `Variable(features.data)`), 0.3 trained on that
    result: the call gets no region (it would stop those layers from training), the value is
    only unwrapped, and the note says what before the rebuild now records. A region's note names
    a call it covers that may do so unseen (a module whose `forward` reads `.data`, or an object
    volfix cannot read, such as another file's class).
    Nothing is wrapped inside an existing grad-disabled region, in any of its spellings
    (`torch.autograd.no_grad`, a `no_grad = torch.no_grad if hasattr(torch, "no_grad") else
    contextlib.suppress` alias, version gates, a project function returning `torch.no_grad()`
    on today's torch such as fastai's `no_grad_context()`). Unwrapping is safe: in 0.3 the argument of
    `Variable(...)` had to be a tensor, so no gradient can flow into it, unless the code
    evidently computes it with a module (`Variable(model(x), volatile=True)`, code already
    half-migrated: unsafe, or safe with `legacy-semantics = true`). The fix is also unsafe when
    the region cannot avoid covering a value used after it. A source inside a lambda makes the
    whole lambda the region, `torch.no_grad()(lambda t: model(t))`, unsafe: what its callers
    compute from its result is not followed (0.3 kept that volatile too). A volatile `Variable`
    as a parameter's default (`def step(x, h=Variable(z, volatile=True))`) reaches the body only
    on the calls that leave it out, which 0.3 ran without a graph: no region can cover just
    those, so the unwrap alone is unsafe and says so. In a notebook, a region ending with a
    cell's last line, an expression whose value the cell shows (`net(start)`), is unsafe: inside
    the `with` block the cell shows nothing. A region that covers where the value meets a
    module's output, in a function that hands a value on (`loss = scores.sum() + total`, then
    `return loss`), is unsafe: 0.3 made that result volatile, so a caller that trains on it would
    have raised, which says volfix took for volatile what was not.

    ## References
    - [PyTorch 0.4.0 migration guide](https://pytorch.org/blog/pytorch-0_4_0-migration-guide/)
    - [`torch.no_grad`](https://pytorch.org/docs/stable/generated/torch.no_grad.html)
    """

    CODE = "VF101"
    MESSAGE = "`volatile=True` is ignored since PyTorch 0.4; use `torch.no_grad()`"
    FIX = Applicability.SAFE
    FIX_TITLE = "Unwrap the `Variable`"
    NEEDS = prefilter.TORCH_VARIABLE
    NAMES = frozenset({"Variable"})

    @on(VARIABLE_CALL)
    def call(self, call, ctx):
        vc = ctx.variable_call(call)
        if vc is None or vc.volatile_truth is not True:
            return
        if vc.requires_grad_truth is True:
            ctx.report(self.CODE, call, note="no fix: `volatile` together with `requires_grad` raises a ValueError")
            return
        unresolved = unresolved_note(vc) or unbound_note(vc)
        finding = ctx.report(self.CODE, call, note=unresolved or vc.wrapper)
        if unresolved and not (ctx.torch_file or ctx.index.module_names.star_modules):
            return
        undo = unwrap(vc, ctx, legacy_call=True)
        stmt = ctx.index.statement_of(call)
        flag = branch_flag(stmt, {stmt.targets[0].id}, ctx) if _plain_on_the_other_branch(stmt, vc, ctx) else None
        ctx.add_source(finding, call, own_edits=undo.edits, deleted=undo.deleted,
                       data=None if undo.keyword_only else vc.data, flag=flag,
                       unsafe_because=unresolved or default_note(call, ctx.index), legacy_call=True)

    @on(HELPER_CALL)
    def helper_call(self, call, ctx):
        """`get_batch(val, i, evaluation=True)` where `get_batch` (another file) makes its
        value volatile when `evaluation` is true: the call is the source."""
        hc = ctx.helper_call(call)
        if hc is None or hc.kind != "true" or ctx.covered(call) or grad_mode.reads_covered(ctx.index, call):
            return
        param = f"`{hc.sig.param}`" if hc.sig.param else "a volatile value"
        finding = ctx.report(self.CODE, call,
                             message=f"{hc.name} ({hc.where}) returns a value made with `volatile=True`, ignored "
                                     f"since PyTorch 0.4: use `torch.no_grad()` here" if hc.sig.param is None else
                                     f"{hc.name} ({hc.where}) passes {param} to `volatile=`, ignored since "
                                     f"PyTorch 0.4: use `torch.no_grad()` here")
        finding.call_site = True
        ctx.add_source(finding, call, call_site=True, computing=hc.sig.computes)


def _plain_on_the_other_branch(stmt: ast.stmt, vc, ctx) -> bool:
    """`if training: images = Variable(images)` / `else: images = Variable(images,
    volatile=True)`: the statement binds a name in one branch of an `if` (no `elif` on either
    side) whose other branch binds it to a plain `Variable(...)` or to the tensor this call
    wraps, never to a volatile value, and does not jump away.
    After the `if` the name is volatile exactly when the test fails (holds): the test is the
    source's flag, as `volatile=not training` would be (`branch_flag`)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and stmt.value is vc.call and vc.data is not None):
        return False
    node = ctx.index.parents.get(stmt)
    if not isinstance(node, ast.If) or not node.orelse or _is_elif(node, ctx) \
            or len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        return False
    other = node.orelse if any(s is stmt for s in node.body) else node.body
    name = stmt.targets[0].id
    binds = [n for s in other for n in ast.walk(s) if isinstance(n, ast.Assign) and len(n.targets) == 1
             and isinstance(n.targets[0], ast.Name) and n.targets[0].id == name]
    if any(isinstance(n, (ast.Return, ast.Raise, ast.Break, ast.Continue)) for s in other for n in ast.walk(s)) \
            or any(_volatile_keyword(n.value) for n in binds):
        return False  # it may leave, or bind the name volatile too
    # a `Variable(...)` without the flag, or the very tensor this call wraps (`images =
    # data['image']`, also what an earlier pass made of `Variable(data['image'])`); not any
    # plain value, which an earlier pass may have made of a volatile one
    data = ast.dump(vc.data)
    return any(n in other and (isinstance(n.value, ast.Call) and ctx.index.is_variable(n.value.func)
                               or ast.dump(n.value) == data) for n in binds)


def _is_elif(node: ast.If, ctx) -> bool:
    parent = ctx.index.parents.get(node)
    return isinstance(parent, ast.If) and len(parent.orelse) == 1 and parent.orelse[0] is node


def _volatile_keyword(value: ast.AST) -> bool:
    """The value passes `volatile=` somewhere (`Variable(x, volatile=True)`, a helper's flag)."""
    return any(isinstance(n, ast.keyword) and n.arg == "volatile" for n in ast.walk(value))
