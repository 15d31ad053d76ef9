# differed (first long run, fixed since), safe fix: 0.3 raised RuntimeError at `loss0.backward()` (a volatile root); the fix unwraps ("only unwrapped") and the program trains
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


def main():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(6, 4)
    y = torch.randn(6, 3)
    results = {}
    out0 = model(Variable(x, volatile=True))
    loss0 = out0.pow(2).mean()
    opt.zero_grad()
    loss0.backward()
    opt.step()
    results["c0_loss"] = loss0.data[0]
    return results
