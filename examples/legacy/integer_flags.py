"""An evaluation helper whose flag comes from an integer option (`--train 1`, as many
scripts parsed their switches with `type=int`), and a hypernetwork slice that records only
while training or searching the architecture.

Written the PyTorch 0.3 way: `volatile=not train`, and `volatile=not self.training and not
self.search`. 0.3's `volatile=` took any integer; today's `torch.set_grad_enabled` takes a
bool and raises TypeError for `1`.
"""
import os

import torch
import torch.nn as nn
from torch.autograd import Variable

TRAIN = int(os.environ.get("INTEGER_FLAGS_TRAIN", "1"))


def forward_pass(model, x, train):
    out = model(Variable(x, volatile=not train))
    return out


class Slice(nn.Module):
    def __init__(self, search):
        super(Slice, self).__init__()
        self.search = search
        self.conv = nn.Linear(4, 3)

    def forward(self, c):
        return self.conv(Variable(c, volatile=not self.training and not self.search))


def run():
    torch.manual_seed(5)
    model = nn.Linear(4, 2)
    x = torch.randn(3, 4)
    trained = forward_pass(model, x, TRAIN)
    hyper = Slice(search=0)
    hyper.eval()
    frozen = hyper(x)
    hyper.train()
    searched = hyper(x)
    searched.sum().backward()
    return {"trained": trained, "frozen": frozen, "searched": searched,
            "grad": hyper.conv.weight.grad}
