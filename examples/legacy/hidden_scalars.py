"""A 0.3-era training script whose loss readings hide behind rebindings, containers and arrays.

Each `[0]` below gave a Python number (or a NumPy scalar) in 0.3, when a loss had shape (1,);
since 0.4 losses are 0-dim and each read raises IndexError. The shapes come from real
repositories: the model's per-sample losses rebound to their means (`losses = [torch.mean(l)
for l in losses]`), a dict of named losses read in a comprehension over `.items()`, an
equilibrium term kept as a number on the trainer (`self.k = min(max(temp_k, 0), 1)`), a
running average started as `torch.zeros(1)`, accuracy over `correct = correct.view(-1)`, a
loss unpacked from a method's tuple, and the NumPy array of a loss.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc = nn.Linear(5, 3)

    def forward(self, x, y):
        out = self.fc(x)
        return [F.cross_entropy(out, y, reduce=False), (out ** 2).sum(1)]


class Trainer(object):
    def __init__(self, model):
        self.model = model
        self.optimizer = optim.SGD(model.parameters(), lr=0.1)
        self.k = 0.
        self.gamma = 0.5
        self.lambda_ = 0.3
        self.history = []

    def optimize(self, x, y):
        self.optimizer.zero_grad()
        losses = self.model(x, y)
        losses = [torch.mean(value) for value in losses]
        loss = losses[0] + self.k * losses[1]
        loss.backward()
        self.optimizer.step()
        return loss.data.cpu().numpy(), len(y)

    def train(self, batches):
        average = 0.
        logged = []
        for x, y in batches:
            x, y = Variable(x), Variable(y)
            loss, size = self.optimize(x, y)
            logged.append(float(loss[0]) * size)
            losses = self.model(x, y)
            losses = [torch.mean(value) for value in losses]
            real_err, fake_err = torch.mean(losses[0]), torch.mean(losses[1])
            balanced = real_err - self.k * fake_err
            self.history.append(balanced.data[0])
            temp_k = self.k + self.lambda_ * (self.gamma * real_err - fake_err)
            temp_k = temp_k.data[0]
            self.k = min(max(temp_k, 0), 1)
            average = average * 0.9 + 0.1 * losses[0]
            logged.append(average.data[0])
            logged.append([v.data[0] for v in losses])
        return logged


def named_losses(model, x, y):
    out = model.fc(x)
    parts = {}
    parts['ce'] = F.cross_entropy(out, y)
    parts['l2'] = (out ** 2).mean()
    total = sum(parts.values())
    parts['total'] = total
    return {name: value.data[0] for name, value in parts.items()}


def accuracy(out, y):
    _, pred = out.max(1)
    correct = pred.eq(y)
    correct = correct.view(-1)
    score = correct.float().sum(0).mul(100.0 / correct.size(0))
    return score.data[0]


def validate(model, batches):
    named, scores, counts = [], [], 0
    for x, y in batches:
        x, y = Variable(x, volatile=True), Variable(y, volatile=True)
        named.append(named_losses(model, x, y))
        scores.append(accuracy(model.fc(x), y))
        counts += int(torch.sum(y).data.cpu().numpy()[0])
    return named, scores, counts


def make_batches(n, size, seed):
    torch.manual_seed(seed)
    return [(torch.randn(size, 5), torch.LongTensor(size).random_(0, 3)) for _ in range(n)]


def run():
    torch.manual_seed(3)
    model = Net()
    trainer = Trainer(model)
    logged = trainer.train(make_batches(3, 4, 5))
    named, scores, counts = validate(model, make_batches(2, 4, 7))
    return {"logged": logged, "history": trainer.history, "k": trainer.k, "named": named,
            "scores": scores, "counts": counts, "weight": model.fc.weight.data}


if __name__ == "__main__":
    print(run())
