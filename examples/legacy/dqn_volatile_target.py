"""DQN optimisation step: the bootstrap target comes from a volatile forward pass.

Written the PyTorch 0.3 way: the target network runs on volatile inputs, and
`.volatile = False` turns its result back into plain data before the loss is built,
so only the policy network records a graph.
"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable

GAMMA = 0.9


class DQN(nn.Module):
    def __init__(self):
        super(DQN, self).__init__()
        self.fc1 = nn.Linear(4, 24)
        self.head = nn.Linear(24, 2)

    def forward(self, x):
        return self.head(F.relu(self.fc1(x)))


def optimize_model(policy_net, target_net, optimizer, batch):
    states, actions, rewards, next_states, not_done = batch
    state_action_values = policy_net(Variable(states)).gather(1, Variable(actions).view(-1, 1))
    next_state_values = target_net(Variable(next_states, volatile=True)).max(1)[0]
    next_state_values = next_state_values * Variable(not_done)
    next_state_values.volatile = False
    expected_state_action_values = Variable(rewards) + GAMMA * next_state_values
    loss = F.smooth_l1_loss(state_action_values.view(-1), expected_state_action_values)
    optimizer.zero_grad()
    loss.backward()
    for param in policy_net.parameters():
        param.grad.data.clamp_(-1, 1)
    optimizer.step()
    return float(loss.data)


def random_batch(n):
    return (torch.randn(n, 4), torch.LongTensor(n).random_(0, 2), torch.randn(n),
            torch.randn(n, 4), (torch.rand(n) > 0.2).float())


def run():
    torch.manual_seed(7)
    policy_net = DQN()
    target_net = copy.deepcopy(policy_net)
    optimizer = optim.RMSprop(policy_net.parameters(), lr=0.01)
    losses = [optimize_model(policy_net, target_net, optimizer, random_batch(8)) for _ in range(2)]
    return {"losses": losses, "fc1_grad": policy_net.fc1.weight.grad,
            "head_grad": policy_net.head.weight.grad, "head_weight": policy_net.head.weight}
