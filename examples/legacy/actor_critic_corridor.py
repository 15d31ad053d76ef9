"""Actor-critic on a toy corridor: a shared body with a policy head and a value head, trained
from sampled episodes, then a volatile evaluation rollout.

Written the PyTorch 0.3 way: actions are drawn with `probs.multinomial()` (one sample by
default), and the policy loss keeps the shared graph for the value loss with
`retain_variables=True`. Since 0.4 the first needs `num_samples` (VF303) and the second is
`retain_graph=` (VF302): both calls raise TypeError today.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable

gamma = 0.9


class Corridor(object):
    """Walk left (0) or right (1); the episode ends at the right end."""

    def __init__(self, length=5):
        self.length = length
        self.pos = 0

    def reset(self):
        self.pos = 0
        return self._observe()

    def _observe(self):
        obs = torch.zeros(1, self.length)
        obs[0, self.pos] = 1
        return obs

    def step(self, action):
        self.pos = max(0, min(self.length - 1, self.pos + (1 if action == 1 else -1)))
        done = self.pos == self.length - 1
        return self._observe(), (1.0 if done else -0.1), done


class ActorCritic(nn.Module):
    def __init__(self, n_obs, n_actions):
        super(ActorCritic, self).__init__()
        self.body = nn.Linear(n_obs, 16)
        self.policy = nn.Linear(16, n_actions)
        self.value = nn.Linear(16, 1)

    def forward(self, x):
        h = F.tanh(self.body(x))
        return F.softmax(self.policy(h), dim=1), self.value(h)


def rollout(env, model, max_steps=8):
    state = env.reset()
    log_probs, values, rewards = [], [], []
    for _ in range(max_steps):
        probs, value = model(Variable(state))
        action = probs.multinomial()
        log_probs.append(torch.log(probs.gather(1, action)))
        values.append(value)
        state, reward, done = env.step(action.data[0][0])
        rewards.append(reward)
        if done:
            break
    return log_probs, values, rewards


def finish_episode(model, optimizer, log_probs, values, rewards):
    returns, R = [], 0.0
    for r in rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = Variable(torch.Tensor(returns)).view(-1, 1)
    values = torch.cat(values)
    advantage = returns - values
    policy_loss = -(torch.cat(log_probs) * Variable(advantage.data)).sum()
    value_loss = advantage.pow(2).mean()
    optimizer.zero_grad()
    policy_loss.backward(retain_variables=True)
    value_loss.backward()
    optimizer.step()
    return policy_loss.data[0], value_loss.data[0]


def evaluate(env, model, max_steps=8):
    state = env.reset()
    actions = []
    for _ in range(max_steps):
        probs, _ = model(Variable(state, volatile=True))
        action = probs.multinomial()
        actions.append(action.data[0][0])
        state, _, done = env.step(actions[-1])
        if done:
            break
    return actions, probs


def run():
    torch.manual_seed(5)
    env = Corridor(5)
    model = ActorCritic(5, 2)
    optimizer = optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(4):
        log_probs, values, rewards = rollout(env, model)
        losses.append(finish_episode(model, optimizer, log_probs, values, rewards))
    body_grad = model.body.weight.grad.clone()
    actions, last_probs = evaluate(env, model)
    return {"losses": losses, "body_grad": body_grad, "value_grad": model.value.weight.grad.clone(),
            "policy_weight": model.policy.weight.data, "eval_actions": [int(a) for a in actions],
            "last_probs": last_probs}
