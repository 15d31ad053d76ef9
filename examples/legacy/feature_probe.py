"""Linear probe: volatile feature extraction from a frozen backbone, then train a head.

Written the PyTorch 0.3 way: `Variable(feats.data)` turns the volatile features back
into ordinary data, so only the feature extraction is inference.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable


class Backbone(nn.Module):
    def __init__(self):
        super(Backbone, self).__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(2)

    def forward(self, x):
        return self.pool(F.relu(self.conv(x))).view(x.size(0), -1)


def train_probe(backbone, head, optimizer, images, labels, steps=3):
    backbone.eval()
    losses = []
    for step in range(steps):
        feats = backbone(Variable(images, volatile=True))
        feats = Variable(feats.data)
        logits = head(feats)
        loss = F.cross_entropy(logits, Variable(labels))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.data))
    return losses


def run():
    torch.manual_seed(9)
    backbone, head = Backbone(), nn.Linear(16, 3)
    optimizer = optim.SGD(head.parameters(), lr=0.1)
    images, labels = torch.randn(6, 1, 8, 8), torch.LongTensor(6).random_(0, 3)
    losses = train_probe(backbone, head, optimizer, images, labels)
    return {"losses": losses, "head_grad": head.weight.grad, "head_bias_grad": head.bias.grad,
            "backbone_grad_is_none": backbone.conv.weight.grad is None}
