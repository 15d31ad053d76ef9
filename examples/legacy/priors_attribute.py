"""Single-shot detector in the SSD style: the prior boxes are a volatile Variable made
once in __init__.

Written the PyTorch 0.3 way: `self.priors = Variable(make_priors(), volatile=True)`. The
train phase hands (loc, conf, priors) to the loss, which matches on `priors.data`; the test
phase decodes the predicted offsets against the priors. Anything computed from a volatile
value was volatile, so the decoded boxes kept no history (the class scores did).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable


def make_priors(n):
    centers = (torch.arange(n).float() + 0.5) / n
    return torch.stack([centers, 1 - centers, torch.full((n,), 0.2), torch.full((n,), 0.3)], 1)


def decode(loc, priors, variance=(0.1, 0.2)):
    centers = priors[:, :2] + loc[:, :2] * variance[0] * priors[:, 2:]
    sizes = priors[:, 2:] * torch.exp(loc[:, 2:] * variance[1])
    return torch.cat((centers - sizes / 2, centers + sizes / 2), 1)


def encode(boxes, priors, variance=(0.1, 0.2)):
    centers = ((boxes[:, :2] + boxes[:, 2:]) / 2 - priors[:, :2]) / (variance[0] * priors[:, 2:])
    sizes = torch.log((boxes[:, 2:] - boxes[:, :2]) / priors[:, 2:]) / variance[1]
    return torch.cat((centers, sizes), 1)


class TinySSD(nn.Module):
    def __init__(self, phase, num_classes=3, num_priors=6):
        super(TinySSD, self).__init__()
        self.phase = phase
        self.num_classes = num_classes
        self.priors = Variable(make_priors(num_priors), volatile=True)
        self.body = nn.Linear(10, 16)
        self.loc = nn.Linear(16, num_priors * 4)
        self.conf = nn.Linear(16, num_priors * num_classes)

    def forward(self, x):
        h = F.relu(self.body(x))
        loc = self.loc(h).view(x.size(0), -1, 4)
        conf = self.conf(h).view(x.size(0), -1, self.num_classes)
        if self.phase == "test":
            scores = F.softmax(conf, dim=2)
            boxes = torch.stack([decode(l, self.priors) for l in loc])
            return boxes, scores
        return loc, conf, self.priors


def multibox_loss(predictions, gt_boxes, gt_labels):
    loc, conf, priors = predictions
    loc_t = torch.stack([encode(b, priors.data) for b in gt_boxes])
    loss_l = F.smooth_l1_loss(loc, Variable(loc_t))
    loss_c = F.cross_entropy(conf.view(-1, conf.size(2)), Variable(gt_labels.view(-1)))
    return loss_l + loss_c


def run():
    torch.manual_seed(9)
    net = TinySSD("train")
    optimizer = optim.SGD(net.parameters(), lr=0.05)
    images, gt_labels = torch.randn(2, 10), torch.LongTensor(2, 6).random_(0, 3)
    gt_boxes = torch.stack([decode(0.5 * torch.randn(6, 4), make_priors(6)) for _ in range(2)])
    loss = multibox_loss(net(Variable(images)), gt_boxes, gt_labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    net.phase = "test"
    boxes, scores = net(Variable(torch.randn(3, 10)))
    return {"loss": float(loss.data), "boxes": boxes, "scores": scores,
            "body_grad": net.body.weight.grad, "loc_grad": net.loc.weight.grad}
