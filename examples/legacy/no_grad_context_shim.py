"""fastai's validation loop: the library's own `no_grad_context()` returns `torch.no_grad()` on
torch 0.4 and a do-nothing context before it, where `VV()` made the batches volatile instead.
`predict()` has no such context and relies on the volatile batch alone; the training step
between the two must keep its graph.
"""
import contextlib
from distutils.version import LooseVersion

import torch
import torch.nn as nn
from torch.autograd import Variable

IS_TORCH_04 = LooseVersion(torch.__version__) >= LooseVersion('0.4')


def no_grad_context(): return torch.no_grad() if IS_TORCH_04 else contextlib.suppress()


def VV(x): return Variable(x, volatile=True)


def V(x): return Variable(x)


def validate(model, batches):
    losses = []
    with no_grad_context():
        for x, y in batches:
            preds = model(VV(x))
            losses.append(((preds - VV(y)) ** 2).mean().data[0])
    return losses


def predict(model, x):
    return model(VV(x))


def train_step(model, opt, x, y):
    opt.zero_grad()
    loss = ((model(V(x)) - V(y)) ** 2).mean()
    loss.backward()
    opt.step()
    return loss.data[0]


def run():
    torch.manual_seed(7)
    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = [(torch.randn(3, 4), torch.randn(3, 1)) for _ in range(2)]
    before = validate(model, batches)
    trained = train_step(model, opt, *batches[0])
    return {"before": before, "trained": trained, "weight": model.weight.detach().clone(),
            "after": validate(model, batches), "prediction": predict(model, batches[1][0])}
