"""A 0.3-era training script that logs its losses and accuracy with `.data[0]`.

Every `loss.data[0]` returned a Python number in 0.3, where losses were one-element
tensors. Since 0.4 losses and reductions are 0-dim and the same line raises IndexError; the
history's `loss.data.tolist()[0]` (a list of one number in 0.3, a number today) TypeError.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable


class Classifier(nn.Module):
    def __init__(self):
        super(Classifier, self).__init__()
        self.fc1 = nn.Linear(12, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


criterion = nn.CrossEntropyLoss()


def make_batches(n, size):
    return [(torch.randn(size, 12), torch.LongTensor(size).random_(0, 4)) for _ in range(n)]


def train(model, optimizer, batches):
    model.train()
    history = []
    running_loss = 0
    for inputs, labels in batches:
        inputs, labels = Variable(inputs), Variable(labels)
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        running_loss += loss.data[0]
        history.append(loss.data.tolist()[0])
    return running_loss / len(batches), history


def evaluate(model, batches):
    model.eval()
    test_loss = 0
    correct = 0
    first_scores = None
    for inputs, labels in batches:
        inputs, labels = Variable(inputs, volatile=True), Variable(labels)
        outputs = model(inputs)
        test_loss += F.cross_entropy(outputs, labels, size_average=False).data[0]
        correct += outputs.max(1)[1].eq(labels).sum().data[0]
        if first_scores is None:
            first_scores = outputs.data[0]  # the first sample's scores: a row, not a scalar
    n = sum(len(labels) for _, labels in batches)
    return test_loss / n, correct, first_scores


def run():
    torch.manual_seed(0)
    model = Classifier()
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    mean_loss, history = train(model, optimizer, make_batches(3, 8))
    test_loss, correct, first_scores = evaluate(model, make_batches(2, 16))
    return {"mean_loss": mean_loss, "history": history, "test_loss": test_loss, "correct": correct,
            "first_scores": first_scores, "fc1_grad": model.fc1.weight.grad, "fc2_grad": model.fc2.weight.grad}
