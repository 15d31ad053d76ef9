"""An MNIST-style script whose author dropped `from torch.autograd import Variable`.

Every `Variable(...)` call raises NameError, on 0.3 as today: the script only ran from a
notebook that had imported `Variable` first. The human migration removed the calls; so does
volfix (unsafe fixes, with a note), which makes the script run again.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(10, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def make_batches(n, size):
    return [(torch.randn(size, 10), torch.LongTensor(size).random_(0, 3)) for _ in range(n)]


def train(model, optimizer, batches):
    model.train()
    for data, target in batches:
        data, target = Variable(data), Variable(target)
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()


def test(model, batches):
    model.eval()
    test_loss = 0
    correct = 0
    last_output = None
    for data, target in batches:
        data, target = Variable(data, volatile=True), Variable(target)
        output = model(data)
        test_loss += F.nll_loss(output, target, size_average=False).item()
        pred = output.data.max(1, keepdim=True)[1]
        correct += pred.eq(target.data.view_as(pred)).long().sum().item()
        last_output = output
    return test_loss, correct, last_output


def run():
    torch.manual_seed(4)
    model = Net()
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    train(model, optimizer, make_batches(3, 8))
    test_loss, correct, last_output = test(model, make_batches(2, 8))
    return {"test_loss": test_loss, "correct": correct, "last_output": last_output,
            "fc1_grad": model.fc1.weight.grad, "fc2_grad": model.fc2.weight.grad}
