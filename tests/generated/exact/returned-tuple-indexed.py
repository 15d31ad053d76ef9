# --unsafe-fixes (and safe): `batch = Memory0().sample(x)` returns (states, next_states) with only the next states volatile; `batch[1]` is volatile, `batch[0]` is not, so the region covers the target forward and the training forward keeps its graph
# shape: returned_tuple(where=method, position=last, unpack=index)
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


class Memory0(object):
    def sample(self, x):
        return Variable(x[:3]), Variable(x[3:], volatile=True)


def main():
    torch.manual_seed(3)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(6, 4)
    y = torch.randn(6, 3)
    results = {}
    batch0 = Memory0().sample(x)
    s0 = batch0[0]
    n0 = batch0[1]
    q0 = model(s0)
    t0 = model(n0).data.max(1)[0]
    opt.zero_grad()
    loss0 = (q0.max(1)[0] - Variable(t0)).pow(2).mean()
    loss0.backward()
    opt.step()
    results["c0_loss"] = loss0.data[0]
    return results
