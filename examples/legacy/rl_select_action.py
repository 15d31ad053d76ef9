"""Epsilon-greedy rollout of a small Q-network in a toy corridor (no training here).

Written the PyTorch 0.3 way: the action is chosen from a volatile state.
"""
import torch
import torch.nn as nn
from torch.autograd import Variable


class Corridor(object):
    """Walk left (0) or right (1) along a line; the episode ends at the right end."""

    def __init__(self, length=6):
        self.length = length
        self.pos = 0

    def reset(self):
        self.pos = 0
        return self._observe()

    def _observe(self):
        obs = torch.zeros(self.length)
        obs[self.pos] = 1
        return obs

    def step(self, action):
        self.pos = max(0, min(self.length - 1, self.pos + (1 if action == 1 else -1)))
        done = self.pos == self.length - 1
        return self._observe(), (1.0 if done else -0.1), done


class QNet(nn.Module):
    def __init__(self, n_obs, n_actions):
        super(QNet, self).__init__()
        self.body = nn.Sequential(nn.Linear(n_obs, 16), nn.Tanh(), nn.Linear(16, n_actions))

    def forward(self, x):
        return self.body(x)


def select_action(model, state, epsilon):
    if torch.rand(1)[0] < epsilon:
        return int(torch.LongTensor(1).random_(0, 2)[0])
    state = Variable(state.unsqueeze(0), volatile=True)
    q_values = model(state)
    return int(q_values.data.max(1)[1][0])


def run_episode(env, model, epsilon=0.3, max_steps=12):
    state = env.reset()
    actions, rewards = [], []
    for t in range(max_steps):
        action = select_action(model, state, epsilon)
        state, reward, done = env.step(action)
        actions.append(action)
        rewards.append(reward)
        if done:
            break
    return actions, rewards


def run():
    torch.manual_seed(3)
    model = QNet(6, 2)
    actions, rewards = run_episode(Corridor(6), model)
    return {"actions": actions, "rewards": rewards, "return": sum(rewards)}
