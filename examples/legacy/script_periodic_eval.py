"""A module-level training script (as in the tutorials of 2017): the test batch is made
volatile once, above the loop, and evaluated every other step inside the training loop."""
import torch
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
loss_func = nn.CrossEntropyLoss()
x = torch.randn(32, 4)
y = (x.sum(1) > 0).long()
test_x = Variable(torch.randn(16, 4), volatile=True)
test_y = (test_x.data.sum(1) > 0).long()
accuracies = []
test_outputs = []

for step in range(4):
    b_x = Variable(x)
    b_y = Variable(y)
    output = net(b_x)
    loss = loss_func(output, b_y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 2 == 0:
        test_output = net(test_x)
        pred_y = torch.max(test_output, 1)[1].data.squeeze()
        accuracy = float((pred_y == test_y).sum()) / float(test_y.size(0))
        accuracies.append(accuracy)
        test_outputs.append(test_output)


def run():
    return {"accuracies": accuracies, "last_test_output": test_outputs[-1],
            "first_grad": net[0].weight.grad, "last_grad": net[2].weight.grad}
