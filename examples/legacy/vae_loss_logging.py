"""A 0.3-era VAE script that logs scalars the ways VF401 once missed.

The loss comes from the script's own `loss_function` (a sum of a functional loss and a
reduction); the reconstruction error is accumulated from a criterion moved to the device
(`.data` of it, so the total is a tensor read with `total_mse[0]`); the per-term means sit
in a list read with `[v.data[0] for v in terms]`; one pixel is read by indexing every
dimension. In 0.3 each read gave a Python number; since 0.4 each raises IndexError.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()
        self.fc1 = nn.Linear(20, 12)
        self.fc21 = nn.Linear(12, 4)
        self.fc22 = nn.Linear(12, 4)
        self.fc3 = nn.Linear(4, 20)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        mu, logvar = self.fc21(h), self.fc22(h)
        z = mu + 0.1 * logvar.mul(0.5).exp()  # the mean plus a fixed step: runs compare exactly
        return F.sigmoid(self.fc3(z)), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x, size_average=False)
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


criterion = nn.MSELoss().cpu()  # `.cuda()` on a GPU machine


def make_batches(n, size):
    return [torch.rand(size, 20) for _ in range(n)]


def train(model, optimizer, batches):
    model.train()
    train_loss = 0
    for data in batches:
        data = Variable(data)
        optimizer.zero_grad()
        recon, mu, logvar = model(data)
        loss = loss_function(recon, data, mu, logvar)
        loss.backward()
        train_loss += loss.data[0]
        optimizer.step()
    return train_loss / len(batches)


def evaluate(model, batches):
    model.eval()
    test_loss = 0
    total_mse = 0
    per_term = []
    corner = None
    for data in batches:
        data = Variable(data, volatile=True)
        recon, mu, logvar = model(data)
        test_loss += loss_function(recon, data, mu, logvar).data[0]
        total_mse += len(data) * criterion(recon, data).data
        terms = [torch.mean(t) for t in (recon, mu, logvar)]
        per_term.append([v.data[0] for v in terms])
        corner = recon[0, 0].data[0]
    return test_loss, total_mse[0] / len(batches), per_term, corner


def run():
    torch.manual_seed(3)
    model = VAE()
    optimizer = optim.SGD(model.parameters(), lr=0.01)
    train_loss = train(model, optimizer, make_batches(3, 8))
    test_loss, mse, per_term, corner = evaluate(model, make_batches(2, 8))
    return {"train_loss": train_loss, "test_loss": test_loss, "mse": mse, "per_term": per_term,
            "corner": corner, "fc1_grad": model.fc1.weight.grad, "fc3_grad": model.fc3.weight.grad}
