"""Detection head in the two-stage-detector style: numpy blobs become Variables through
`np_to_variable(x, is_cuda=True, volatile=False)` inside forward().

Written the PyTorch 0.3 way: forward() passes `volatile=not self.training`, so the same
module records history in train mode and none after model.eval().
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable


def np_to_variable(x, is_cuda=True, volatile=False):
    v = Variable(torch.from_numpy(x).float(), volatile=volatile)
    if is_cuda:
        v = v.cuda()
    return v


class RoIHead(nn.Module):
    def __init__(self, n_feat, n_classes):
        super(RoIHead, self).__init__()
        self.fc = nn.Linear(n_feat, 32)
        self.cls_score = nn.Linear(32, n_classes)
        self.bbox_pred = nn.Linear(32, n_classes * 4)
        self.loss = None

    def forward(self, roi_feats, gt_labels=None):
        x = np_to_variable(roi_feats, is_cuda=False, volatile=not self.training)
        x = F.relu(self.fc(x))
        cls_score = self.cls_score(x)
        bbox_pred = self.bbox_pred(x)
        if self.training:
            labels = np_to_variable(gt_labels, is_cuda=False).long()
            self.loss = F.cross_entropy(cls_score, labels) + 0.1 * bbox_pred.pow(2).mean()
        return F.softmax(cls_score, dim=1), bbox_pred


def run():
    torch.manual_seed(5)
    rng = np.random.RandomState(5)
    head = RoIHead(8, 3)
    optimizer = optim.SGD(head.parameters(), lr=0.1, momentum=0.9)
    head.train()
    head(rng.randn(6, 8).astype(np.float32), rng.randint(0, 3, size=6))
    optimizer.zero_grad()
    head.loss.backward()
    optimizer.step()
    head.eval()
    cls_prob, bbox_pred = head(rng.randn(4, 8).astype(np.float32))
    return {"train_loss": float(head.loss.data), "cls_prob": cls_prob, "bbox_pred": bbox_pred,
            "labels": cls_prob.data.max(1)[1].tolist(),
            "fc_grad": head.fc.weight.grad, "bbox_grad": head.bbox_pred.weight.grad}
