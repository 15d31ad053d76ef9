"""The shapes generated programs are composed of (see programs.py).

Each shape is a renderer registered with `@shape(name, option=(choices, ...), ...)`: given
the component's index `i` (which suffixes its names, so components never collide by
accident) and one choice per option, it returns a `Part`: top-level definitions and the
statements it adds to `main()` (or to the module), which read the shared `model`, `opt`,
`x`, `y` and write `results["c{i}_..."]`. Every shape is 0.3-valid code (SEMANTICS.md §1).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Tuple


@dataclass
class Part:
    """What one component adds: top-level definitions, statements, and what it needs."""

    helpers: List[str]
    body: List[str]
    needs: Tuple[str, ...] = ()  # "cell", "head", "contextlib"


# name -> (option space, renderer(index, options) -> Part)
SHAPES: Dict[str, Tuple[Dict[str, Tuple[str, ...]], Callable[..., Part]]] = {}


def shape(name: str, **space: Tuple[str, ...]):
    def register(render):
        SHAPES[name] = (space, render)
        return render
    return register


def reduce(kind: str, value: str) -> str:
    """How a component hands a result back: the tensor, or a Python number as 0.3 read it."""
    return {"tensor": value,
            "sum": f"{value}.sum()",
            "float": f"float({value}.data.sum())",
            "data0": f"{value}.sum().data[0]"}[kind]


REDUCE = ("tensor", "float", "data0", "sum")
NUMBER = ("float", "data0")

# ----------------------------------------------------------------------------- shapes


@shape("flag_pair", flag=("kw_not", "positional", "local", "kw_eval"), ret=REDUCE + ("trains",),
       order=("false_first", "true_first"), call=("kw", "positional", "kwargs_dict"),
       combine=("separate", "add"))
def _flag_pair(i: int, o: Dict[str, str]) -> Part:
    """`a = run(x, train=False); b = run(x, train=True)`: a flag helper called both ways."""
    wrap = {"kw_not": ["v = Variable(x, volatile=not train)"],
            "positional": ["v = Variable(x, False, not train)"],
            "local": ["not_training = not train", "v = Variable(x, volatile=not_training)"],
            "kw_eval": ["evaluation = not train", "v = Variable(x, volatile=evaluation)"]}[o["flag"]]
    if o["ret"] == "trains":
        lines = [f"def run_{i}(model, opt, x, y, train):"] + wrap + [
            "out = model(v)", "loss = F.mse_loss(out, Variable(y))", "if train:",
            "    opt.zero_grad()", "    loss.backward()", "    opt.step()", "return loss.data[0]"]
        args = "model, opt, x, y"
    else:
        lines = [f"def run_{i}(model, x, train):"] + wrap + ["out = model(v)", f"return {reduce(o['ret'], 'out')}"]
        args = "model, x"
    helper = "\n".join(lines[:1] + ["    " + line for line in lines[1:]])
    calls = []
    for name, flag in (("a", "False"), ("b", "True")):
        if o["call"] == "kw":
            calls.append(f"{name}{i} = run_{i}({args}, train={flag})")
        elif o["call"] == "positional":
            calls.append(f"{name}{i} = run_{i}({args}, {flag})")
        else:
            calls.append(f"{name}_kwargs{i} = dict(train={flag})")
            calls.append(f"{name}{i} = run_{i}({args}, **{name}_kwargs{i})")
    if o["order"] == "true_first":
        half = len(calls) // 2
        calls = calls[half:] + calls[:half]
    if o["combine"] == "add":
        calls.append(f'results["c{i}_total"] = a{i} + b{i}')
    else:
        calls += [f'results["c{i}_a"] = a{i}', f'results["c{i}_b"] = b{i}']
    return Part([helper], calls)


@shape("callee_training", depth=("1", "2"), where=("main", "helper"),
       order=("eval_first", "train_first"), ret=NUMBER + ("cat",))
def _callee_training(i: int, o: Dict[str, str]) -> Part:
    """An evaluation loop next to a call that trains in a callee (or a callee's callee)."""
    helpers = [f"""def train_epoch_{i}(model, opt, x, y):
    model.train()
    opt.zero_grad()
    out = model(Variable(x))
    loss = F.mse_loss(out, Variable(y))
    loss.backward()
    opt.step()
    return loss.data[0]"""]
    train = f"train_epoch_{i}"
    if o["depth"] == "2":
        helpers.append(f"""def fit_{i}(model, opt, x, y):
    return train_epoch_{i}(model, opt, x, y)""")
        train = f"fit_{i}"
    if o["ret"] == "cat":
        evaluate = ["outs = []", "for j in range(0, 6, 3):",
                    "    outs.append(model(Variable(x[j:j + 3], volatile=True)))",
                    "total = torch.cat(outs)"]
    else:
        evaluate = ["total = 0.0", "for j in range(0, 6, 3):",
                    "    out = model(Variable(x[j:j + 3], volatile=True))",
                    f"    total += {reduce(o['ret'], 'out')}"]
    evaluate = ["model.eval()"] + evaluate
    trains = [f"tl = {train}(model, opt, x, y)"]
    steps = evaluate + trains if o["order"] == "eval_first" else trains + evaluate
    if o["where"] == "helper":
        helpers.append(f"def validate_and_train_{i}(model, opt, x, y):\n"
                       + "\n".join("    " + s for s in steps) + "\n    return total, tl")
        body = [f"total{i}, tl{i} = validate_and_train_{i}(model, opt, x, y)"]
    else:
        body = [s.replace("total", f"total{i}").replace("tl ", f"tl{i} ").replace("outs", f"outs{i}")
                for s in steps]
    body += [f'results["c{i}_eval"] = total{i}', f'results["c{i}_train"] = tl{i}']
    return Part(helpers, body)


@shape("eval_loop", batches=("slice", "split"), flag=("kw", "positional", "flag_var"),
       collect=("cat", "float", "data0"))
def _eval_loop(i: int, o: Dict[str, str]) -> Part:
    """A plain evaluation loop over volatile batches."""
    loop = {"slice": "for j in range(0, 6, 2):\n    xb = x[j:j + 2]",
            "split": "for xb in x.split(2):"}[o["batches"]].splitlines()
    wrap = {"kw": "Variable(xb, volatile=True)", "positional": "Variable(xb, False, True)",
            "flag_var": f"Variable(xb, volatile=evaluation{i})"}[o["flag"]]
    body = [f"evaluation{i} = True"] if o["flag"] == "flag_var" else []
    if o["collect"] == "cat":
        body += [f"outs{i} = []"] + loop + [f"    outs{i}.append(model({wrap}))",
                                           f'results["c{i}_out"] = torch.cat(outs{i})']
    else:
        body += [f"total{i} = 0.0"] + loop + [f"    out{i} = model({wrap})",
                                             f"    total{i} += {reduce(o['collect'], f'out{i}')}",
                                             f'results["c{i}_total"] = total{i}']
    return Part([], body)


@shape("returned_tuple", where=("function", "method"), position=("last", "first"),
       unpack=("names", "index", "name_then_names"))
def _returned_tuple(i: int, o: Dict[str, str]) -> Part:
    """A replay memory's `sample()`: a tuple whose next states alone are volatile; the learner
    trains on the states and reads the target forward on the next states through `.data`."""
    items = ["Variable(x[:3])", "Variable(x[3:], volatile=True)"]
    if o["position"] == "first":
        items.reverse()
    states, nexts = (0, 1) if o["position"] == "last" else (1, 0)
    ret = f"return {items[0]}, {items[1]}"
    if o["where"] == "function":
        helpers = [f"def sample_{i}(x):\n    {ret}"]
        call = f"sample_{i}(x)"
    else:
        helpers = [f"class Memory{i}(object):\n    def sample(self, x):\n        {ret}"]
        call = f"Memory{i}().sample(x)"
    names = ["s", "n"] if o["position"] == "last" else ["n", "s"]
    if o["unpack"] == "names":
        head = [f"{names[0]}{i}, {names[1]}{i} = {call}"]
    elif o["unpack"] == "name_then_names":
        head = [f"batch{i} = {call}", f"{names[0]}{i}, {names[1]}{i} = batch{i}"]
    else:
        head = [f"batch{i} = {call}", f"s{i} = batch{i}[{states}]", f"n{i} = batch{i}[{nexts}]"]
    body = head + [f"q{i} = model(s{i})", f"t{i} = model(n{i}).data.max(1)[0]",
                   "opt.zero_grad()", f"loss{i} = (q{i}.max(1)[0] - Variable(t{i})).pow(2).mean()",
                   f"loss{i}.backward()", "opt.step()", f'results["c{i}_loss"] = loss{i}.data[0]']
    return Part(helpers, body)


@shape("comprehension", kind=("list_cat", "genexp_sum", "list_numbers"))
def _comprehension(i: int, o: Dict[str, str]) -> Part:
    """Volatile batches inside a comprehension or generator expression."""
    body = {
        "list_cat": [f"outs{i} = [model(Variable(xb, volatile=True)) for xb in x.split(2)]",
                     f'results["c{i}_out"] = torch.cat(outs{i})'],
        "genexp_sum": [f"s{i} = sum(float(model(Variable(xb, volatile=True)).data.sum()) for xb in x.split(2))",
                       f'results["c{i}_sum"] = s{i}'],
        "list_numbers": [f"ns{i} = [model(Variable(xb, volatile=True)).sum().data[0] for xb in x.split(3)]",
                         f'results["c{i}_numbers"] = ns{i}'],
    }[o["kind"]]
    return Part([], body)


@shape("generator", source=("param", "attr_not_train"),
       consumers=("eval_only", "eval_then_train", "train_then_eval"), ret=("cat", "float"))
def _generator(i: int, o: Dict[str, str]) -> Part:
    """A generator yielding volatile batches (the flag a parameter, or `not self.train`)."""
    if o["source"] == "param":
        helpers = [f"""def batches_{i}(x, volatile):
    for j in range(0, 6, 2):
        yield Variable(x[j:j + 2], volatile=volatile)"""]
        make = {True: f"batches_{i}(x, True)", False: f"batches_{i}(x, False)"}
    else:
        helpers = [f"""class Loader{i}(object):
    def __init__(self, x, train):
        self.x = x
        self.train = train

    def __iter__(self):
        for j in range(0, 6, 2):
            yield Variable(self.x[j:j + 2], volatile=not self.train)"""]
        make = {True: f"Loader{i}(x, train=False)", False: f"Loader{i}(x, train=True)"}
    if o["ret"] == "cat":
        evaluate = [f"outs{i} = []", f"for b in {make[True]}:", f"    outs{i}.append(model(b))",
                    f'results["c{i}_eval"] = torch.cat(outs{i})']
    else:
        evaluate = [f"total{i} = 0.0", f"for b in {make[True]}:",
                    f"    total{i} += float(model(b).data.sum())", f'results["c{i}_eval"] = total{i}']
    train = [f"for b in {make[False]}:", "    opt.zero_grad()", "    loss = model(b).pow(2).mean()",
             "    loss.backward()", "    opt.step()", f'results["c{i}_loss"] = loss.data[0]']
    body = {"eval_only": evaluate, "eval_then_train": evaluate + train,
            "train_then_eval": train + evaluate}[o["consumers"]]
    return Part(helpers, body)


@shape("self_attr", kind=("input", "hidden"), ret=REDUCE)
def _self_attr(i: int, o: Dict[str, str]) -> Part:
    """A volatile value held by `self`: an input, or an RNN hidden state set by init_hidden."""
    if o["kind"] == "input":
        helpers = [f"""class Evaluator{i}(object):
    def __init__(self, model, x):
        self.model = model
        self.inp = Variable(x, volatile=True)

    def score(self):
        return self.model(self.inp)"""]
        body = [f"ev{i} = Evaluator{i}(model, x)", f"out{i} = ev{i}.score()"]
        needs: Tuple[str, ...] = ()
    else:
        helpers = [f"""class Runner{i}(object):
    def __init__(self, cell):
        self.cell = cell
        self.hidden = self.init_hidden(True)

    def init_hidden(self, volatile):
        return Variable(torch.zeros(1, 5), volatile=volatile)

    def step(self, x):
        out, self.hidden = self.cell(x, self.hidden)
        return out"""]
        body = [f"r{i} = Runner{i}(cell)", f"r{i}.step(Variable(x[0:1]))",
                f"out{i} = r{i}.step(Variable(x[1:2]))"]
        needs = ("cell",)
    body.append(f'results["c{i}_out"] = {reduce(o["ret"], f"out{i}")}')
    return Part(helpers, body, needs)


@shape("closure", kind=("def", "lambda"), ret=REDUCE)
def _closure(i: int, o: Dict[str, str]) -> Part:
    """A closure (or lambda) that wraps its argument as volatile."""
    if o["kind"] == "def":
        helpers = [f"""def make_predict_{i}(model):
    def predict(t):
        return model(Variable(t, volatile=True))
    return predict"""]
        body = [f"predict{i} = make_predict_{i}(model)"]
    else:
        helpers = []
        body = [f"predict{i} = lambda t: model(Variable(t, volatile=True))"]
    body += [f"p{i} = predict{i}(x)", f'results["c{i}_pred"] = {reduce(o["ret"], f"p{i}")}']
    return Part(helpers, body)


@shape("try_finally", where=("main", "helper"), ret=REDUCE)
def _try_finally(i: int, o: Dict[str, str]) -> Part:
    """Evaluation inside try/finally that restores train mode."""
    if o["where"] == "helper":
        helpers = [f"""def evaluate_{i}(model, x):
    model.eval()
    try:
        out = model(Variable(x, volatile=True))
        return {reduce(o["ret"], "out")}
    finally:
        model.train()"""]
        return Part(helpers, [f'results["c{i}_val"] = evaluate_{i}(model, x)'])
    return Part([], ["model.eval()", "try:", f"    out{i} = model(Variable(x, volatile=True))",
                     f"    v{i} = {reduce(o['ret'], f'out{i}')}", "finally:", "    model.train()",
                     f'results["c{i}_val"] = v{i}'])


GRAD_MODE_ALIASES = {
    "torch_no_grad": None,
    "autograd_no_grad": None,
    "hasattr_alias": 'no_grad = torch.no_grad if hasattr(torch, "no_grad") else contextlib.suppress',
    "if_alias": ('if hasattr(torch, "no_grad"):\n    no_grad = torch.no_grad\n'
                 "else:\n    no_grad = contextlib.suppress"),
    "getattr_alias": 'no_grad = getattr(torch, "no_grad", contextlib.suppress)',
}


@shape("grad_mode", spelling=tuple(GRAD_MODE_ALIASES), after=("none", "meter", "callback"))
def _grad_mode(i: int, o: Dict[str, str]) -> Part:
    """Existing grad-mode code around a volatile pass, in the spellings real code uses."""
    manager = {"torch_no_grad": "torch.no_grad()", "autograd_no_grad": "torch.autograd.no_grad()"}.get(
        o["spelling"], "no_grad()")
    alias = GRAD_MODE_ALIASES[o["spelling"]]
    helpers = [alias] if alias else []
    body = [f"meter{i} = []", f"with {manager}:", f"    out{i} = model(Variable(x, volatile=True))",
            f"    val{i} = float(out{i}.data.sum())"]
    if o["after"] == "meter":
        body.append(f"meter{i}.append(val{i})")
    elif o["after"] == "callback":
        body += [f"meter{i}.append(val{i})", f"cb{i} = model(Variable(x))",
                 f'results["c{i}_callback"] = cb{i}']
    body += [f'results["c{i}_val"] = val{i}', f'results["c{i}_meter"] = meter{i}']
    return Part(helpers, body, ("contextlib",) if alias else ())


@shape("train_step", wrap=("plain", "volatile_false", "positional_false"))
def _train_step(i: int, o: Dict[str, str]) -> Part:
    """An ordinary training step in the same function: it must keep recording."""
    wrap = {"plain": "Variable(x)", "volatile_false": "Variable(x, volatile=False)",
            "positional_false": "Variable(x, False, False)"}[o["wrap"]]
    return Part([], ["opt.zero_grad()", f"loss{i} = F.mse_loss(model({wrap}), Variable(y))",
                     f"loss{i}.backward()", "opt.step()", f'results["c{i}_loss"] = loss{i}.data[0]'])


@shape("volatile_attr", kind=("set_true", "set_false_target"), ret=REDUCE)
def _volatile_attr(i: int, o: Dict[str, str]) -> Part:
    """`v.volatile = True` on a leaf; `t.volatile = False` on a volatile target (DQN)."""
    if o["kind"] == "set_true":
        body = [f"v{i} = Variable(x)", f"v{i}.volatile = True", f"out{i} = model(v{i})",
                f'results["c{i}_out"] = {reduce(o["ret"], f"out{i}")}']
    else:
        body = [f"target{i} = model(Variable(x, volatile=True))", f"target{i}.volatile = False",
                "opt.zero_grad()", f"loss{i} = F.mse_loss(model(Variable(x)), target{i})",
                f"loss{i}.backward()", "opt.step()", f'results["c{i}_loss"] = loss{i}.data[0]']
    return Part([], body)


@shape("volatile_read", where=("helper", "main"))
def _volatile_read(i: int, o: Dict[str, str]) -> Part:
    """`.volatile` read in a branch."""
    if o["where"] == "helper":
        helpers = [f"""def head_{i}(model, v):
    out = model(v)
    if v.volatile:
        return float(out.data.sum())
    return out.sum()"""]
        return Part(helpers, [f'results["c{i}_eval"] = head_{i}(model, Variable(x, volatile=True))',
                              f'results["c{i}_train"] = head_{i}(model, Variable(x))'])
    return Part([], [f"out{i} = model(Variable(x, volatile=True))", f"if out{i}.volatile:",
                     f'    results["c{i}_kind"] = "volatile"', "else:",
                     f'    results["c{i}_kind"] = "graph"'])


@shape("repackage", hidden=("single", "tuple"), evaluation=("flag", "none"))
def _repackage(i: int, o: Dict[str, str]) -> Part:
    """RNN training with `repackage_hidden` (`type(h) == Variable`, `Variable(h.data)`)."""
    flag = "volatile=evaluation" if o["evaluation"] == "flag" else ""
    sig = "evaluation" if o["evaluation"] == "flag" else ""
    helpers = [f"""def repackage_hidden_{i}(h):
    if type(h) == Variable:
        return Variable(h.data)
    else:
        return tuple(repackage_hidden_{i}(v) for v in h)""",
               f"""def init_hidden_{i}({sig}):
    return Variable(torch.zeros(1, 5){', ' + flag if flag else ''})"""]
    first = "init_hidden_{0}(False)" if sig else "init_hidden_{0}()"
    h = f"hidden{i}"
    tuple_hidden = o["hidden"] == "tuple"
    body = [f"{h} = {'(' if tuple_hidden else ''}{first.format(i)}{',)' if tuple_hidden else ''}",
            "for j in range(3):",
            f"    {h} = repackage_hidden_{i}({h})",
            "    cell_opt.zero_grad()",
            f"    out, h = cell(Variable(x[j:j + 1]), {h}[0])" if tuple_hidden
            else f"    out, {h} = cell(Variable(x[j:j + 1]), {h})"]
    if tuple_hidden:
        body.append(f"    {h} = (h,)")
    body += ["    loss = out.pow(2).mean()", "    loss.backward()", "    cell_opt.step()",
             f'results["c{i}_loss"] = loss.data[0]']
    if sig:
        body += [f"eh{i} = init_hidden_{i}(True)",
                 f"eo{i}, eh{i} = cell(Variable(x[3:4], volatile=True), eh{i})",
                 f'results["c{i}_eval"] = eo{i}']
    return Part(helpers, body, ("cell",))


@shape("rewrap", use=("train_head", "features_only"))
def _rewrap(i: int, o: Dict[str, str]) -> Part:
    """Volatile features re-wrapped with `Variable(f.data)`, then a head trained on them."""
    body = [f"feat{i} = model(Variable(x, volatile=True))", f"feat{i} = Variable(feat{i}.data)"]
    if o["use"] == "train_head":
        body += ["head_opt.zero_grad()", f"hl{i} = head(feat{i}).pow(2).mean()", f"hl{i}.backward()",
                 "head_opt.step()", f'results["c{i}_loss"] = hl{i}.data[0]']
    else:
        body.append(f'results["c{i}_feat"] = feat{i}')
    return Part([], body, ("head",) if o["use"] == "train_head" else ())


@shape("train_on_volatile", how=("backward", "step_helper"))
def _train_on_volatile(i: int, o: Dict[str, str]) -> Part:
    """A volatile value reaching backward(): 0.3 raised a RuntimeError here."""
    if o["how"] == "backward":
        return Part([], [f"out{i} = model(Variable(x, volatile=True))", f"loss{i} = out{i}.pow(2).mean()",
                         "opt.zero_grad()", f"loss{i}.backward()", "opt.step()",
                         f'results["c{i}_loss"] = loss{i}.data[0]'])
    helpers = [f"""def step_{i}(opt, loss):
    opt.zero_grad()
    loss.backward()
    opt.step()"""]
    return Part(helpers, [f"out{i} = model(Variable(x, volatile=True))",
                          f"step_{i}(opt, out{i}.pow(2).mean())", f'results["c{i}_done"] = 1'])


@shape("one_path", use=("eval_and_train", "eval_only"), ret=REDUCE)
def _one_path(i: int, o: Dict[str, str]) -> Part:
    """A helper that returns the volatile value on one path only."""
    helpers = [f"""def prepare_{i}(x, evaluate):
    if evaluate:
        return Variable(x, volatile=True)
    return Variable(x)"""]
    body = [f"e{i} = model(prepare_{i}(x, True))", f'results["c{i}_eval"] = {reduce(o["ret"], f"e{i}")}']
    if o["use"] == "eval_and_train":
        body += ["opt.zero_grad()", f"t{i} = F.mse_loss(model(prepare_{i}(x, False)), Variable(y))",
                 f"t{i}.backward()", "opt.step()", f'results["c{i}_loss"] = t{i}.data[0]']
    return Part(helpers, body)


@shape("phase_tuples", order=("train_first", "val_first"), ret=NUMBER + ("tensor",))
def _phase_tuples(i: int, o: Dict[str, str]) -> Part:
    """Positional flags arriving through a generator of `(phase, requires_grad, volatile)`."""
    phases = ['    yield "train", False, False', '    yield "val", False, True']
    if o["order"] == "val_first":
        phases.reverse()
    helpers = [f"def phases_{i}():\n" + "\n".join(phases)]
    body = [f"for phase, requires_grad, volatile in phases_{i}():",
            "    out = model(Variable(x, requires_grad, volatile))",
            '    if phase == "train":', "        opt.zero_grad()", "        loss = out.pow(2).mean()",
            "        loss.backward()", "        opt.step()",
            f'        results["c{i}_loss"] = loss.data[0]', "    else:",
            f'        results["c{i}_val"] = {reduce(o["ret"], "out")}']
    return Part(helpers, body)


@shape("grad_batch", caller=("no_grad_true", "plain_false", "both"))
def _grad_batch(i: int, o: Dict[str, str]) -> Part:
    """torchtext's Batch: `set_grad_enabled(train)` around tensor creation only, with a
    volatile flag inside (half-migrated code), used inside and outside a caller's no_grad."""
    helpers = [f"""class Batch{i}(object):
    def __init__(self, x, train):
        with torch.set_grad_enabled(train):
            self.src = Variable(x, volatile=not train)"""]
    inside = ["with torch.no_grad():", f"    b{i} = Batch{i}(x, train=True)", f"    out{i} = model(b{i}.src)",
              f'results["c{i}_inside"] = out{i}']
    outside = [f"v{i} = Batch{i}(x, train=False)", f"vo{i} = model(v{i}.src)", f'results["c{i}_outside"] = vo{i}']
    body = {"no_grad_true": inside, "plain_false": outside, "both": inside + outside}[o["caller"]]
    return Part(helpers, body)


@shape("removed_args", sample=("volatile", "plain", "replacement"), retain=("method", "autograd", "none"),
       ret=NUMBER + ("tensor",))
def _removed_args(i: int, o: Dict[str, str]) -> Part:
    """The arguments 0.4 removed: `probs.multinomial()` drew one sample in 0.3 (VF303), and
    `retain_variables=True` kept the graph for a second loss on it (VF302)."""
    wrap = "Variable(x, volatile=True)" if o["sample"] == "volatile" else "Variable(x)"
    call = "multinomial(replacement=True)" if o["sample"] == "replacement" else "multinomial()"
    body = [f"probs{i} = F.softmax(model({wrap}), dim=1)", f"draw{i} = probs{i}.{call}",
            f'results["c{i}_draw"] = draw{i}.data', f'results["c{i}_probs"] = {reduce(o["ret"], f"probs{i}")}']
    if o["retain"] != "none":
        first = {"method": f"first{i}.backward(retain_variables=True)",
                 "autograd": f"torch.autograd.backward([first{i}], retain_variables=True)"}[o["retain"]]
        body += ["opt.zero_grad()", f"out{i} = model(Variable(x))", f"first{i} = out{i}.pow(2).mean()", first,
                 f"second{i} = out{i}.abs().mean()", f"second{i}.backward()", "opt.step()",
                 f'results["c{i}_loss"] = first{i}.data[0] + second{i}.data[0]']
    return Part([], body)
