"""DQN's temporal-difference step (the shape of the RL tutorials of 2017-2018).

Only the target network's forward pass ran on volatile input; the policy network's forward
pass right next to it trains, and the target value is re-wrapped with `Variable(x.data)`.
"""
import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable


class QNet(nn.Module):
    def __init__(self):
        super(QNet, self).__init__()
        self.fc = nn.Linear(6, 16)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(torch.relu(self.fc(x)))


def compute_td_loss(model, target_model, optimizer, state, action, reward, next_state, done, gamma):
    state = Variable(torch.FloatTensor(state))
    next_state = Variable(torch.FloatTensor(next_state), volatile=True)
    action = Variable(torch.LongTensor(action))
    reward = Variable(torch.FloatTensor(reward))
    done = Variable(torch.FloatTensor(done))

    q_values = model(state)
    next_q_values = target_model(next_state)
    q_value = q_values.gather(1, action.unsqueeze(1)).squeeze(1)
    next_q_value = next_q_values.max(1)[0]
    expected_q_value = reward + gamma * next_q_value * (1 - done)

    loss = (q_value - Variable(expected_q_value.data)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss


def run():
    torch.manual_seed(0)
    model, target_model = QNet(), QNet()
    target_model.load_state_dict(model.state_dict())
    optimizer = optim.SGD(model.parameters(), lr=0.01)
    losses = []
    for _ in range(2):
        state = torch.randn(8, 6).tolist()
        next_state = torch.randn(8, 6).tolist()
        action = torch.randint(0, 3, (8,)).tolist()
        reward = torch.rand(8).tolist()
        done = (torch.rand(8) > 0.8).float().tolist()
        loss = compute_td_loss(model, target_model, optimizer, state, action, reward, next_state, done, 0.99)
        losses.append(float(loss))
    return {"losses": losses, "fc_grad": model.fc.weight.grad, "head_grad": model.head.weight.grad,
            "head_weight": model.head.weight.detach().clone()}
