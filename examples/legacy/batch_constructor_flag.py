"""A small torchtext-style data API: `Field.process(..., train=...)` makes the batch's tensors
volatile unless training, and `Batch(...)` passes its own `train` flag down.
"""
import torch
import torch.nn as nn
from torch.autograd import Variable


class Field(object):
    def process(self, batch, device=None, train=True):
        arr = torch.LongTensor(batch)
        return Variable(arr, volatile=not train)


class Batch(object):
    def __init__(self, data, fields, train=True):
        self.train = train
        for name, field in fields.items():
            setattr(self, name, field.process([x[name] for x in data], train=train))


class Classifier(nn.Module):
    def __init__(self):
        super(Classifier, self).__init__()
        self.embed = nn.Embedding(10, 4)
        self.out = nn.Linear(4, 2)

    def forward(self, text):
        return self.out(self.embed(text).mean(1))


def evaluate(model, data, fields):
    batch = Batch(data, fields, train=False)
    return model(batch.text)


def fit(model, data, fields, opt):
    batch = Batch(data, fields)
    loss = model(batch.text).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()


def run():
    torch.manual_seed(17)
    model = Classifier()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    fields = {"text": Field()}
    data = [{"text": [1, 2, 3]}, {"text": [4, 5, 6]}]
    fit(model, data, fields, opt)
    scores = evaluate(model, data, fields)
    return {"scores": scores, "grad": model.out.weight.grad, "weight": model.out.weight}
