"""VF304: `action.reinforce(reward)`, the stochastic-function gradient PyTorch 0.4 removed."""
import ast

from ..files import prefilter
from .base import Rule, on

METHOD = "reinforce"


class StochasticReinforce(Rule):
    """
    ## What it does
    Finds `x.reinforce(reward)` on the sample of a stochastic function, as in the REINFORCE
    and self-critical training loops of the time: `action = probs.multinomial()`, then
    `action.reinforce(reward)` and `autograd.backward([action], [None])`.

    ## Why is this bad?
    PyTorch 0.3's stochastic outputs (`multinomial`, `bernoulli`, `normal`) took a reward
    with `reinforce()` and turned it into the score-function gradient at `backward()`. 0.4
    removed them: today the call raises `RuntimeError: reinforce() was removed. Use
    torch.distributions instead.` The policy never takes its first gradient step.

    ## Example
    ```python
    import torch

    probs = policy(state)
    action = probs.multinomial()
    next_state, reward = env.step(action)
    action.reinforce(reward)
    torch.autograd.backward([action], [None])
    ```

    ## Use instead
    ```python
    import torch

    probs = policy(state)
    m = torch.distributions.Categorical(probs)
    action = m.sample()
    next_state, reward = env.step(action)
    loss = -m.log_prob(action) * reward
    loss.backward()
    ```

    ## Fix safety
    No fix: the sample, the reward and the `backward` that consumed them are usually far apart
    (a list of actions rewarded at the end of an episode), and the loss that replaces them has
    to be written where the rewards are known.
    """

    CODE = "VF304"
    MESSAGE = "`reinforce()` was removed in PyTorch 0.4 (a RuntimeError today); use `torch.distributions`"
    NEEDS = prefilter.STOCHASTIC_REINFORCE
    NAMES = frozenset({METHOD})

    @on(ast.Call, callee=METHOD)
    def reinforce(self, call, ctx):
        func = call.func
        if not isinstance(func, ast.Attribute) or not ctx.tensor_file or len(call.args) + len(call.keywords) != 1:
            return
        if ctx.index.qual(func) is not None:
            return  # an imported module's function
        src = ctx.src
        start = src.end(func) - len(METHOD)
        ctx.report_span(self.CODE, start, src.end(call), note=(
            "no fix: make the sample with `torch.distributions` (`m = Categorical(probs); action = m.sample()`) "
            "and, where the reward is known, back-propagate `-m.log_prob(action) * reward` instead"))
