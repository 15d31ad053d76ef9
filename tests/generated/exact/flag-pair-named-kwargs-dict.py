# --unsafe-fixes (and safe): flag helper called through **a_kwargs0 = dict(train=False) and **dict(train=True), results added: the false call and the sum get the region, as 0.3 kept the sum volatile
# shape: flag_pair(flag=kw_not, ret=tensor, order=true_first, call=kwargs_dict, combine=add)
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
    b_kwargs0 = dict(train=True)
    b0 = run_0(model, x, **b_kwargs0)
    a_kwargs0 = dict(train=False)
    a0 = run_0(model, x, **a_kwargs0)
    results["c0_total"] = a0 + b0
    return results
