"""A tutorial-style script (2017): the volatile test batch is converted with
`.type(torch.FloatTensor)`, evaluated at the top of every epoch (nets in eval mode), every
other step inside the training loop, and once after it."""
import torch
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(0)
nets = [nn.Linear(4, 2), nn.Sequential(nn.Linear(4, 2), nn.BatchNorm1d(2))]
opts = [torch.optim.SGD(net.parameters(), lr=0.1) for net in nets]
loss_func = nn.CrossEntropyLoss()
loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(2)]
test_x = Variable(torch.randn(16, 4), volatile=True).type(torch.FloatTensor)[:12] / 2.
test_y = torch.randint(0, 2, (12,))
losses = [[], []]
test_outputs = []

for epoch in range(2):
    for net, l in zip(nets, losses):
        net.eval()
        l.append(float(loss_func(net(test_x), test_y).data))
        net.train()
    for step, (x, y) in enumerate(loader):
        for net, opt in zip(nets, opts):
            loss = loss_func(net(Variable(x)), Variable(y))
            opt.zero_grad()
            loss.backward()
            opt.step()
        if step % 2 == 0:
            test_output = nets[0](test_x)
            test_outputs.append(test_output)

nets[1].eval()
final_output = nets[1](test_x[:10])


def run():
    return {"losses": losses, "last_test_output": test_outputs[-1], "final_output": final_output,
            "linear_grad": nets[0].weight.grad, "bn_grad": nets[1][1].weight.grad}
