"""A binarized (XNOR-style) classifier on toy data: a training step through a legacy autograd
Function, then a volatile evaluation pass.

Written the PyTorch 0.3 way: `BinActive` has `forward(self, ...)` and `backward(self, ...)`
methods and is called as `BinActive()(x)`, and `ScaleGrad(0.5)` takes its setting in
`__init__`. PyTorch 1.5 removed such Functions: the first call raises today (VF501). The
straight-through gradient of `backward`, scaled by the setting, must still reach the first
layer after the fix.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class BinActive(torch.autograd.Function):
    """Binarize the activations; the gradient passes where |input| < 1."""

    def forward(self, input):
        self.save_for_backward(input)
        self.rows = input.size(0)
        return input.sign()

    def backward(self, grad_output):
        input, = self.saved_tensors
        assert grad_output.size(0) == self.rows
        grad_input = grad_output.clone()
        grad_input[input.ge(1)] = 0
        grad_input[input.le(-1)] = 0
        return grad_input


class ScaleGrad(torch.autograd.Function):
    """The identity forward; the gradient scaled on its way back (0.5 damps the first layer)."""

    def __init__(self, scale):
        self.scale = scale

    def forward(self, input):
        return input.view_as(input)

    def backward(self, grad_output):
        return grad_output * self.scale


class BinNet(nn.Module):
    def __init__(self):
        super(BinNet, self).__init__()
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        h = BinActive()(ScaleGrad(0.5)(self.fc1(x)))
        return self.fc2(h)


def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(Variable(x)), Variable(y))
    loss.backward()
    optimizer.step()
    return loss.data[0]


def evaluate(model, x, y):
    output = model(Variable(x, volatile=True))
    pred = output.data.max(1)[1]
    return output, pred.eq(y).sum()


def run():
    torch.manual_seed(7)
    model = BinNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 6), torch.LongTensor(16).random_(0, 3)
    loss = train_step(model, optimizer, x, y)
    fc1_grad = model.fc1.weight.grad.clone()
    output, correct = evaluate(model, x, y)
    return {"loss": loss, "fc1_grad": fc1_grad, "fc2_grad": model.fc2.weight.grad.clone(),
            "output": output, "correct": int(correct)}
