"""DDPG utilities in the shape of the 2017 reference code: `to_tensor(ndarray, volatile=False,
requires_grad=False)` wraps every array, the actor's action and the target networks' pass ask
for `volatile=True`, and `next_q_values.volatile = False` re-enters the training graph.

Once the fix moves the flag into regions at the call sites, the helper's `volatile` parameter
does nothing; the human migrations removed it and its arguments, and so must the fix (VF105).
"""
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable

FLOAT = torch.FloatTensor


def to_numpy(var):
    return var.data.numpy()


def to_tensor(ndarray, volatile=False, requires_grad=False, dtype=FLOAT):
    return Variable(torch.from_numpy(ndarray), volatile=volatile, requires_grad=requires_grad).type(dtype)


class Agent:
    def __init__(self):
        self.actor, self.actor_target = nn.Linear(3, 2), nn.Linear(3, 2)
        self.critic, self.critic_target = nn.Linear(5, 1), nn.Linear(5, 1)
        self.actor_target.load_state_dict(self.actor.state_dict())
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.critic_optim = torch.optim.SGD(self.critic.parameters(), lr=0.1)

    def select_action(self, s_t):
        return to_numpy(self.actor(to_tensor(np.array([s_t]), volatile=True))).squeeze(0)

    def update_policy(self, state, action, reward, next_state):
        next_q_values = self.critic_target(torch.cat([
            to_tensor(next_state, volatile=True),
            self.actor_target(to_tensor(next_state, volatile=True))], 1))
        next_q_values.volatile = False
        target_q_batch = to_tensor(reward) + 0.9 * next_q_values
        self.critic_optim.zero_grad()
        q_batch = self.critic(torch.cat([to_tensor(state), to_tensor(action)], 1))
        value_loss = ((q_batch - target_q_batch) ** 2).mean()
        value_loss.backward()
        self.critic_optim.step()
        return float(value_loss.data), next_q_values


def run():
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    agent = Agent()
    actions, losses = [], []
    for _ in range(2):
        state = rng.randn(4, 3).astype(np.float32)
        actions.append(agent.select_action(state[0]).tolist())
        loss, target = agent.update_policy(state, rng.randn(4, 2).astype(np.float32),
                                           rng.rand(4, 1).astype(np.float32), rng.randn(4, 3).astype(np.float32))
        losses.append(loss)
    return {"actions": actions, "losses": losses, "target": target,
            "critic_grad": agent.critic.weight.grad, "critic_weight": agent.critic.weight.detach().clone()}
