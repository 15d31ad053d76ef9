"""One epoch function for both phases, as in many 0.3 trainers: `is_validate=True` makes the
batches volatile and skips the update. The driver validates, then trains, every epoch, and
adds up the Python numbers the function returns.
"""
import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable


def train(epoch, loader, model, opt, is_validate=False):
    total, n = 0.0, 0
    for x, y in loader:
        x = Variable(x, volatile=is_validate)
        y = Variable(y, volatile=is_validate)
        loss = ((model(x) - y) ** 2).mean()
        if not is_validate:
            opt.zero_grad()
            loss.backward()
            opt.step()
        total += loss.data[0]
        n += 1
    return total / n, n


def run():
    torch.manual_seed(5)
    model = nn.Linear(3, 1)
    opt = optim.SGD(model.parameters(), lr=0.05)
    val_loader = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
    train_loader = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
    history = []
    for epoch in range(2):
        val, _ = train(epoch, val_loader, model, opt, is_validate=True)
        tr, n = train(epoch, train_loader, model, opt, is_validate=False)
        history.append(val + tr)
    return {"history": history, "weight": model.weight, "grad": model.weight.grad}
