"""Validation accuracy computed from a generator of model outputs.

Written the PyTorch 0.3 way: predict_batches() yields the outputs of volatile inputs, and
the accuracy loop consumes them batch by batch (whatever it computed from them was
volatile too).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable


class Classifier(nn.Module):
    def __init__(self):
        super(Classifier, self).__init__()
        self.fc1 = nn.Linear(5, 12)
        self.fc2 = nn.Linear(12, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def train_step(model, optimizer, x, y):
    model.train()
    loss = F.cross_entropy(model(Variable(x)), Variable(y))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return float(loss.data)


def predict_batches(model, data, batch_size):
    model.eval()
    for i in range(0, len(data), batch_size):
        x = Variable(data[i:i + batch_size], volatile=True)
        yield model(x)


def accuracy(model, data, labels, batch_size=4):
    correct, val_loss, probs = 0, 0.0, []
    for i, output in enumerate(predict_batches(model, data, batch_size)):
        target = labels[i * batch_size:(i + 1) * batch_size]
        val_loss += float(F.cross_entropy(output, Variable(target)).data) * len(target)
        probs.append(F.softmax(output, dim=1))
        correct += int((output.data.max(1)[1] == target).sum())
    return correct / float(len(data)), val_loss / len(data), torch.cat(probs)


def run():
    torch.manual_seed(4)
    model = Classifier()
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 5), torch.LongTensor(8).random_(0, 3)
    loss = train_step(model, optimizer, x, y)
    acc, val_loss, probs = accuracy(model, torch.randn(10, 5), torch.LongTensor(10).random_(0, 3))
    return {"loss": loss, "accuracy": acc, "val_loss": val_loss, "probs": probs,
            "fc1_grad": model.fc1.weight.grad, "fc2_grad": model.fc2.weight.grad}
