"""DDPG's critic update (the shape of the 2017 reference implementations): the next state is
volatile so that the target actor and critic run without a graph, but their result then meets
the critic's output in the loss with no re-wrap. 0.3 raised at `value_loss.backward()` (fact
5); what the author meant is the target networks' pass without a graph."""
import torch
import torch.nn as nn
from torch.autograd import Variable

MSELoss = nn.MSELoss()


class Agent:
    def __init__(self):
        self.actor, self.actor_target = nn.Linear(3, 2), nn.Linear(3, 2)
        self.critic, self.critic_target = nn.Linear(5, 1), nn.Linear(5, 1)
        self.actor_target.load_state_dict(self.actor.state_dict())
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.critic_optim = torch.optim.SGD(self.critic.parameters(), lr=0.1)
        self.gamma = 0.9

    def update_parameters(self, state, action, reward, next_state):
        state_batch = Variable(state)
        next_state_batch = Variable(next_state, volatile=True)
        action_batch = Variable(action)
        reward_batch = Variable(reward)

        next_action_batch = self.actor_target(next_state_batch)
        next_state_action_values = self.critic_target(torch.cat([next_state_batch, next_action_batch], 1))
        expected = reward_batch.unsqueeze(1) + self.gamma * next_state_action_values

        self.critic_optim.zero_grad()
        state_action_batch = self.critic(torch.cat([state_batch, action_batch], 1))
        value_loss = MSELoss(state_action_batch, expected)
        value_loss.backward()
        self.critic_optim.step()
        return value_loss, next_state_action_values


def run():
    torch.manual_seed(0)
    agent = Agent()
    losses = []
    for _ in range(2):
        loss, target_values = agent.update_parameters(torch.randn(4, 3), torch.randn(4, 2), torch.rand(4),
                                                      torch.randn(4, 3))
        losses.append(float(loss))
    return {"losses": losses, "target_values": target_values, "critic_grad": agent.critic.weight.grad,
            "critic_weight": agent.critic.weight.detach().clone()}
