# --unsafe-fixes: a generator's flag attribute set by its constructor (yield Variable(..., volatile=not self.train)): the loop over the train=False instance gets the region, the training loop none
# shape: generator(source=attr_not_train, consumers=eval_then_train, ret=float)
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


class Loader0(object):
    def __init__(self, x, train):
        self.x = x
        self.train = train

    def __iter__(self):
        for j in range(0, 6, 2):
            yield Variable(self.x[j:j + 2], volatile=not self.train)


def main():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(6, 4)
    y = torch.randn(6, 3)
    results = {}
    total0 = 0.0
    for b in Loader0(x, train=False):
        total0 += float(model(b).data.sum())
    results["c0_eval"] = total0
    for b in Loader0(x, train=True):
        opt.zero_grad()
        loss = model(b).pow(2).mean()
        loss.backward()
        opt.step()
    results["c0_loss"] = loss.data[0]
    return results
