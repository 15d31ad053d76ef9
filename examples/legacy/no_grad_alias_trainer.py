"""A trainer library's validation written for both 0.3 and 0.4: its own `no_grad` alias falls
back to `contextlib.suppress` on old torch, and the batches are still made volatile for 0.3.
User callbacks run after the loop, with grad on (one of them probes the model's gradient).
"""
import contextlib

import torch
import torch.nn as nn
from torch.autograd import Variable

no_grad = torch.no_grad if hasattr(torch, "no_grad") else contextlib.suppress


class Meter(object):
    def __init__(self):
        self.values = []

    def update(self, value):
        self.values.append(value)


def validate(model, loader, meter, callbacks):
    for x, y in loader:
        with no_grad():
            out = model(Variable(x, volatile=True))
            loss = ((out - Variable(y, volatile=True)) ** 2).mean()
        meter.update(loss.data[0])
    return [callback(model, meter) for callback in callbacks]


def gradient_probe(model, meter):
    probe = torch.ones(1, 3)
    out = model(probe).sum()
    out.backward()
    return model.weight.grad.clone()


def run():
    torch.manual_seed(13)
    model = nn.Linear(3, 1)
    loader = [(torch.randn(2, 3), torch.randn(2, 1)) for _ in range(3)]
    meter = Meter()
    probes = validate(model, loader, meter, [gradient_probe])
    return {"losses": meter.values, "probe": probes[0]}
