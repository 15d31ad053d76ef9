"""Train/validate loop in the style of 0.3-era ImageNet scripts, on synthetic data.

Written the PyTorch 0.3 way: `.cuda(async=True)` transfers (only taken on a GPU machine;
`async` is a reserved word since Python 3.7, so this file needs volfix to parse at all).
"""
import torch
import torch.nn as nn


class AverageMeter(object):
    """Computes and stores the average of a metric."""

    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

    @property
    def avg(self):
        return self.sum / self.count


def accuracy(output, target):
    _, pred = output.topk(1, 1, True, True)
    return pred.view(-1).eq(target).float().sum() * 100.0 / target.size(0)


def train(train_loader, model, criterion, optimizer):
    model.train()
    for input, target in train_loader:
        if torch.cuda.is_available():
            input, target = input.cuda(async=True), target.cuda(async=True)
        input_var = torch.autograd.Variable(input)
        target_var = torch.autograd.Variable(target)
        loss = criterion(model(input_var), target_var)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def validate(val_loader, model, criterion):
    model.eval()
    losses, top1 = AverageMeter(), AverageMeter()
    for input, target in val_loader:
        if torch.cuda.is_available():
            target = target.cuda(async=True)
        input_var = torch.autograd.Variable(input, volatile=True)
        target_var = torch.autograd.Variable(target, volatile=True)
        output = model(input_var)
        loss = criterion(output, target_var)
        prec1 = accuracy(output.data, target)
        losses.update(float(loss.data), input.size(0))
        top1.update(float(prec1), input.size(0))
    return losses.avg, top1.avg


def run():
    torch.manual_seed(8)
    model = nn.Sequential(nn.Linear(20, 16), nn.ReLU(), nn.Linear(16, 5))
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), 0.1, momentum=0.9, weight_decay=1e-4)
    make = lambda n: [(torch.randn(8, 20), torch.LongTensor(8).random_(0, 5)) for _ in range(n)]
    train(make(3), model, criterion, optimizer)
    val_loss, prec1 = validate(make(2), model, criterion)
    return {"val_loss": val_loss, "prec1": prec1, "grad": model[0].weight.grad}
