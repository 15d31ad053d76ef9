"""Module-level inference script: rebuild a classifier, restore its weights, predict.

Written the PyTorch 0.3 way, straight at module level as many scripts of that time were.
"""
import io

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

torch.manual_seed(3)

model = nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 4))
checkpoint = io.BytesIO()  # stands in for a checkpoint file on disk
torch.save(model.state_dict(), checkpoint)
checkpoint.seek(0)
model.load_state_dict(torch.load(checkpoint))
model.eval()

batch = torch.randn(5, 10)
inputs = Variable(batch, volatile=True)
logits = model(inputs)
probs = F.softmax(logits, dim=1)
confidence, predicted = probs.max(1)
print("predicted classes:", predicted.data.tolist())


def run():
    return {"logits": logits, "probs": probs, "confidence": confidence, "predicted": predicted}
