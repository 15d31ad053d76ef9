"""Saliency maps for a small classifier, with a project helper `to_var`.

Written the PyTorch 0.3 way: `to_var(x, requires_grad=False)` wraps tensors. The saliency
pass asks for requires_grad=True so that the input receives a gradient; training uses the
default, and evaluation wraps its inputs as volatile.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable


def to_var(x, requires_grad=False):
    return Variable(x, requires_grad=requires_grad)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 6 * 6, 3)

    def forward(self, x):
        return self.fc(F.relu(self.conv(x)).view(x.size(0), -1))


def train_step(model, optimizer, images, labels):
    loss = F.cross_entropy(model(to_var(images)), to_var(labels))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return float(loss.data)


def input_gradient(model, image, label):
    image = to_var(image, requires_grad=True)
    score = model(image.unsqueeze(0))[0, label]
    model.zero_grad()
    score.backward()
    return image.grad.data


def evaluate(model, images):
    output = model(Variable(images, volatile=True))
    return output.data.max(1)[1].tolist()


def run():
    torch.manual_seed(12)
    model = Net()
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    images, labels = torch.randn(4, 1, 6, 6), torch.LongTensor(4).random_(0, 3)
    loss = train_step(model, optimizer, images, labels)
    conv_grad, fc_grad = model.conv.weight.grad.clone(), model.fc.weight.grad.clone()
    # Two gradients of the same image, one per class: each pass starts from a fresh leaf.
    first = images[0]
    grad_0, grad_1 = [input_gradient(model, first, c) for c in (0, 1)]
    return {"loss": loss, "conv_grad": conv_grad, "fc_grad": fc_grad,
            "input_grad_0": grad_0, "input_grad_1": grad_1,
            "saliency": grad_1.abs().max(0)[0], "predictions": evaluate(model, images)}
