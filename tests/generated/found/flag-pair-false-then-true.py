# differed (first long run, fixed since), safe fix: the region around `a0 = run_0(model, x, train=False)` also covers `b0 = run_0(model, x, train=True)`; b0's forward records no graph (in 0.3 it did)
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(4, 6)
        self.fc2 = nn.Linear(6, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def run_0(model, x, train):
    v = Variable(x, volatile=not train)
    out = model(v)
    return out


def main():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(6, 4)
    y = torch.randn(6, 3)
    results = {}
    a0 = run_0(model, x, train=False)
    b0 = run_0(model, x, train=True)
    results["c0_total"] = a0 + b0
    return results
