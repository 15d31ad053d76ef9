"""DQN in the RL-Adventure style: a module-level `Variable` lambda moves tensors to the GPU.

Written the PyTorch 0.3 way: act() passes volatile=True through the rebound `Variable`;
compute_td_loss() wraps its replay batch with the same lambda and trains.
"""
import random

import numpy as np
import torch
import torch.autograd as autograd
import torch.nn as nn
import torch.optim as optim

USE_CUDA = False  # torch.cuda.is_available() on a GPU machine
Variable = lambda *args, **kwargs: autograd.Variable(*args, **kwargs).cuda() if USE_CUDA else autograd.Variable(*args, **kwargs)


class DQN(nn.Module):
    def __init__(self, num_inputs, num_actions):
        super(DQN, self).__init__()
        self.layers = nn.Sequential(nn.Linear(num_inputs, 32), nn.ReLU(), nn.Linear(32, num_actions))
        self.num_actions = num_actions

    def forward(self, x):
        return self.layers(x)

    def act(self, state, epsilon):
        if random.random() > epsilon:
            state = Variable(torch.FloatTensor(state).unsqueeze(0), volatile=True)
            q_value = self(state)
            action = int(q_value.max(1)[1].data[0])
        else:
            action = random.randrange(self.num_actions)
        return action


def compute_td_loss(model, optimizer, replay, gamma=0.99):
    state, action, reward, next_state, done = zip(*replay)
    state = Variable(torch.FloatTensor(np.float32(state)))
    next_state = Variable(torch.FloatTensor(np.float32(next_state)))
    action = Variable(torch.LongTensor(action))
    reward = Variable(torch.FloatTensor(reward))
    done = Variable(torch.FloatTensor(done))

    q_values = model(state)
    next_q_values = model(next_state)
    q_value = q_values.gather(1, action.unsqueeze(1)).squeeze(1)
    next_q_value = next_q_values.max(1)[0]
    expected_q_value = reward + gamma * next_q_value * (1 - done)
    loss = (q_value - Variable(expected_q_value.data)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return float(loss.data)


def run():
    random.seed(2)
    torch.manual_seed(2)
    rng = np.random.RandomState(2)
    model = DQN(4, 2)
    optimizer = optim.Adam(model.parameters(), lr=0.01)
    replay, actions, state = [], [], rng.randn(4)
    for step in range(4):
        action = model.act(state, epsilon=0.0)
        next_state = rng.randn(4)
        replay.append((state, action, float(next_state[0] > 0), next_state, float(step == 3)))
        actions.append(action)
        state = next_state
    loss = compute_td_loss(model, optimizer, replay)
    return {"actions": actions, "loss": loss, "next_action": model.act(state, epsilon=0.0),
            "first_grad": model.layers[0].weight.grad, "last_grad": model.layers[2].weight.grad,
            "last_weight": model.layers[2].weight}
