# --unsafe-fixes (and safe): a volatile self.hidden carried by each step (out, self.hidden = self.cell(x, self.hidden)) gets its region in step(): the outputs have no graph, as in 0.3
# shape: self_attr(kind=hidden, ret=tensor)
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


class Cell(nn.Module):
    def __init__(self):
        super(Cell, self).__init__()
        self.i2h = nn.Linear(4, 5)
        self.h2h = nn.Linear(5, 5)
        self.out = nn.Linear(5, 3)

    def forward(self, x, h):
        h = torch.tanh(self.i2h(x) + self.h2h(h))
        return self.out(h), h


class Runner0(object):
    def __init__(self, cell):
        self.cell = cell
        self.hidden = self.init_hidden(True)

    def init_hidden(self, volatile):
        return Variable(torch.zeros(1, 5), volatile=volatile)

    def step(self, x):
        out, self.hidden = self.cell(x, self.hidden)
        return out


def main():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(6, 4)
    y = torch.randn(6, 3)
    cell = Cell()
    cell_opt = torch.optim.SGD(cell.parameters(), lr=0.1)
    results = {}
    r0 = Runner0(cell)
    r0.step(Variable(x[0:1]))
    out0 = r0.step(Variable(x[1:2]))
    results["c0_out"] = out0
    return results
