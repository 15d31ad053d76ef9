"""A notebook utility `variable(x, volatile=False)` that wraps a tensor, or each tensor of a
list by calling itself with the same flag; prediction passes `volatile=True` on a list of
inputs, training takes the default.

Once the fix gives prediction its region, the helper's only use of the flag is handing it back
to itself, so the parameter and every argument go (VF105), the recursive one too.
"""
import torch
import torch.nn as nn
from torch.autograd import Variable


def cuda(x):
    return x.cuda() if torch.cuda.is_available() else x


def variable(x, volatile=False):
    if isinstance(x, (list, tuple)):
        return [variable(y, volatile=volatile) for y in x]
    return cuda(Variable(x.contiguous(), volatile=volatile))


def predict(model, batches):
    outputs = []
    for pair in batches:
        first, second = variable(pair, volatile=True)
        outputs.append(model(first) + model(second))
    return outputs


def train(model, batches, optimizer):
    for first, second in batches:
        first, second = variable([first, second])
        loss = (model(first) - model(second)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(5)
    model = nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = [[torch.randn(4, 3), torch.randn(4, 3)] for _ in range(2)]
    train(model, batches, optimizer)
    outputs = predict(model, batches)
    return {"last_output": outputs[-1], "weight": model.weight.detach().clone(), "grad": model.weight.grad}
