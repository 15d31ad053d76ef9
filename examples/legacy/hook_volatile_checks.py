"""Activation statistics and gradient capture guarded by `.volatile` checks.

Written the PyTorch 0.3 way: a forward hook records statistics only when its input is not
volatile (a pass that records history), and forward() registers a gradient hook on the
hidden features only when they are not volatile (register_hook on a volatile Variable
raised). Training fires both; the volatile evaluation pass fires neither.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable

activation_stats = []
saved_grads = []


def record_stats(module, input, output):
    if input[0].volatile == False:
        activation_stats.append(float(output.data.abs().mean()))


def save_grad(grad):
    saved_grads.append(grad.clone())


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(6, 10)
        self.fc2 = nn.Linear(10, 3)
        self.fc1.register_forward_hook(record_stats)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        if not h.volatile:
            h.register_hook(save_grad)
        return self.fc2(h)


def train_step(net, optimizer, x, y):
    loss = F.cross_entropy(net(Variable(x)), Variable(y))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return float(loss.data)


def evaluate(net, x):
    output = net(Variable(x, volatile=True))
    return F.softmax(output, dim=1)


def run():
    torch.manual_seed(8)
    del activation_stats[:], saved_grads[:]
    net = Net()
    optimizer = optim.SGD(net.parameters(), lr=0.1)
    losses = [train_step(net, optimizer, torch.randn(5, 6), torch.LongTensor(5).random_(0, 3))
              for _ in range(2)]
    train_stats = list(activation_stats)
    probs = evaluate(net, torch.randn(4, 6))
    return {"losses": losses, "train_stats": train_stats, "saved_grads": list(saved_grads),
            "probs": probs, "fc1_grad": net.fc1.weight.grad, "fc2_grad": net.fc2.weight.grad}
