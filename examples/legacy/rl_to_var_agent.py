"""Policy-gradient agent whose numpy arrays go through a project-wide `to_var` helper.

Written the PyTorch 0.3 way: `to_var(x, volatile=False)` wraps arrays in Variables.
select_action() asks for a volatile state; the policy update uses the default and trains.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable


def to_var(x, volatile=False):
    return Variable(torch.from_numpy(x).float(), volatile=volatile)


class Policy(nn.Module):
    def __init__(self, n_obs, n_actions):
        super(Policy, self).__init__()
        self.fc = nn.Linear(n_obs, 16)
        self.head = nn.Linear(16, n_actions)

    def forward(self, x):
        return self.head(F.relu(self.fc(x)))


class Agent(object):
    def __init__(self, n_obs, n_actions):
        self.policy = Policy(n_obs, n_actions)
        self.optimizer = optim.Adam(self.policy.parameters(), lr=0.05)

    def select_action(self, state):
        state = to_var(state[None], volatile=True)
        probs = F.softmax(self.policy(state), dim=1)
        return int(probs.data.max(1)[1][0])

    def update(self, states, actions, returns):
        log_probs = F.log_softmax(self.policy(to_var(states)), dim=1)
        chosen = log_probs.gather(1, Variable(torch.from_numpy(actions)).view(-1, 1)).view(-1)
        loss = -(chosen * to_var(returns)).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return float(loss.data)


def discounted(rewards, gamma=0.9):
    out, running = [], 0.0
    for r in reversed(rewards):
        running = r + gamma * running
        out.append(running)
    return np.array(out[::-1], dtype=np.float32)


def run():
    torch.manual_seed(11)
    rng = np.random.RandomState(11)
    agent = Agent(4, 2)
    states = rng.randn(4, 4).astype(np.float32)
    actions = [agent.select_action(s) for s in states[:3]]
    rewards = [1.0 if a == 1 else -0.5 for a in actions]
    loss = agent.update(states[:3], np.array(actions, dtype=np.int64), discounted(rewards))
    return {"actions": actions, "loss": loss,
            "after_update": [agent.select_action(s) for s in states[2:]],
            "fc_grad": agent.policy.fc.weight.grad, "head_grad": agent.policy.head.weight.grad,
            "head_weight": agent.policy.head.weight}
