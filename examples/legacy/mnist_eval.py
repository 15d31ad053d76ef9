"""MNIST-style classifier: a few training steps, then a test-set evaluation.

Written the PyTorch 0.3 way. The "dataset" is synthetic so the script runs anywhere.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.fc1(x.view(-1, 64)))
        return F.log_softmax(self.fc2(x), dim=1)


def make_loader(n_batches, batch_size):
    return [(torch.randn(batch_size, 1, 8, 8), torch.LongTensor(batch_size).random_(0, 10))
            for _ in range(n_batches)]


def train(model, optimizer, train_loader):
    model.train()
    losses = []
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = Variable(data), Variable(target)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.data))
    return losses


def evaluate(model, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    for data, target in test_loader:
        data, target = Variable(data, volatile=True), Variable(target)
        output = model(data)
        test_loss += F.nll_loss(output, target, size_average=False).data.sum()  # sum up batch loss
        pred = output.data.max(1, keepdim=True)[1]  # index of the max log-probability
        correct += pred.eq(target.data.view_as(pred)).long().cpu().sum()
    n_samples = sum(len(target) for _, target in test_loader)
    return test_loss / n_samples, 100. * float(correct) / n_samples


def run():
    torch.manual_seed(0)
    model = Net()
    optimizer = optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
    train_losses = train(model, optimizer, make_loader(3, 16))
    test_loss, accuracy = evaluate(model, make_loader(2, 32))
    return {"train_losses": train_losses, "test_loss": test_loss, "accuracy": accuracy,
            "fc1_grad": model.fc1.weight.grad, "fc2_grad": model.fc2.weight.grad}
