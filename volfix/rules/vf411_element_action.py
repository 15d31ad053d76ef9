"""VF411: `env.step(action[0, 0])` with `action` a plain tensor: a number in 0.3, a 0-dim tensor
since 0.4, which gym's action spaces refuse."""
import ast
import re

from ..files import prefilter
from ..model import Applicability
from .base import Rule, on
from .plain_elements import ELEMENT_NAMES, PlainElements, report_number_read

# The receiver of a gym environment's `step`: `env`, `self.env`, `envs`, `test_env`, `environment`.
_ENVIRONMENT = re.compile(r"(?:^|_)envs?(?:$|_)|environment", re.IGNORECASE)
_GYM = frozenset({"gym", "gymnasium"})


class ElementAction(Rule):
    """
    ## What it does
    Finds an element of a tensor read from `.data` or made by a constructor passed as the
    action to a gym environment's `step()`: `env.step(action[0, 0])` after `action =
    model(Variable(state, volatile=True)).data.max(1)[1].view(1, 1)` or `action =
    torch.LongTensor([[random.randrange(2)]])`, the DQN idiom of PyTorch 0.3's reinforcement
    learning tutorial. The receiver is a name or attribute called like an environment (`env`,
    `self.env`, `envs`, `test_env`, `environment`), in a file that imports `gym` (or
    `gymnasium`): an environment class of the project's own may well take the tensor
    (`if action == 1:`). Where volfix does not know the tensor's rank, only an element read by
    two integers or more.

    ## Why is this bad?
    In PyTorch 0.3 an element of a tensor was a Python number, which a discrete action space
    accepts. Since 0.4 it is a 0-dim tensor, and gym's `Discrete.contains` refuses it:
    `CartPole.step` fails its assertion (`AssertionError: tensor(1) (<class 'torch.Tensor'>)
    invalid`). The tutorial itself changed to `action.item()` in 0.4.

    ## Example
    ```python
    import gym
    import torch

    env = gym.make("CartPole-v1")
    action = torch.LongTensor([[1]])
    env.step(action[0, 0])
    ```

    ## Use instead
    ```python
    import gym
    import torch

    env = gym.make("CartPole-v1")
    action = torch.LongTensor([[1]])
    env.step(action[0, 0].item())
    ```

    ## Fix safety
    The action becomes `element.item()`, the number 0.3 passed. Safe where volfix knows the
    tensor's rank and it matches the integers indexing it (`view(1, 1)`, `LongTensor([[a]])`);
    otherwise unsafe: for a row of a tensor with more dimensions (a continuous action),
    `.item()` raises.
    """

    CODE = "VF411"
    MESSAGE = "a tensor element is a 0-dim tensor since PyTorch 0.4, not a number: an environment's `step()` refuses it"
    FIX = Applicability.SAFE
    FIX_TITLE = "Pass the element's number (`.item()`)"
    NEEDS = prefilter.ELEMENT_ACTION
    NAMES = ELEMENT_NAMES

    @on(ast.Call, callee="step")
    def call(self, node, ctx):
        func = node.func
        if not (isinstance(func, ast.Attribute) and node.args and not isinstance(node.args[0], ast.Starred)):
            return
        receiver = func.value
        name = receiver.id if isinstance(receiver, ast.Name) else receiver.attr \
            if isinstance(receiver, ast.Attribute) else None
        if name is None or not _ENVIRONMENT.search(name) or not ctx.index.imports_any(_GYM):
            return  # an environment of the file's own (`if action == 1:`) may take the tensor
        action = node.args[0]
        certain = PlainElements(ctx.index).number_read(action, node)
        if certain is None:
            return  # (`env.step(a[0])` of a tensor of unknown rank: as likely a continuous action's row)
        report_number_read(ctx, self.CODE, self.FIX_TITLE, action, certain,
                           f"`{ctx.src.segment(func)}()` refuses it")
