"""A 0.3-era super-resolution script whose scalar reads hide behind rebindings.

The criterion is rebound to itself moved (`criterion = criterion.cuda()` on a GPU machine);
the validation sum is read by the statement that rebinds it (`total = total[0] / n`); the
gradient's squared norm is the builtin `sum` of per-parameter sums. In 0.3 each read gave a
Python number; since 0.4 each raises IndexError.
"""
import math

import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable


class Upscaler(nn.Module):
    def __init__(self):
        super(Upscaler, self).__init__()
        self.body = nn.Linear(6, 6)

    def forward(self, x):
        return torch.sigmoid(self.body(x))


criterion = nn.MSELoss()
if torch.cuda.is_available():
    criterion = criterion.cuda()


def make_pairs(n, size):
    return [(torch.rand(size, 6), torch.rand(size, 6)) for _ in range(n)]


def train(model, optimizer, pairs):
    norms = []
    for x, y in pairs:
        x, y = Variable(x), Variable(y)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        sq_norm = sum(torch.sum(p.grad ** 2) for p in model.parameters())
        if sq_norm.data[0] > 0:
            norms.append(math.sqrt(sq_norm.data[0]))
        optimizer.step()
    return norms


def validate(model, pairs):
    avg_psnr = 0
    total = 0
    for x, y in pairs:
        x, y = Variable(x, volatile=True), Variable(y)
        mse = criterion(model(x), y)
        avg_psnr += 10 * math.log10(1 / mse.data[0])
        total += len(x) * criterion(model(x), y).data
    total = total[0] / len(pairs)
    return avg_psnr / len(pairs), total


def run():
    torch.manual_seed(11)
    model = Upscaler()
    optimizer = optim.SGD(model.parameters(), lr=0.3)
    norms = train(model, optimizer, make_pairs(3, 4))
    psnr, mean_mse = validate(model, make_pairs(2, 4))
    return {"norms": norms, "psnr": psnr, "mean_mse": mean_mse, "grad": model.body.weight.grad}
