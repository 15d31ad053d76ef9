# --unsafe-fixes: a lambda's volatile input makes the whole lambda the region (torch.no_grad()(lambda ...)): its result has no graph, as in 0.3
# shape: closure(kind=lambda, ret=tensor)
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
    predict0 = lambda t: model(Variable(t, volatile=True))
    p0 = predict0(x)
    results["c0_pred"] = p0
    return results
