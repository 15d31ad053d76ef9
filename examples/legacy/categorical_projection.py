"""A categorical DQN step (the shape of the RL notebooks of 2018): the volatile next state is
handed to a helper that runs the target network and keeps only `.data`, and the projected
distribution comes back re-wrapped with `Variable(proj_dist)` as the loss target."""
import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable

num_atoms, Vmin, Vmax = 5, -1.0, 1.0


class DistNet(nn.Module):
    def __init__(self):
        super(DistNet, self).__init__()
        self.fc = nn.Linear(4, 16)
        self.head = nn.Linear(16, 2 * num_atoms)

    def forward(self, x):
        return torch.softmax(self.head(torch.relu(self.fc(x))).view(-1, 2, num_atoms), 2)


def projection_distribution(target_model, next_state, rewards):
    support = torch.linspace(Vmin, Vmax, num_atoms)
    next_dist = target_model(next_state).data * support
    next_action = next_dist.sum(2).max(1)[1]
    next_action = next_action.unsqueeze(1).unsqueeze(1).expand(next_dist.size(0), 1, num_atoms)
    next_dist = next_dist.gather(1, next_action).squeeze(1)
    return (next_dist + rewards.unsqueeze(1)).clamp(Vmin, Vmax)


def compute_td_loss(model, target_model, optimizer, state, action, reward, next_state):
    state = Variable(torch.FloatTensor(state))
    next_state = Variable(torch.FloatTensor(next_state), volatile=True)
    action = Variable(torch.LongTensor(action))
    reward = torch.FloatTensor(reward)

    proj_dist = projection_distribution(target_model, next_state, reward)

    dist = model(state)
    action = action.unsqueeze(1).unsqueeze(1).expand(state.size(0), 1, num_atoms)
    dist = dist.gather(1, action).squeeze(1)
    loss = -(Variable(proj_dist) * dist.clamp(0.01, 0.99).log()).sum(1).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss


def run():
    torch.manual_seed(0)
    model, target_model = DistNet(), DistNet()
    target_model.load_state_dict(model.state_dict())
    optimizer = optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(2):
        state = torch.randn(6, 4).tolist()
        next_state = torch.randn(6, 4).tolist()
        action = torch.randint(0, 2, (6,)).tolist()
        reward = torch.rand(6).tolist()
        losses.append(float(compute_td_loss(model, target_model, optimizer, state, action, reward, next_state)))
    return {"losses": losses, "fc_grad": model.fc.weight.grad, "head_grad": model.head.weight.grad,
            "head_weight": model.head.weight.detach().clone()}
