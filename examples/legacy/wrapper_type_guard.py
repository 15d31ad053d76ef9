"""A library wrapper that turns arrays and tensors into Variables and leaves Variables alone,
guarded by `type(x) != Variable` (the shape of fastai 0.7's `create_variable`).

Written the PyTorch 0.3 way. Since 0.4 the guard is always true (a tensor's type is never
`Variable`), so every tensor is wrapped again; `isinstance(x, torch.Tensor)` is not the old
test either: it is true for every tensor, so the branch would never run.
"""
import torch
import torch.nn as nn
from torch.autograd import Variable


def to_gpu(x):
    return x.cuda() if torch.cuda.is_available() else x


def create_variable(x, requires_grad=False):
    if type(x) != Variable:
        x = to_gpu(torch.tensor(x)) if not torch.is_tensor(x) else to_gpu(x)
        x = Variable(x, requires_grad=requires_grad)
    return x


def V(x, requires_grad=False):
    return create_variable(x, requires_grad)


def run():
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    inputs = V([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
    offsets = V(torch.randn(2, 3), requires_grad=True)  # a tensor asked to learn
    again = V(offsets)  # already a Variable: returned as it is
    out = model(inputs + again)
    out.sum().backward()
    return {"out": out, "offsets_grad": offsets.grad, "same": again is offsets,
            "weight_grad": model.weight.grad}
