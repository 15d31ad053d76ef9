"""WGAN on toy points: critic steps with the `one`/`mone` gradients, a generator step, then
samples drawn from volatile noise.

Written the PyTorch 0.3 way: the critic's mean score was a one-element tensor of shape (1,),
so `D_real.backward(mone)` with `mone = torch.FloatTensor([1]) * -1` matched it. Since 0.4
the mean is 0-dim and that `backward` raises `Mismatch in shape` (VF403).
"""
import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable

use_cuda = False
nz = 4

one = torch.FloatTensor([1])
mone = one * -1
if use_cuda:
    one, mone = one.cuda(), mone.cuda()


def critic_step(netG, netD, optimizerD, real):
    for p in netD.parameters():
        p.requires_grad = True
    netD.zero_grad()
    D_real = netD(Variable(real))
    D_real = D_real.mean()
    D_real.backward(mone)
    noise = Variable(torch.randn(real.size(0), nz), volatile=True)  # totally freeze netG
    fake = Variable(netG(noise).data)
    D_fake = netD(fake).mean()
    D_fake.backward(one)
    for p in netD.parameters():
        p.data.clamp_(-0.05, 0.05)
    optimizerD.step()
    return (D_fake - D_real).data[0]


def generator_step(netG, netD, optimizerG, batch_size):
    for p in netD.parameters():
        p.requires_grad = False  # to avoid computation
    netG.zero_grad()
    G = netD(netG(Variable(torch.randn(batch_size, nz)))).mean()
    G.backward(mone)
    optimizerG.step()
    return -G.data[0]


def sample(netG, n):
    noise = Variable(torch.randn(n, nz), volatile=True)
    return netG(noise)


def run():
    torch.manual_seed(3)
    netG = nn.Sequential(nn.Linear(nz, 16), nn.ReLU(True), nn.Linear(16, 2))
    netD = nn.Sequential(nn.Linear(2, 16), nn.ReLU(True), nn.Linear(16, 1))
    optimizerD = optim.RMSprop(netD.parameters(), lr=5e-4)
    optimizerG = optim.RMSprop(netG.parameters(), lr=5e-4)
    real = torch.randn(32, 2) * 0.5 + 1.0
    distances = [critic_step(netG, netD, optimizerD, real) for _ in range(3)]
    g_cost = generator_step(netG, netD, optimizerG, 32)
    return {"distances": distances, "g_cost": g_cost, "samples": sample(netG, 5),
            "G_weight": netG[0].weight.data, "D_weight": netD[0].weight.data}
