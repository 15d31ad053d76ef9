"""An ImageNet-example-style script: `accuracy()` returns a list of top-k precisions, each a
count summed over the one dimension of `correct[:k].view(-1)`, and the loops log them with
`prec1[0]`.

In 0.3 that sum was a one-element tensor and `prec1[0]` its Python number. Since 0.4 a
reduction over the only dimension is 0-dim, and the first `top1.update(prec1[0], n)` raises
IndexError. (Copies without `.contiguous()` fail today for k > 1 for another reason: `eq`
keeps the transposed strides, and `view` cannot flatten them.)
"""
import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable


class AverageMeter(object):
    def __init__(self):
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

    @property
    def avg(self):
        return self.sum / self.count


def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    batch_size = target.size(0)

    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))

    res = []
    for k in topk:
        correct_k = correct[:k].contiguous().view(-1).float().sum(0)
        res.append(correct_k.mul_(100.0 / batch_size))
    return res


def make_batches(n, size):
    return [(torch.randn(size, 10), torch.LongTensor(size).random_(0, 5)) for _ in range(n)]


def train(loader, model, criterion, optimizer):
    losses, top1 = AverageMeter(), AverageMeter()
    model.train()
    for input, target in loader:
        input_var, target_var = Variable(input), Variable(target)
        output = model(input_var)
        loss = criterion(output, target_var)
        prec1, prec3 = accuracy(output.data, target, topk=(1, 3))
        losses.update(loss.data[0], input.size(0))
        top1.update(prec1[0], input.size(0))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return losses.avg, top1.avg


def validate(loader, model, criterion):
    losses, top1, top3 = AverageMeter(), AverageMeter(), AverageMeter()
    model.eval()
    for input, target in loader:
        input_var = Variable(input, volatile=True)
        target_var = Variable(target, volatile=True)
        output = model(input_var)
        loss = criterion(output, target_var)
        prec1, prec3 = accuracy(output.data, target, topk=(1, 3))
        losses.update(loss.data[0], input.size(0))
        top1.update(prec1[0], input.size(0))
        top3.update(prec3[0], input.size(0))
    return losses.avg, top1.avg, top3.avg


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 5))
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    train_loss, train_top1 = train(make_batches(3, 8), model, criterion, optimizer)
    val_loss, val_top1, val_top3 = validate(make_batches(2, 16), model, criterion)
    return {"train_loss": train_loss, "train_top1": train_top1, "val_loss": val_loss, "val_top1": val_top1,
            "val_top3": val_top3, "grad": model[0].weight.grad, "weight": model[2].weight}
