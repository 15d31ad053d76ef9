"""A forward helper whose flag picks volatile inference or a training pass, called both ways
in neighbouring statements (a research script comparing eval and train outputs).

Written the PyTorch 0.3 way: `volatile=not train` in the helper.
"""
import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable


def forward_pass(model, x, train):
    inp = Variable(x, volatile=not train)
    return model(inp)


def compare(model, x):
    a = forward_pass(model, x, train=False)
    b = forward_pass(model, x, train=True)
    return {"a": a, "b": b, "gap": (a - b).abs().sum()}


def run():
    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    opt = optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(5, 4)
    out = compare(model, x)
    opt.zero_grad()
    out["b"].pow(2).sum().backward()
    opt.step()
    return {"a": out["a"], "b": out["b"], "gap": out["gap"],
            "first_grad": model[0].weight.grad, "last_weight": model[2].weight}
