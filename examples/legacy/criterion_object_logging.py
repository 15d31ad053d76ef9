"""A 0.3-era classifier script whose scalar reads VF401 once missed on real code.

Evaluation calls a criterion object moved to the device and reads `crit(...).data[0]`
directly; training reads `loss[0]` of the loss the script's own `compute_loss` returns (a
one-element Variable in 0.3); a probe reads one activation by indexing every dimension of
a feature map with the entries of a `nonzero()` row. In 0.3 each read gave a one-element
value; since 0.4 each raises IndexError.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable


class ConvNet(nn.Module):
    def __init__(self):
        super(ConvNet, self).__init__()
        self.conv = nn.Conv2d(1, 3, 3, padding=1)
        self.fc = nn.Linear(3 * 4 * 4, 5)

    def features(self, x):
        return F.relu(self.conv(x))

    def forward(self, x):
        return self.fc(self.features(x).view(x.size(0), -1))


crit = nn.NLLLoss().cpu()  # `.cuda()` on a GPU machine


def compute_loss(model, images, labels):
    scores = model(images)
    return F.cross_entropy(scores, labels) + 0.01 * model.fc.weight.norm()


def make_batches(n, size):
    return [(torch.randn(size, 1, 4, 4), torch.LongTensor(size).random_(0, 5)) for _ in range(n)]


def train(model, optimizer, batches):
    model.train()
    history = []
    for images, labels in batches:
        images, labels = Variable(images), Variable(labels)
        optimizer.zero_grad()
        loss = compute_loss(model, images, labels)
        loss.backward()
        optimizer.step()
        history.append(float(loss[0]))
    return history


def evaluate(model, batches):
    model.eval()
    test_loss = 0
    probe = None
    for images, labels in batches:
        images, labels = Variable(images, volatile=True), Variable(labels)
        log_probs = F.log_softmax(model(images), dim=1)
        test_loss += crit(log_probs, labels).data[0]
        if probe is None:
            feat_map = model.features(images)
            idx = (feat_map.data > 0).nonzero()[0]
            probe = feat_map[idx[0], idx[1], idx[2], idx[3]].data[0]
    return test_loss / len(batches), probe


def run():
    torch.manual_seed(5)
    model = ConvNet()
    optimizer = optim.SGD(model.parameters(), lr=0.05)
    history = train(model, optimizer, make_batches(3, 6))
    test_loss, probe = evaluate(model, make_batches(2, 6))
    return {"history": history, "test_loss": test_loss, "probe": probe,
            "conv_grad": model.conv.weight.grad, "fc_grad": model.fc.weight.grad}
