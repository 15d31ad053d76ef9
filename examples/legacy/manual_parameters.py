"""Linear regression with hand-made parameters and a hand-written SGD update.

Written the PyTorch 0.3 way: parameters are Variables with requires_grad=True.
"""
import torch
from torch.autograd import Variable


def make_data(n):
    x = torch.randn(n, 3)
    true_w = torch.Tensor([[2.0], [-3.0], [0.5]])
    y = x.mm(true_w) + 0.1 * torch.randn(n, 1)
    return Variable(x), Variable(y)


def fit(x, y, steps=20, learning_rate=0.05):
    w = Variable(torch.randn(3, 1), requires_grad=True)
    b = Variable(torch.zeros(1), requires_grad=True)
    losses = []
    for t in range(steps):
        y_pred = x.mm(w) + b
        loss = (y_pred - y).pow(2).mean()
        loss.backward()
        losses.append(float(loss.data))
        last_grads = (w.grad.data.clone(), b.grad.data.clone())
        w.data -= learning_rate * w.grad.data
        b.data -= learning_rate * b.grad.data
        w.grad.data.zero_()
        b.grad.data.zero_()
    return w, b, losses, last_grads


def predict(w, b, x):
    x = Variable(x, volatile=True)
    return x.mm(w) + b


def run():
    torch.manual_seed(4)
    x, y = make_data(32)
    w, b, losses, (grad_w, grad_b) = fit(x, y)
    y_test = predict(w, b, torch.randn(4, 3))
    return {"w": w, "b": b, "losses": losses, "grad_w": grad_w, "grad_b": grad_b,
            "y_test": y_test}
